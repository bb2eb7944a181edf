"""The JSON store's writers' lock held by another process: a write waits at most the store's
`timeout`, then fails saying so with nothing changed; a lock let go in time lets it through."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lamar import Experience, Lamar, StoreError
from lamar.store import Event, JsonStore
from tests.locks import held


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix != ".lock"}


def test_a_write_gives_up_on_a_lock_held_past_the_timeout_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "lessons.json"
    with Lamar(str(path), seed=0) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    before = _files(tmp_path)
    store = JsonStore(path, timeout=0.5)
    lam = Lamar(store, seed=0)
    with held(f"{path}.lock", 600):
        for write in (lambda: store.append([Event("status", {"id": "x", "status": "active"})]),
                      lambda: lam.recall({}), lam.checkpoint):
            started = time.monotonic()
            with pytest.raises(StoreError) as info:
                write()
            assert 0.4 < time.monotonic() - started < 15  # not at once, not for ever
            assert str(info.value) == (
                f"cannot write {path}: another process holds its lock ({path}.lock) past the 0.5 s wait; "
                "nothing was written: try again once that writer is done")
            assert _files(tmp_path) == before
    assert len(lam.recall({}).eligible) == 1  # the lock let go, the same engine writes again
    lam.close()


def test_a_lock_let_go_before_the_timeout_lets_the_write_through(tmp_path: Path) -> None:
    path = tmp_path / "lessons.json"
    store = JsonStore(path, timeout=60)
    with held(f"{path}.lock", 0.5):
        started = time.monotonic()
        stored = store.append([Event("status", {"id": "x", "status": "active"})])
        waited = time.monotonic() - started
    assert 0.3 < waited < 30  # it waited for the holder, then wrote
    assert [e.seq for e in stored] == [1] and [e.data["id"] for e in JsonStore(path).read()] == ["x"]


def test_a_timeout_of_zero_tries_the_lock_once(tmp_path: Path) -> None:
    path = tmp_path / "lessons.json"
    store = JsonStore(path, timeout=0)
    store.append([Event("status", {"id": "x", "status": "active"})])  # free: taken at once
    with held(f"{path}.lock", 600), pytest.raises(StoreError, match="past the 0 s wait"):
        store.append([Event("status", {"id": "y", "status": "active"})])
    assert [e.data["id"] for e in JsonStore(path).read()] == ["x"]


def test_a_ctrl_c_while_waiting_leaves_the_lock_to_whoever_comes_next(tmp_path: Path) -> None:
    path = tmp_path / "lessons.json"
    store = JsonStore(path, timeout=60)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with held(f"{path}.lock", 600):
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(KeyboardInterrupt):
                store.append([Event("status", {"id": "x", "status": "active"})])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    JsonStore(path, timeout=10).append([Event("status", {"id": "y", "status": "active"})])
    assert [e.data["id"] for e in JsonStore(path).read()] == ["y"]


def _descriptors_of(lock: Path) -> int:
    """How many of this process's descriptors are open on `lock`."""
    folder = Path("/proc/self/fd")
    return sum(1 for fd in folder.iterdir() if os.path.realpath(fd) == str(lock))


def _waits() -> list[threading.Thread]:
    """The threads of waits for a lock in this process."""
    return [thread for thread in threading.enumerate() if thread.name == "lamar-flock-wait"]


def _ended_waits() -> None:
    """Once every wait's thread has ended (each takes its lock and lets go of it, or hands it over)."""
    for thread in _waits():
        thread.join(30)
    assert _waits() == []


def _free_for_another_process(lock: Path) -> bool:
    """Whether another process takes `lock`'s flock at once."""
    take = "import fcntl, os, sys; fcntl.flock(os.open(sys.argv[1], os.O_RDWR), fcntl.LOCK_EX | fcntl.LOCK_NB)"
    return subprocess.run([sys.executable, "-c", take, str(lock)], check=False, capture_output=True).returncode == 0


def _status(name: str) -> Event:
    return Event("status", {"id": name, "status": "active"})


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts descriptors in /proc")
def test_writes_given_up_leave_one_wait_behind_and_none_once_the_lock_is_let_go(tmp_path: Path) -> None:
    path, lock = tmp_path / "lessons.json", tmp_path / "lessons.json.lock"
    store = JsonStore(path, timeout=0.2)
    _ended_waits()  # of earlier tests in this process
    with held(lock):
        for name in ("a", "b", "c"):
            with pytest.raises(StoreError, match="past the 0.2 s wait"):
                store.append([_status(name)])
        # A blocked flock cannot be called off; each write after the first takes over the one left waiting.
        assert (len(_waits()), _descriptors_of(lock)) == (1, 1)
    # The holder let go: the next write gets the lock (from the wait it takes over, if that still waits).
    assert [e.data["id"] for e in JsonStore(path, timeout=5).append([_status("d")])] == ["d"]
    _ended_waits()
    assert _descriptors_of(lock) == 0
    assert _free_for_another_process(lock)
    assert [e.data["id"] for e in JsonStore(path).read()] == ["d"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_child_forked_while_a_write_waits_does_not_keep_the_lock(tmp_path: Path) -> None:
    path, lock = tmp_path / "lessons.json", tmp_path / "lessons.json.lock"
    store = JsonStore(path, timeout=0.2)
    with held(lock):
        with pytest.raises(StoreError, match="past the 0.2 s wait"):
            store.append([_status("a")])
        read, write = os.pipe()
        child = os.fork()
        if child == 0:  # a child that outlives the holder (a worker of a forking server)
            os.close(write)
            os.read(read, 1)
            os._exit(0)
        os.close(read)
    try:
        # The wait left behind takes the lock once the holder lets go: the child's copy of its
        # descriptor would keep it held for as long as the child lives.
        assert [e.data["id"] for e in JsonStore(path, timeout=5).append([_status("b")])] == ["b"]
        assert _free_for_another_process(lock)
    finally:
        os.write(write, b"x")
        os.close(write)
        os.waitpid(child, 0)
