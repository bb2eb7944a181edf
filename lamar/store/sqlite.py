"""SQLite: WAL journal, one transaction per write, a schema version in `meta`."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from lamar._errors import CorruptStore, EventConflict, StoreError
from lamar.store.base import Event, check_appendable

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    key  TEXT UNIQUE,
    time REAL NOT NULL,
    data TEXT NOT NULL
);
"""


class SqliteStore:
    """Events in one SQLite table; many processes may read and write at once."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self._timeout = timeout
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        try:
            self._db = sqlite3.connect(
                self.path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a killed process loses nothing committed; only a power cut
            # can drop the last transactions (never corrupt the file).
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if isinstance(exc, sqlite3.OperationalError) and "locked" not in str(exc):
                raise StoreError(f"cannot open {self.path}: {exc}") from exc
            raise CorruptStore(
                f"{self.path} is not a readable Lamar SQLite store ({exc}); it was left untouched"
            ) from exc

    def _migrate(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")  # two processes opening a new file at once: one migrates
        try:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
            elif int(row[0]) > SCHEMA_VERSION:
                raise CorruptStore(
                    f"{self.path} has schema version {row[0]}; this Lamar knows {SCHEMA_VERSION}: upgrade lamar"
                )
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def append(self, events: Sequence[Event]) -> list[Event]:
        check_appendable(events)  # before any lock or transaction: a refusal leaves nothing behind
        rows = [(e.kind, e.key, e.time, e.data_json()) for e in events]
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write {self.path}: {exc}") from exc
            try:
                stored = []
                for event, row in zip(events, rows):
                    cur = self._db.execute("INSERT INTO events (kind, key, time, data) VALUES (?, ?, ?, ?)", row)
                    stored.append(_with_seq(event, int(cur.lastrowid or 0)))
                self._db.execute("COMMIT")
                return stored
            except sqlite3.IntegrityError as exc:
                self._db.execute("ROLLBACK")
                raise EventConflict(f"an event key is already in {self.path}: {exc}") from exc
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"could not write {self.path}: {exc}; nothing of this write was kept") from exc

    def rewrite(self, through: int, snapshot: Event) -> bool:
        row = ("snapshot", snapshot.time, snapshot.data_json())
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")  # appends wait; readers see the old log until COMMIT
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write {self.path}: {exc}") from exc
            try:
                first = self._db.execute("SELECT seq, kind FROM events ORDER BY seq LIMIT 1").fetchone()
                last = self._db.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
                if through > last or through < 1:
                    raise ValueError(f"cannot rewrite {self.path} through seq {through}: it holds seqs 1..{last}")
                if first[1] == "snapshot" and first[0] >= through:
                    self._db.execute("ROLLBACK")
                    return False
                self._db.execute("DELETE FROM events WHERE seq <= ?", (through,))
                self._db.execute("INSERT INTO events (seq, kind, key, time, data) VALUES (?, ?, NULL, ?, ?)",
                                 (through, *row))
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"could not rewrite {self.path}: {exc}; the log is unchanged") from exc
                raise
            # Fold the WAL (now as large as the rewrite) into the file and truncate it. Busy
            # readers would make that wait, so give up after a moment: it is only disk space.
            try:
                self._db.execute("PRAGMA busy_timeout = 200")
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            except sqlite3.Error:
                pass
            finally:
                self._db.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")
            return True

    def read(self, after: int = 0) -> list[Event]:
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT seq, kind, key, time, data FROM events WHERE seq > ? ORDER BY seq", (after,)
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise CorruptStore(f"cannot read {self.path}: {exc}") from exc
        try:
            return [Event(kind=k, data=json.loads(d), key=key, seq=s, time=t) for s, k, key, t, d in rows]
        except (ValueError, TypeError) as exc:
            raise CorruptStore(f"{self.path} holds an event that does not parse: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _with_seq(event: Event, seq: int) -> Event:
    return Event(kind=event.kind, data=event.data, key=event.key, seq=seq, time=event.time)
