"""`lamar.program.program_name`: the one way the command line and the Claude Code hooks name the `lamar` to type."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

import lamar.cli.claude_code
import lamar_claude_code.notice
from lamar.program import program_name


def _script(folder: Path) -> Path:
    folder.mkdir(parents=True)
    script = folder / "lamar"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    return script


def test_the_lamar_that_ran_is_named_by_the_hooks_notice_as_by_the_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `~/tools/bin/lamar claude-code hook`, from an interpreter whose folder holds no lamar script, with
    # neither folder on PATH: the notice's advice must name the script that ran, not one beside python.
    ran = _script(tmp_path / "tools bin")
    monkeypatch.setattr(sys, "argv", [str(ran), "claude-code", "hook"])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python" / "python3"))
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    record = {"event": "SessionStart", "error": "the store is corrupt", "time": 0.0, "store_error": True}
    said = lamar_claude_code.notice.off_message(record, "lessons.db", tmp_path / "hooks.log")
    assert f"run `{shlex.quote(str(ran))} claude-code install --store PATH`" in said, said
    assert lamar.cli.claude_code.program_name is lamar_claude_code.notice.program_name is program_name


def test_a_lamar_found_on_path_is_typed_bare_and_none_is_typed_through_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    beside = _script(tmp_path / "venv" / "bin")
    monkeypatch.setattr(sys, "argv", ["agent.py"])  # the Agent SDK's hooks run in the user's own program
    monkeypatch.setattr(sys, "executable", str(beside.with_name("python3")))
    monkeypatch.setenv("PATH", str(beside.parent))
    assert program_name() == "lamar"
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert program_name() == shlex.quote(str(beside))
    beside.unlink()
    assert program_name() == f"{shlex.quote(sys.executable)} -m lamar.cli"



@pytest.mark.parametrize("launcher", ["#!{python}\n", "#!/bin/sh\n'''exec' \"{python}\" \"$0\" \"$@\"\n' '''\n"])
def test_the_lamar_of_a_moved_virtual_environment_is_typed_through_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launcher: str) -> None:
    # A virtual environment moved: its bin/lamar still starts the Python of the old path (pip writes the
    # second launcher when that path holds a space), so typing it says "not found"; its python -m still runs.
    python = sys.executable
    beside = _script(tmp_path / "moved" / "bin")
    beside.write_text(launcher.format(python=tmp_path / "venv" / "bin" / "python3") + "import lamar.cli\n")
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "lamar" / "cli" / "__main__.py")])  # python -m lamar.cli
    monkeypatch.setattr(sys, "executable", str(beside.with_name("python3")))
    monkeypatch.setenv("PATH", str(beside.parent))
    assert program_name() == f"{shlex.quote(sys.executable)} -m lamar.cli"
    beside.write_text(launcher.format(python=python))  # a Python that is there
    assert program_name() == "lamar"
