"""The SQLite store's schema, and bringing an older file up to it (under the write lock, once)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

from lamar._errors import CorruptStore
from lamar.store import episode_rows
from lamar.store.sqlite_checks import begin, event_crc

SCHEMA_VERSION = 3

# Version 2 adds `crc`, every event's checksum (`event_crc`): every write sets it, every read
# checks it. Version 3 adds the episode table (`episode_rows`). An older file gets both, filled,
# when it is first opened for writing.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key  TEXT UNIQUE,
    time REAL NOT NULL,
    data TEXT NOT NULL,
    crc  INTEGER
);
"""


def migrate(db: sqlite3.Connection, path: Path, version_of: Callable[[], int | None]) -> None:
    """Create the schema, or bring an older one up to `SCHEMA_VERSION`, in one transaction."""
    begin(db, "IMMEDIATE")  # two processes opening a new file at once: one migrates
    try:
        version = version_of()  # again, under the lock: another process may have migrated
        if version is not None and version > SCHEMA_VERSION:
            raise CorruptStore(f"{path} has schema version {version}; this Lamar knows {SCHEMA_VERSION}: upgrade lamar")
        if version == 1:
            _add_checksums(db)
        for statement in filter(str.strip, _SCHEMA.split(";")):
            db.execute(statement)
        episode_rows.create(db)  # folding nothing yet: the first state saved catches it up
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):  # a failed COMMIT (a full disk) may have ended it
            db.execute("ROLLBACK")
        raise


def _add_checksums(db: sqlite3.Connection) -> None:
    """Version 1 to 2: the checksum column, filled for the events already there (as read now)."""
    db.execute("ALTER TABLE events ADD COLUMN crc INTEGER")
    rows = db.execute("SELECT seq, kind, key, time, data FROM events").fetchall()
    db.executemany("UPDATE events SET crc = ? WHERE seq = ?",
                   [(event_crc(kind, key, at, data), seq) for seq, kind, key, at, data in rows])
