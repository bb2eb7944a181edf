"""The hook log trimmed by one hook while another appends to it: real processes, no line lost."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import ROOT

# Trims the log, and waits inside the trim (its copy read, not yet renamed over the log) until told to go on.
_TRIMMER = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from lamar_claude_code import state\n"
    "folder = Path(sys.argv[2])\n"
    "write = state.write_atomically\n"
    "def paused(path, data, **kwargs):\n"
    "    (folder / 'trimming').touch()\n"
    "    while not (folder / 'go').exists():\n"
    "        time.sleep(0.01)\n"
    "    write(path, data, **kwargs)\n"
    "state.write_atomically = paused\n"
    "state._LOG_LIMIT = 1024\n"
    "state.log_line(Path(sys.argv[1]), 'the trimming hook')\n"
)
# Appends one line; says so when it is about to wait for the log's lock.
_APPENDER = (
    "import fcntl, sys\n"
    "from pathlib import Path\n"
    "from lamar_claude_code import state\n"
    "flock = fcntl.flock\n"
    "def announced(fd, how):\n"
    "    (Path(sys.argv[2]) / 'waiting').touch()\n"
    "    flock(fd, how)\n"
    "fcntl.flock = announced\n"
    "state._LOG_LIMIT = 1024\n"
    "state.log_line(Path(sys.argv[1]), 'the appending hook')\n"
)
# The same, from quick.py's own writer: the line it logs when the hook's modules cannot load.
_QUICK_APPENDER = _APPENDER.replace(
    "from lamar_claude_code import state", "from lamar_claude_code import quick, state").replace(
    "state.log_line(Path(sys.argv[1]), 'the appending hook')",
    "quick._note(sys.argv[1].removesuffix('.claude-code.log'), 'the appending hook')")


def _until(done: object, what: str) -> None:
    deadline = time.monotonic() + 60  # a bound on a hang, not a measured time
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.01)


@pytest.mark.parametrize("appender_code", [_APPENDER, _QUICK_APPENDER], ids=["hook", "quick"])
def test_a_line_appended_while_another_hook_trims_the_log_is_kept(tmp_path: Path, appender_code: str) -> None:
    log = tmp_path / "experience.db.claude-code.log"
    log.write_text("".join(f"2026-12-01T00:00:00 an old line {i}\n" for i in range(100)))
    env = {"PYTHONPATH": f"{ROOT}:{ROOT / 'integrations'}", "PATH": "/usr/bin:/bin"}
    trimmer = subprocess.Popen([sys.executable, "-c", _TRIMMER, str(log), str(tmp_path)], env=env)
    _until(lambda: (tmp_path / "trimming").exists(), "began to trim")
    appender = subprocess.Popen([sys.executable, "-c", appender_code, str(log), str(tmp_path)], env=env)
    # Either it appended (into the file the trim is about to replace), or it waits for the trim to end.
    _until(lambda: appender.poll() is not None or (tmp_path / "waiting").exists(), "appended or waited")
    (tmp_path / "go").touch()
    assert (trimmer.wait(timeout=60), appender.wait(timeout=60)) == (0, 0)

    lines = log.read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in lines[-2:]] == ["the trimming hook", "the appending hook"]
    assert len(lines) < 100  # the trim happened


def test_a_hook_that_cannot_start_keeps_its_log_bounded_and_its_newest_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # quick.py logs each event of an install whose modules cannot load: it appended without bound.
    from lamar_claude_code import quick, state

    assert quick._LOG_LIMIT == state._LOG_LIMIT  # one rule, written twice: quick.py cannot import state
    monkeypatch.setattr(quick, "_LOG_LIMIT", 1024)
    store = tmp_path / "experience.db"
    log = tmp_path / "experience.db.claude-code.log"
    for i in range(100):
        quick._note(str(store), f"the hook could not start: event {i}")
        assert log.stat().st_size <= 1024 + 100  # one line past the limit, before the trim it sets off
    lines = log.read_text().splitlines()
    assert 0 < len(lines) < 100 and lines[-1].endswith("the hook could not start: event 99")
    assert all(line.split(" ", 1)[1].startswith("the hook could not start: event ") for line in lines)
    assert not list(tmp_path.glob(".*.tmp"))  # the trim's copy was renamed over the log
