"""A Ctrl+C typed at a real terminal (a pty whose line discipline sends SIGINT to the foreground
process group) ends the research commands in one line, status 130, with no process left behind."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads a Linux pty's end of file as EIO")


def _terminal() -> None:
    """The child's start: the pty becomes its controlling terminal and its process group the
    foreground one, as a shell's job; SIGINT as a fresh shell leaves it (the test runner may not)."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _read(master: int, until: bytes | None, deadline: float) -> bytes:
    """What the terminal shows, up to `until` (None: up to the end, when every holder of the pty closed it)."""
    seen = b""
    while time.monotonic() < deadline and (until is None or until not in seen):
        ready, _, _ = select.select([master], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the command and its workers are gone
            break
        if not chunk:
            break
        seen += chunk
    return seen


def _interrupt(argv: list[str], started: bytes, cwd: Path) -> tuple[int, str, int]:
    """Start `argv` on a fresh pty, type Ctrl+C once `started` shows, and return its status, what the
    terminal showed, and its process group id (to look for workers left behind)."""
    master, slave = pty.openpty()
    try:
        child = subprocess.Popen([sys.executable, "-m", *argv], stdin=slave, stdout=slave, stderr=slave, cwd=cwd,
                                 start_new_session=True, preexec_fn=_terminal)  # noqa: PLW1509 - a fresh child
    finally:
        os.close(slave)
    try:
        shown = _read(master, started, time.monotonic() + 120)
        assert started in shown, shown.decode(errors="replace")
        time.sleep(1.0)  # well inside the run, its workers busy
        os.write(master, b"\x03")  # Ctrl+C, as typed
        shown += _read(master, None, time.monotonic() + 60)
        status = child.wait(timeout=60)
    finally:
        os.close(master)
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    return status, shown.decode(errors="replace"), child.pid


def _no_process_left(group: int) -> bool:
    for _ in range(50):  # the parent's exit is seen before the last worker's
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.parametrize(("argv", "started", "prog"), [
    (["lamar.gym", "--seeds", "20", "--episodes", "8000", "--workers", "2", "--json", "rows.json"], b"runs",
     "python -m lamar.gym"),
    (["lamar.audit", "--runs", "50", "--scenario", "flip", "--jobs", "2", "--json", "rows.jsonl"], b'"scenario"',
     "python -m lamar.audit"),
    (["lamar.bench", "--sizes", "10,100000", "--eligible", "6", "--backends", "sqlite", "--reps", "300",
      "--json", "rows.json"], b"sqlite", "python -m lamar.bench"),
    # The fresh interpreters it times shared the terminal's process group: each printed a
    # KeyboardInterrupt traceback from wherever its import stood, above the one line.
    (["lamar.bench", "--cold", "--skip", "open,hook,warm,cli,quickstart", "--runs", "2000"], b"runs",
     "python -m lamar.bench"),
], ids=lambda value: value[0] if isinstance(value, list) else None)
def test_ctrl_c_at_a_terminal_ends_the_run_in_one_line_with_status_130(argv: list[str], started: bytes, prog: str,
                                                                     tmp_path: Path) -> None:
    status, shown, group = _interrupt(argv, started, tmp_path)
    assert status == 130, shown
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown, shown
    assert shown.rstrip().endswith(f"{prog}: error: interrupted"), shown
    assert _no_process_left(group)
    rows = tmp_path / (argv[argv.index("--json") + 1] if "--json" in argv else "none")
    if argv[0] == "lamar.audit":  # the rows of the runs that finished, each a whole line
        lines = rows.read_text().splitlines()
        assert lines and all(json.loads(line)["scenario"] == "flip" for line in lines)
    else:
        assert not rows.exists()
