"""`import_rules` on the odd files real machines hold: FIFOs, devices, binary files, broken `@path` lines."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lamar import InvalidArgument, Lamar
from lamar.cli import main
from lamar.rules import import_rules


def _shop(tmp_path: Path) -> Path:
    shop = tmp_path / "shop"
    shop.mkdir()
    subprocess.run(["git", "init", "-q", str(shop)], check=True)
    (shop / ".gitignore").write_text("node_modules/\n")
    (shop / "AGENTS.md").write_text("- Never push to main\n")
    subprocess.run(["git", "-C", str(shop), "add", ".gitignore", "AGENTS.md"], check=True)
    subprocess.run(["git", "-C", str(shop), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "rules"],
                   check=True)
    return shop


def _lamar(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=20, check=False)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_named_file_that_is_a_fifo_or_a_device_is_refused_without_waiting(tmp_path: Path, kind: str) -> None:
    shop = _shop(tmp_path)
    named = shop / "rules.md"
    if kind == "fifo":
        os.mkfifo(named)  # nobody writes to it: opening it to read would wait for ever
    else:
        named = Path("/dev/zero")  # never ends: reading it all would fill the memory
    done = _lamar(shop, "import-rules", "--file", str(named), "--file", "AGENTS.md")
    assert done.returncode == 0, done.stderr
    assert "not a regular file" in done.stdout and "read AGENTS.md" in done.stdout
    alone = _lamar(shop, "import-rules", "--file", str(named))
    assert alone.returncode == 1 and "not a regular file" in alone.stderr and "Traceback" not in alone.stderr


def test_a_named_file_that_is_a_folder_is_refused_by_its_name(tmp_path: Path) -> None:
    """`--file SOMEFOLDER`: the message names the folder and says to name the rules file, not an
    "Is a directory" about a file descriptor number."""
    shop = _shop(tmp_path)
    (shop / "docs").mkdir()
    done = _lamar(shop, "import-rules", "--file", "docs")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "docs is not a regular file" in done.stderr and "name the rules file itself" in done.stderr
    both = _lamar(shop, "import-rules", "--file", "docs", "--file", "AGENTS.md")
    assert both.returncode == 0 and "read AGENTS.md" in both.stdout, both.stderr


@pytest.mark.parametrize("project", ["", "  "])
def test_a_blank_project_is_refused_before_anything_is_stored(tmp_path: Path, project: str) -> None:
    """A blank --project (an unset shell variable) scoped every rule to project=' ' and wrote
    "When working on, ..." into the store; it is refused, and nothing is stored."""
    shop = _shop(tmp_path)
    store = tmp_path / "lessons.db"
    done = _lamar(shop, "--store", str(store), "import-rules", "--project", project, "--apply", "--create")
    assert done.returncode == 1 and "--project is empty" in done.stderr, (done.stdout, done.stderr)
    assert not store.exists()
    with pytest.raises(InvalidArgument, match="project is empty"):
        import_rules(Lamar(":memory:"), shop, project=project)
    out = _lamar(shop, "--store", str(store), "export-rules", "--project", project)
    assert out.returncode == 1 and "--project is empty" in out.stderr, (out.stdout, out.stderr)


@pytest.mark.parametrize("data", [b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00- Never push\n",
                                  "- Always run the tests before every commit\n".encode("utf-16-le")],
                         ids=["binary", "UTF-16 without BOM"])
def test_a_file_with_nul_bytes_is_not_text_and_is_named(tmp_path: Path, data: bytes) -> None:
    shop = _shop(tmp_path)
    (shop / "CLAUDE.md").write_bytes(data)  # valid UTF-8 all the same: a NUL is a code point
    plan = import_rules(Lamar(":memory:"), shop)
    assert [e.action for e in plan.lessons] == ["Never push to main"]
    assert [(r.file, r.line, why) for r, why in plan.skipped] == [
        ("CLAUDE.md", 0, f"not UTF-8 text (a NUL byte at byte {data.index(0)}): re-save it as UTF-8 and import again")]


def test_an_import_of_a_name_no_file_can_have_is_not_followed(tmp_path: Path) -> None:
    shop = _shop(tmp_path)
    (shop / "CLAUDE.md").write_text(f"- Use tabs\n\n@{'x' * 5000}.md\n\n- Keep functions short\n")
    plan = import_rules(Lamar(":memory:"), shop)
    assert plan.files == ["CLAUDE.md", "AGENTS.md"]
    assert [e.action for e in plan.lessons] == ["Use tabs", "Keep functions short", "Never push to main"]


def test_rules_and_imports_in_a_multi_line_html_comment_are_not_read(tmp_path: Path) -> None:
    shop = _shop(tmp_path)
    (shop / "notes.md").write_text("- Never give the staging password away\n")
    (shop / "CLAUDE.md").write_text("# Rules\n\n<!-- retired, kept for the record:\n- Never deploy on Friday\n"
                                    "@notes.md\n-->\n\n- Use tabs\n  <!--\n  - Always use yarn -->\n"
                                    "- Keep functions short\n")
    plan = import_rules(Lamar(":memory:"), shop)
    assert plan.files == ["CLAUDE.md", "AGENTS.md"]
    assert [e.action for e in plan.lessons] == ["Use tabs", "Keep functions short", "Never push to main"]


def test_a_longer_fence_holding_a_shorter_one_is_one_code_block(tmp_path: Path) -> None:
    shop = _shop(tmp_path)
    (shop / "CLAUDE.md").write_text("# Rules\n\nA rules file looks like:\n\n````markdown\n```bash\nmake test\n```\n"
                                    "- Never do what this example says\n````\n\n- Use tabs\n")
    plan = import_rules(Lamar(":memory:"), shop)
    assert [e.action for e in plan.lessons] == ["Use tabs", "Never push to main"]


@pytest.fixture
def open_tmp(tmp_path: Path) -> Iterator[Path]:
    """A folder the user `nobody` can enter when the tests run as root (pytest's own is root's alone)."""
    if os.geteuid() != 0:
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp())
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def _unprivileged(work: Callable[[], object]) -> object:
    """`work()`'s JSON result, in a child process as the user nobody when the tests run as root: root
    reads any file whatever its mode, and a user's rules file unreadable to them is what is tested."""
    if os.geteuid() != 0:
        return work()
    import pwd

    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("the tests run as root, who reads any file, and there is no user nobody to run as")
    b"x".decode("utf-8-sig")  # its codec is loaded on first use, from root's Python that nobody may not read
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe and never returns
        status = 1
        try:
            os.setgroups([])
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            os.write(write, json.dumps(work()).encode())
            status = 0
        except BaseException as exc:  # noqa: BLE001 - the parent fails the test with it
            os.write(write, json.dumps(repr(exc)).encode())
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = json.loads(pipe.read())
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, answer
    return answer


