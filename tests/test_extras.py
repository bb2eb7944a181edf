"""The pip command every missing-extra message names: one that works for a Lamar not on PyPI."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from lamar.extras import install_command, needs_extra, origin, upgrade_command
from lamar.store.base import UnknownKind

ROOT = Path(__file__).resolve().parent.parent


def test_from_a_clone_it_names_that_clone() -> None:
    command = install_command("mcp", {"url": ROOT.as_uri(), "dir_info": {"editable": True}})
    assert command.endswith(f' install -e "{ROOT}[mcp]"'), command


@pytest.mark.parametrize("dir_info", [{}, {"editable": False}])
def test_from_a_clone_installed_without_e_it_names_that_clone_without_e(dir_info: dict[str, object]) -> None:
    # `pip install /path/to/lamar`, as a fresh venv beside a clone gets it: pip records the folder.
    command = install_command("mcp", {"url": ROOT.as_uri(), "dir_info": dir_info})
    assert command.endswith(f' install "{ROOT}[mcp]"'), command


def test_from_git_the_same_commit_and_from_a_wheel_that_file(tmp_path: Path) -> None:
    git = {"url": "https://example.org/lamar.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    assert install_command("ui", git).endswith(' install "lamar[ui] @ git+https://example.org/lamar.git@abc123"')
    wheel = tmp_path / "lamar-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    archive = {"url": wheel.as_uri(), "archive_info": {}}
    assert install_command("ui", archive).endswith(f' install "lamar[ui] @ {wheel.as_uri()}"')


@pytest.mark.parametrize("where", [
    {},  # run from a source tree: no install record
    {"url": "file:///gone/lamar-0.1.0-py3-none-any.whl", "archive_info": {}},  # the wheel was deleted
    {"url": "file:///gone/lamar", "dir_info": {"editable": True}},  # the clone moved
    {"url": "file:///gone/lamar", "dir_info": {}},  # the same, installed without -e
])
def test_otherwise_both_ways_the_readme_gives(where: dict[str, object]) -> None:
    command = install_command("postgres", where)
    assert ' install -e ".[postgres]" in a clone of Lamar, or ' in command
    assert command.endswith(' install "lamar[postgres] @ git+<repository URL>"')


def test_this_install_names_a_folder_that_declares_every_extra() -> None:
    where = origin()
    if not where.get("dir_info", {}).get("editable"):
        pytest.skip(f"Lamar is not installed editable here ({where or 'no install record'})")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in extras:
        folder = re.search(r'install -e "(.+)\[' + re.escape(extra) + r'\]"$', install_command(extra))
        assert folder is not None and extra in tomllib.loads(
            (Path(folder.group(1)) / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_no_message_names_a_bare_pypi_install() -> None:
    # `pip install "lamar[x]"` finds no such package: every message goes through needs_extra.
    bare = re.compile(r"""pip install ['"]?lamar\[[\w-]+\]['"]?(?! @)""")
    found = [f"{path.relative_to(ROOT)}:{n}" for folder in ("lamar", "integrations") for path in
             sorted((ROOT / folder).rglob("*.py")) for n, line in enumerate(path.read_text().splitlines(), 1)
             if bare.search(line)]
    assert found == []
    assert needs_extra("lamar ui needs its web stack", "ui").startswith("lamar ui needs its web stack, the ui extra: ")


def test_no_message_or_page_upgrades_by_a_bare_pypi_name() -> None:
    # `pip install -U lamar` answers "no matching distribution": the refusal of a newer Lamar's store said it.
    bare = re.compile(r"""pip install (-U|--upgrade) ['"]?lamar\b(?!\[| @)""")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in [*sorted((ROOT / "lamar").rglob("*.py")),
                                                           *sorted((ROOT / "docs").glob("*.md"))]
             for n, line in enumerate(path.read_text().splitlines(), 1) if bare.search(line)]
    assert found == []


def test_the_upgrade_names_the_clone_the_git_url_or_both_ways() -> None:
    clone = upgrade_command({"url": ROOT.as_uri(), "dir_info": {"editable": True}})
    assert clone.startswith(f"git -C {ROOT} pull && ") and clone.endswith(f' install -e "{ROOT}"'), clone
    git = {"url": "https://example.org/lamar.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    assert upgrade_command(git).endswith(' install -U "lamar @ git+https://example.org/lamar.git"')  # not the pin
    neither = upgrade_command({})
    assert "git pull" in neither and neither.endswith(' install -U "lamar @ git+<repository URL>"'), neither
    assert upgrade_command() in str(UnknownKind("later"))
