"""Every code block of the README and the docs runs alone and prints what the page says it prints;
the documentation site builds with `mkdocs build --strict`; the README stays a landing page."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.background import Background, starts
from tests.conftest import require_service
from tests.docblocks import MIXED, ONLY, ROOT, Block, installed_by, matches, pages, parse, python_blocks, run

BLOCKS = python_blocks()
# Any attempt of the docs build to reach the network goes to a closed port and fails.
OFFLINE = dict(os.environ, HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9", NO_PROXY="")


@pytest.mark.parametrize("block", [b for b in BLOCKS if not b.skip], ids=lambda b: b.where)
def test_block_runs_alone_and_prints_what_the_page_shows(block: Block, tmp_path: Path) -> None:
    if "postgresql://" in block.code:  # the pages' examples use the local test server
        require_service("PostgreSQL", "127.0.0.1", 5432)
    done = run(block, tmp_path)
    assert done.returncode == 0, f"{block.where} failed:\n{done.stderr[-3000:]}"
    if block.output is not None:
        assert matches(block.output.code, done.stdout), (
            f"{block.where} printed:\n{done.stdout}\nthe page shows:\n{block.output.code}")


@pytest.mark.parametrize("page", ["docs/install.md", "docs/cli.md", "docs/sleep.md", "docs/langgraph.md",
                                  "docs/stores.md"])
def test_a_page_typed_in_order_in_one_folder_prints_what_it_shows(page: str, tmp_path: Path) -> None:
    """A reader runs a page's blocks one after another in one folder, where a file one block wrote is
    still there for the next: two blocks of docs/cli.md sharing experience.db printed 40 episodes, not 20,
    and docs/langgraph.md's copy of app-store.db "2 event copied", the lesson of the block above it too."""
    for block in (b for b in parse(ROOT / page) if b.lang in {"python", "py", "python3"} and not b.skip):
        done = run(block, tmp_path)
        assert done.returncode == 0, f"{block.where} failed after the blocks above it:\n{done.stderr[-3000:]}"
        if block.output is not None:
            assert matches(block.output.code, done.stdout), (
                f"{block.where}, run after the blocks above it, printed:\n{done.stdout}\n"
                f"the page shows:\n{block.output.code}")


def test_no_block_writes_into_the_readers_own_stores() -> None:
    """The tests give a block its folder as HOME, so docs/stores.md's `ExperienceStore("~/.lamar/experience.db")`
    passed here and, for a reader, added an unscoped lesson to the store the Claude Code pages set up."""
    assert [b.where for b in BLOCKS if not b.skip and "~/.lamar" in b.code] == []


def test_a_framework_page_runs_with_only_its_extra(tmp_path: Path) -> None:
    """The main venv has every extra, so a block needing a package its page's extra lacks passed here and
    failed for the reader (docs/langchain.md's vector store, with numpy absent: `name 'np' is not defined`)."""
    assert {"langchain-core", "langgraph"} <= installed_by("langchain") and "numpy" not in installed_by("langchain")
    page = ROOT / "docs" / "langgraph.md"
    probe = Block(page, 1, "python", "import langgraph, lamar_langgraph\nimport numpy\n")
    done = run(probe, tmp_path)
    assert "No module named 'numpy' (docs/langgraph.md tells its reader to install only lamar[langgraph])" in (
        done.stderr), done.stderr[-2000:]
    assert run(Block(ROOT / "docs" / "sleep.md", 1, "python", "import numpy\n"), tmp_path).returncode == 0  # MIXED


def test_every_page_with_a_block_that_runs_says_what_its_reader_installs() -> None:
    runs = {b.path.relative_to(ROOT).as_posix() for b in BLOCKS if not b.skip}
    assert runs - set(ONLY) - MIXED == set(), "add the page to ONLY in tests/docblocks.py"


@pytest.mark.parametrize("page", sorted(ONLY))
def test_each_package_a_page_adds_to_its_extra_is_one_its_text_installs(page: str) -> None:
    text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
    for package in ONLY[page][1]:
        assert f"python -m pip install {package}" in text, (page, package)


def test_every_page_parses_and_skips_are_few() -> None:
    # parse() raises on an unclosed fence or a misplaced marker; a skip needs its reason.
    blocks = [b for path in pages() for b in parse(path)]
    python = [b for b in blocks if b.lang in {"python", "py", "python3"}]
    assert len(python) >= 10
    assert all(b.skip for b in python if b.skip is not None)
    assert sum(1 for b in python if b.skip) <= len(python) // 3, "most blocks must run"


def test_the_matcher_honours_the_ellipsis() -> None:
    assert matches("lift +0.82 [+0.48, +1.11]\n", "lift +0.82 [+0.48, +1.11]\n")
    assert matches("took … s\n", "took 0.31 s\n")
    assert not matches("took … s\n", "took 0.31 ms\n")
    assert not matches("a\nb\n", "a\n")
    assert not matches("helps\n", "harms\n")