@pytest.mark.skipif(not hasattr(os, "fork"), reason="file modes and users are POSIX")
def test_an_unreadable_rules_file_is_passed_over_and_named_unless_named_with_file(open_tmp: Path) -> None:
    shop = _shop(open_tmp)
    (shop / "web").mkdir()
    (shop / "web" / "CLAUDE.md").write_text("- Never use inline styles\n")
    (shop / "CLAUDE.local.md").write_text("- Always run the tests before a commit\n")
    if os.geteuid() == 0:  # the repository is the user's own, as git requires of a work tree
        for here, _, files in os.walk(shop):
            for name in [here, *(os.path.join(here, f) for f in files)]:
                shutil.chown(name, "nobody")
    (shop / "CLAUDE.local.md").chmod(0)

    def found() -> object:
        plan = import_rules(Lamar(":memory:"), shop)
        return [e.action for e in plan.lessons], [[r.file, r.line, why] for r, why in plan.skipped]

    def named() -> object:
        try:
            import_rules(Lamar(":memory:"), shop, files=[shop / "CLAUDE.local.md", shop / "AGENTS.md"])
        except InvalidArgument as exc:
            error = str(exc)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["import-rules", str(shop), "--file", str(shop / "CLAUDE.local.md"),
                         "--store", str(shop / "store.db")])
        return error, code, err.getvalue()

    why = "not readable by this user (permission denied): fix its permissions (`chmod u+r`) and import again"
    assert _unprivileged(found) == [["Never push to main", "Never use inline styles"], [["CLAUDE.local.md", 0, why]]]
    error, code, stderr = _unprivileged(named)  # type: ignore[misc]
    assert error == f"cannot read the rules: {shop / 'CLAUDE.local.md'} is {why}"
    assert code == 1 and why in stderr and "Errno" not in stderr and "Traceback" not in stderr, stderr
