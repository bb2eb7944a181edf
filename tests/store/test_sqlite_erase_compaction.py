"""An SQLite erase stopped after its scrub committed but before the file was compacted (a kill,
readers holding the write-ahead log) stays pending, so the next writer compacts the file."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from lamar import Experience, Lamar, StoreError
from lamar.state import erasure
from lamar.store.sqlite import SqliteStore
from tests.at_once import _CONTEXT

_SECRET = b"Quorvath"

def _erase_killed_at_vacuum(location: str, exp_id: str) -> None:
    """Erase, and die for good at the scrub's VACUUM, once the scrub's UPDATE has committed."""
    lam = Lamar(location, seed=0)
    seen: list[str] = []

    def trace(sql: str) -> None:
        seen.append(sql)
        if sql == "VACUUM" and any(s.startswith("UPDATE events SET data") for s in seen):
            os._exit(9)

    lam.store._db.set_trace_callback(trace)  # type: ignore[attr-defined]
    lam.erase(exp_id, by="ops")


def _stored(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _lesson(path: Path) -> str:
    lam = Lamar(str(path), seed=0)
    exp_id = lam.add(Experience("Quorvath's build fails", "page Quorvath"))
    lam.close()
    return exp_id


def _pending(lam: Lamar) -> list[object]:
    return [e.data.get("pending") for e in lam.store.read() if e.kind == "erase"]


def test_an_erase_killed_before_its_vacuum_is_compacted_by_the_next_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    exp_id = _lesson(path)
    eraser = _CONTEXT.Process(target=_erase_killed_at_vacuum, args=(str(path), exp_id))
    eraser.start()
    eraser.join(60)
    assert eraser.exitcode == 9
    lam = Lamar(str(path), seed=0)
    assert _SECRET in _stored(path)  # the old pages, not yet compacted away
    assert _pending(lam) == [True]
    monkeypatch.setattr(erasure, "GRACE", 0.0)
    lam.recall({})  # a writer, past the grace
    assert _SECRET not in _stored(path), "the killed erase's old pages are still in the file"
    assert _pending(lam) == [None]
    lam.close()


def test_an_erase_whose_checkpoint_readers_blocked_is_compacted_by_the_next_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    exp_id = _lesson(path)
    lam = Lamar(SqliteStore(path, timeout=0.2), seed=0)
    reader = sqlite3.connect(path, isolation_level=None)
    original = lam.store.scrub

    def scrub_then_read(events: object) -> int:
        if events:  # a reader starts as the scrub begins and holds the log through its checkpoint
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM events").fetchone()
        return int(original(events))  # type: ignore[arg-type]

    monkeypatch.setattr(lam.store, "scrub", scrub_then_read)
    with pytest.raises(StoreError, match="erase again"):
        lam.erase(exp_id, by="ops")
    monkeypatch.undo()
    reader.execute("COMMIT")
    reader.close()
    assert _pending(lam) == [True]  # the file may still hold the text: not done
    monkeypatch.setattr(erasure, "GRACE", 0.0)
    lam.recall({})
    assert _SECRET not in _stored(path), "old pages are still in the file or its write-ahead log"
    assert _pending(lam) == [None]
    lam.close()