def test_the_readme_does_not_send_a_claude_code_user_to_the_agent_sdk_extra() -> None:
    # "Install the one for the framework your agent already uses" beside a list naming claude-code: a
    # Claude Code user installed the Agent SDK and its bundled binary, which the hooks never use.
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "Claude Code's hooks need none (`claude-code` is the Agent SDK" in readme


def test_the_pages_that_say_claude_code_needs_no_extra_name_the_plugins_mcp_extra() -> None:
    # "the hooks and plugin need none" sent a plugin user to `claude mcp list` showing its server
    # "Failed to connect": the plugin also starts `lamar mcp`, which needs the mcp extra.
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    install = " ".join((ROOT / "docs" / "install.md").read_text(encoding="utf-8").split())
    assert "the plugin's MCP server needs `mcp`" in readme
    assert "the plugin's MCP server needs the `mcp` extra" in install


def test_the_readme_is_a_landing_page_with_the_two_setup_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    assert "lamar.gym" in readme and "pytest" in readme
    assert 'python -m pip install -e . && python -m lamar.gym' in readme
    assert 'python -m pip install -e ".[test]" && python -m pytest' in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install --quiet -e ".[test]"' in ci and "python -m pytest -q" in ci
    # "use it with": Claude Code first.
    links = [name for name in ("Claude Code", "MCP", "LangChain", "LangGraph", "LlamaIndex")
             if f"[{name}]" in readme]
    assert links == ["Claude Code", "MCP", "LangChain", "LangGraph", "LlamaIndex"]
    assert readme.index("[Claude Code]") < readme.index("[MCP]") < readme.index("[LangChain]")


def test_the_quickstart_is_the_readme_example_and_runs_twice_alike(tmp_path: Path) -> None:
    example = (ROOT / "examples" / "quickstart.py").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert example in readme
    runs = [subprocess.run([sys.executable, str(ROOT / "examples" / "quickstart.py")], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, check=False) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stdout.split()[0] == "helps"
    assert list(tmp_path.iterdir()) == []  # it wrote nothing


SITE = Background([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                   "-d", "{folder}/site"], cwd=ROOT, env=OFFLINE)


@starts(SITE)
def test_the_site_builds_strictly_without_network() -> None:
    done = SITE.result(timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert SITE.folder is not None
    site = SITE.folder / "site"
    assert (site / "index.html").exists()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "def recall" in api or "recall" in api and "episode_id" in api
    # site_url is set, so the sitemap lists every page (without it, it lists none)
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert sitemap.count("<loc>") >= 20 and "<loc>http://127.0.0.1:8000/install/</loc>" in sitemap


def test_readme_links_point_at_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local and all((ROOT / t).exists() for t in local), [t for t in local if not (ROOT / t).exists()]


ID = re.compile(r"\b(?:exp|ep)_[0-9a-f]{4,}")


def test_shell_sessions_type_no_literal_ids() -> None:
    """A reader who types a session gets other random ids, so a command never types one: it takes
    it from a variable set by an earlier command (`build=$(lamar add -q ...)`) or shows a placeholder."""
    for path in pages():
        for block in parse(path):
            if block.lang in {"console", "bash", "sh", "shell"}:
                for line in block.code.splitlines():
                    command = line[2:] if line.startswith("$ ") else line if block.lang != "console" else ""
                    assert not ID.search(command), f"{block.where}: `{line}` types a literal id"


def test_the_pages_that_size_the_test_suite_give_one_count() -> None:
    """The README and Install each say how many tests `python -m pytest` runs; the two drifted apart."""
    counts = {}
    for page in ("README.md", "docs/install.md"):
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        found = re.findall(r"about (\d[\d ]*\d) tests", text)
        assert len(found) == 1, (page, found)
        counts[page] = found[0]
    assert len(set(counts.values())) == 1, counts


def test_a_shell_block_does_not_write_the_file_a_later_one_adds_lessons_from() -> None:
    """docs/cli.md's script wrote the recalled prompt to lessons.md with `2>lessons.md`, and the next section's
    `lamar add --from lessons.md`, typed in the same folder, was refused: line 3 was the prompt's quoted lesson."""
    for path in pages():
        written: set[str] = set()
        for block in parse(path):
            if block.lang in {"console", "bash", "sh", "shell"}:
                read = set(re.findall(r"--from\s+([\w./-]+)", block.code))
                assert not read & written, f"{block.where} adds lessons from {read & written}, written above"
                written |= set(re.findall(r"\d?>\s*([\w./-]+\.\w+)", block.code))

