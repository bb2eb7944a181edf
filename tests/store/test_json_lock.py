"""The JSON store's writers' lock held by another process: a write waits at most the store's
`timeout`, then fails saying so with nothing changed; a lock let go in time lets it through."""

from __future__ import annotations

import signal
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
