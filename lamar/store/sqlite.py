"""SQLite: WAL journal, one transaction per write, a schema version in `meta`.

Opening never takes the write lock unless the file is new or older (then one process
migrates it), so readers (`lamar stats`, `ls`, `show`, ...) work while a writer holds the
lock; a file that cannot be written (read-only mount or folder) is opened read-only.
"""

from __future__ import annotations

import _thread
import json
import os
import sqlite3
from collections.abc import Sequence

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
# The engine's saved state (a cache, see Lamar._resume): created by the first save, so a
# store made by an older Lamar needs no migration for it.
_STATE = "CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, body TEXT NOT NULL)"


class SqliteStore:
    """Events in one SQLite table; many processes may read and write at once."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        from pathlib import Path  # on first open, not with `import lamar`

        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self._timeout = timeout
        self._lock = _thread.allocate_lock()  # threading's Lock, without importing threading
        self.read_only = False
        if not self.path.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        try:
            self._db = self._connect(str(self.path))
            self._prepare()
        except sqlite3.OperationalError as exc:
            if not self.path.exists() or not _cannot_write(exc):
                self._fail(exc)
            self._db.close()
            self._open_read_only(exc)
        except sqlite3.DatabaseError as exc:
            self._fail(exc)

    def _connect(self, target: str, *, uri: bool = False) -> sqlite3.Connection:
        try:
            return sqlite3.connect(target, timeout=self._timeout, isolation_level=None, check_same_thread=False,
                                   uri=uri)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open {self.path}: {exc}") from exc

    def _prepare(self) -> None:
        """WAL and the schema; a store already in that shape is only read (no write lock taken)."""
        if self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a killed process loses nothing committed; only a power cut
        # can drop the last transactions (never corrupt the file).
        self._db.execute("PRAGMA synchronous=NORMAL")
        if self._schema_version() != SCHEMA_VERSION:
            self._migrate()

    def _schema_version(self) -> int | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            self._db.execute("SELECT seq FROM events LIMIT 0")
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return None
            raise
        return None if row is None else int(row[0])

    def _open_read_only(self, cause: sqlite3.OperationalError) -> None:
        """A file this process cannot write: read it as it is (mode=ro, else immutable: no -shm needed)."""
        import urllib.parse

        quoted = urllib.parse.quote(str(self.path.resolve()))
        last: sqlite3.Error = cause
        for flags in ("mode=ro", "mode=ro&immutable=1"):
            self._db = self._connect(f"file:{quoted}?{flags}", uri=True)
            try:
                version = self._schema_version()
            except sqlite3.DatabaseError as exc:
                self._db.close()
                last = exc
                continue
            if version is None or version > SCHEMA_VERSION:
                self._db.close()
                raise CorruptStore(f"{self.path} cannot be written and is not a Lamar SQLite store this Lamar "
                                   f"reads (schema version {version}); it was left untouched")
            self.read_only = True
            return
        self._fail(last)

    def _fail(self, exc: sqlite3.Error) -> None:
        try:
            self._db.close()
        except (AttributeError, sqlite3.Error):
            pass
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
        self._check_writable()
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write {self.path}: {exc}") from exc
            try:
                stored = []
                for event, row in zip(events, rows):
                    cur = self._db.execute("INSERT INTO events (kind, key, time, data) VALUES (?, ?, ?, ?)", row)
                    stored.append(event.numbered(int(cur.lastrowid or 0)))
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
        self._check_writable()
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
        return self._select("seq > ?", (after,))

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        return self._select(f"key IN ({','.join('?' * len(keys))})", tuple(keys))

    def _select(self, where: str, params: tuple[object, ...]) -> list[Event]:
        """The events matching `where`, in commit order; CorruptStore when they cannot be read."""
        with self._lock:
            try:
                rows = self._db.execute(
                    f"SELECT seq, kind, key, time, data FROM events WHERE {where} ORDER BY seq", params
                ).fetchall()
            except sqlite3.DatabaseError as exc:
                raise CorruptStore(f"cannot read {self.path}: {exc}") from exc
        try:
            return [Event(kind=k, data=json.loads(d), key=key, seq=s, time=t) for s, k, key, t, d in rows]
        except (ValueError, TypeError) as exc:
            raise CorruptStore(f"{self.path} holds an event that does not parse: {exc}") from exc

    def load_state(self) -> str | None:
        with self._lock:
            try:
                row = self._db.execute("SELECT body FROM state WHERE id = 1").fetchone()
            except sqlite3.Error:
                return None  # no state table yet (a store from before it), or unreadable: replay
        return None if row is None else str(row[0])

    def save_state(self, seq: int, text: str) -> None:
        if self.read_only:
            raise StoreError(f"{self.path} is open read-only; the state was not saved")
        with self._lock:
            # Never wait for the write lock: the state is a cache, and a reader closing must not
            # queue behind a writer. Someone saves it at a later write.
            self._db.execute("PRAGMA busy_timeout = 0")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.execute(_STATE)
                    self._db.execute("INSERT OR REPLACE INTO state (id, seq, body) VALUES (1, ?, ?)", (seq, text))
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise StoreError(f"could not save the engine's state in {self.path}: {exc}") from exc
            finally:
                self._db.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")

    def _check_writable(self) -> None:
        if self.read_only:
            raise StoreError(f"{self.path} cannot be written (read-only file, folder or mount); "
                             "open a writable copy to change it")

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _cannot_write(exc: sqlite3.OperationalError) -> bool:
    """Whether opening failed because the file, its folder or the mount is read-only."""
    text = str(exc).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text
