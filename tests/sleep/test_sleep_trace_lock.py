"""A trace file locked by another process: a write waits at most the writer's `timeout`, then fails
saying so with nothing written; a lock let go in time lets it through."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from lamar import InvalidArgument, StoreError
from lamar.sleep.traces import Trace, TraceWriter, load_traces
from tests.locks import bounded, held


def test_a_write_gives_up_on_a_lock_held_past_the_timeout_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    TraceWriter(path).write(Trace("first", {}))
    before = path.read_bytes()
    writer = TraceWriter(path, timeout=0.5)
    with held(path, 600):
        started = time.monotonic()
        with pytest.raises(StoreError) as info:
            bounded(lambda: writer.write(Trace("second", {})))
        assert time.monotonic() - started > 0.4  # it waited, and gave up
        assert str(info.value) == (f"cannot append a trace to {path}: another process holds its lock past the 0.5 s "
                                   "wait; nothing was written: try again once that writer is done")
        assert path.read_bytes() == before
    assert [t.id for t in load_traces(path)] == ["first"]
    writer.write(Trace("third", {}))  # the lock let go: the next write goes through
    assert [t.id for t in load_traces(path)] == ["first", "third"]


def test_a_lock_let_go_within_the_timeout_lets_the_write_through(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.touch()
    with held(path, 0.3):
        bounded(lambda: TraceWriter(path, timeout=60).write(Trace("t1", {})))
    assert [t.id for t in load_traces(path)] == ["t1"]


def test_the_timeout_defaults_to_a_json_stores_and_is_checked(tmp_path: Path) -> None:
    import inspect

    from lamar.store import JsonStore

    path = tmp_path / "traces.jsonl"
    assert TraceWriter(path).timeout == inspect.signature(JsonStore).parameters["timeout"].default == 30.0
    assert repr(TraceWriter(path, timeout=2)) == f"TraceWriter({str(path)!r}, timeout=2)"
    for bad in (-1, float("nan"), float("inf"), "5", True):
        with pytest.raises(InvalidArgument, match="timeout is the seconds to wait for another writer's lock"):
            TraceWriter(path, timeout=bad)  # type: ignore[arg-type]


def test_a_write_that_waited_across_a_move_goes_to_the_file_the_path_names(tmp_path: Path) -> None:
    # A nightly job moves the file aside and mines it: a write waiting for the lock when the file was
    # moved appended to the moved file, after the job had read it, so that trace was never mined.
    path, moved = tmp_path / "traces.jsonl", tmp_path / "traces-pending.jsonl"
    TraceWriter(path).write(Trace("before", {}))
    done: list[Trace] = []
    with held(path, 600):
        thread = threading.Thread(target=lambda: done.append(TraceWriter(path, timeout=60).write(Trace("late", {}))))
        thread.start()
        opened = time.monotonic() + 60
        while str(path) not in {os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")}:
            assert time.monotonic() < opened, "the write never opened the file"
            time.sleep(0.01)
        path.rename(moved)  # the write has the moved file open and waits for its lock
    thread.join(60)
    assert [t.id for t in done] == ["late"]
    assert [t.id for t in load_traces(moved)] == ["before"]
    assert [t.id for t in load_traces(path)] == ["late"]


# A writer mid-line: it holds the lock, has written half its record, and finishes it `argv[2]` seconds later.
_HALF_WRITTEN = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_APPEND)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, b'{"id": "mid", "con')
print("held", flush=True)
time.sleep(float(sys.argv[2]))
os.write(fd, b'text": {}}\\n')
"""


def test_a_read_waits_for_a_write_under_way_and_gives_up_past_the_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A read did not take the writers' lock: it saw a line half written (a nightly job that read right
    # after its move did), and refused the file or, at its end, lost the record.
    import subprocess
    import sys

    path = tmp_path / "traces.jsonl"
    TraceWriter(path).write(Trace("before", {}))
    for seconds, timeout in ((0.3, 60.0), (600.0, 0.3)):
        monkeypatch.setattr("lamar.sleep.traces.TIMEOUT", timeout)
        writer = subprocess.Popen([sys.executable, "-c", _HALF_WRITTEN, str(path), str(seconds)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert writer.stdout is not None and writer.stdout.readline() == "held\n"
            if timeout < seconds:
                with pytest.raises(StoreError) as info:
                    bounded(lambda: load_traces(path))
                assert str(info.value) == (f"cannot read traces from {path}: a writer holds its lock past the 0.3 s "
                                           "wait; try again once that writer is done")
            else:
                assert [t.id for t in bounded(lambda: load_traces(path))] == ["before", "mid"]
        finally:
            writer.kill()
            writer.wait()
