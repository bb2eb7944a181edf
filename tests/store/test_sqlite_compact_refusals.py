"""What a SQLite scrub's compaction says when readers or a writer keep it from finishing: each refusal whole."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from lamar import LamarError
from lamar.store.sqlite_scrub import _compact


def _wal_file(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES (1)")
    return db


@pytest.mark.parametrize("scrubbed", [False, True])
def test_a_reader_keeps_the_write_ahead_log(tmp_path: Path, scrubbed: bool) -> None:
    path = tmp_path / "s.db"
    db = _wal_file(path)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM t").fetchone()  # a read transaction pins the write-ahead log
    with pytest.raises(LamarError) as refused:
        _compact(db, path, 0.05, scrubbed)
    kept = f"{path}: readers kept its write-ahead log ({path}-wal) from being emptied"
    assert str(refused.value) == (f"{path}: the events were scrubbed, but readers kept its write-ahead log "
                                  f"({path}-wal) from being emptied; scrub again when no one reads it" if scrubbed
                                  else f"{kept}; wait until no one reads it")
    reader.execute("COMMIT")
    _compact(db, path, 0.05, scrubbed)  # once the reader is gone


@pytest.mark.parametrize("scrubbed", [False, True])
def test_a_writer_keeps_the_file_from_being_compacted(tmp_path: Path, scrubbed: bool) -> None:
    path = tmp_path / "s.db"
    db = _wal_file(path)
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    with pytest.raises(LamarError) as refused:
        _compact(db, path, 0.05, scrubbed)
    said = str(refused.value)
    if scrubbed:
        assert said.startswith(f"{path}: the events were scrubbed, but the file could not be compacted (")
        assert said.endswith("); old pages may remain until it is: scrub again when no one reads it")
    else:
        assert said.startswith(f"{path}: the file could not be compacted (")
        assert said.endswith("); wait until no one reads it")
    writer.execute("ROLLBACK")
