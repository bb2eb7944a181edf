"""A file's `flock` held by another process, and a call that must not hang while it is: the tests
of every lock that waits for another writer (the JSON store's, a trace file's, the hooks')."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Another process locks the file as a writer does, says so, and keeps the lock `argv[2]` seconds.
_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


@contextmanager
def held(path: Path | str, seconds: float = 600.0) -> Iterator[subprocess.Popen[str]]:
    """`path` (created if missing) locked by another process for `seconds`, or until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def bounded(call: Callable[[], Any], seconds: float = 60.0) -> Any:
    """`call()`'s result or exception, from a thread: a call that hangs fails the test, not the run
    (`seconds` is a bound on a hang, not a measured time)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the call still waits for the lock"
    if "error" in out:
        raise out["error"]
    return out["result"]
