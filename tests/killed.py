"""Commands stopped for good at a chosen moment, and the store they leave behind."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

from lamar.store import open_store


def kill_when_stalled(proc: subprocess.Popen[str], feed: str = "") -> None:
    """Write FEED to PROC's stdin (if it has one), wait for it to print a line ending "stalled", and
    SIGKILL it there. The line need not start a line: prompts the command printed end no line."""
    try:
        if proc.stdin is not None:
            proc.stdin.write(feed)
            proc.stdin.close()
        assert proc.stdout is not None
        while (line := proc.stdout.readline()) and not line.endswith("stalled\n"):
            pass
        assert line.endswith("stalled\n"), proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(60)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def event_count(path: Path) -> int:
    """How many events the store at PATH holds."""
    store = open_store(str(path))
    try:
        return len(store.read(0))
    finally:
        store.close()
