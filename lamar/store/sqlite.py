"""SQLite: WAL journal, one transaction per write, a schema version in `meta`, a checksum per event.
Readers never take the write lock unless the file is new or older (then one process migrates it)."""

from __future__ import annotations

import _thread
import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from lamar._errors import CorruptStore, EventConflict, InvalidArgument, StoreError
from lamar.storable import finite_number
from lamar.store import base, episode_rows, files, held, sqlite_checks, sqlite_read_only, sqlite_scrub
from lamar.store.appendable import check_appendable, storable_key
from lamar.store.base import Event, StoredText, closed_store, event_of
from lamar.store.decode import EventDecoder, no_cycle_collection
from lamar.store.episode_sums import Damaged
from lamar.store.sqlite_checks import begin, cannot_write, event_crc, file_identity, open_failure, wal_size
from lamar.store.sqlite_schema import SCHEMA_VERSION, migrate

_T = TypeVar("_T")

# The engine's saved state (a cache, see Lamar._resume), made by the first save (no migration); one
# folded before an `erase` event may hold the text that erase took out, so it is not kept.
_STATE = ("CREATE TABLE IF NOT EXISTS state "
          "(id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, body TEXT NOT NULL)")
_ERASED = "SELECT 1 FROM events WHERE seq > ?1 AND kind = 'erase'"  # a state or snapshot folded before it: refused
_SAVE = f"INSERT OR REPLACE INTO state (id, seq, body) SELECT 1, ?1, ?2 WHERE NOT EXISTS ({_ERASED})"


class SqliteStore:
    """Events in one SQLite table; many processes may read and write at once.

    A file this process cannot write (read-only file, folder or mount) is opened read-only, and
    never in a way that misses committed events: a write-ahead log that SQLite could not read
    here (no `-shm` beside it, none can be made) is read from a private copy, and so is a file
    SQLite would read only by leaving a `-wal` and `-shm` beside it (`sqlite_read_only`). With `writes_on_read`
    False, reads never bring the episode table up to date nor save the engine's state in the file.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        from pathlib import Path  # on first open, not with `import lamar`

        if not (finite_number(timeout) and timeout >= 0):
            raise InvalidArgument(f"timeout is the seconds to wait for another writer's lock, a finite number "
                                  f">= 0; got {timeout!r}")
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self._timeout = timeout
        self._lock = _thread.allocate_lock()  # threading's Lock, without importing threading
        self.read_only = False
        self.writes_on_read = True  # False for a reader that must leave the file as it found it
        self._checksummed = True  # False: a version-1 file read where it cannot be migrated
        self._copies = sqlite_read_only.Copies(self.path, timeout=timeout)  # a file read from a private copy
        self._closed = False
        files.prepare(self.path, made_private=True, sides=("-wal", "-shm", "-journal"))  # see files.prepare
        opened = None  # the file SQLite opened, before `_prepare` waits for a writer's lock: it may be replaced then
        try:
            if self._copies.instead_of_in_place(self._read_from):
                self._unwritable: str | None = sqlite_checks.unwritable(self.path)
            else:
                self._db, opened = sqlite_checks.opened_in_place(self.path, lambda: self._connect(str(self.path)),
                                                                 self._prepare)
        except sqlite3.OperationalError as exc:
            self._unwritable = cannot_write(self.path, exc)  # what a write will say
            if not self.path.exists() or self._unwritable is None:
                self._fail(exc)
            self._db.close()
            self._open_read_only(exc)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # a damaged schema's names are not text
            self._fail(exc)
        except CorruptStore:
            self._db.close()
            self._copies.release()
            raise
        self._file, self._identity = self.path.absolute(), opened or file_identity(self.path)  # SQLite: full path

    def _connect(self, target: str, *, uri: bool = False) -> sqlite3.Connection:
        try:
            return sqlite3.connect(target, timeout=self._timeout, isolation_level=None, check_same_thread=False,
                                   uri=uri)
        except sqlite3.Error as exc:  # SQLite's open fails with an OperationalError ("unable to open ...")
            raise open_failure(self.path, exc, self._timeout) from exc

    def _prepare(self, db: sqlite3.Connection) -> None:
        """WAL and the schema, through `db` (the store's from now on); a store in that shape is only read (no lock).

        Raises:
            CorruptStore: the file is another program's SQLite database (tables, none of them
                Lamar's schema): it is left as it was, not given Lamar's tables.
        """
        self._db = db
        self._lamar_version()
        sqlite_checks.refuse_triggers(self._db, self.path)
        if self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a killed process loses nothing committed, a power cut at most the last transactions.
        self._db.execute("PRAGMA synchronous=NORMAL")
        if self._schema_version() != SCHEMA_VERSION:
            migrate(self._db, self.path, self._schema_version)

    def _lamar_version(self) -> int | None:
        tables = self._tables()
        version = self._schema_version()
        if tables and version is None:
            # LangGraph's SqliteStore is the one such file a Lamar user is likely to hold: Lamar's log
            # may live inside it (LangGraphStore), where only Python reaches it.
            langgraph = (". It looks like a LangGraph SqliteStore, which only Python opens, as "
                         "Lamar(LangGraphStore(store, namespace=...)): to use its lessons here, copy them into a "
                         "file with lamar.store.transfer.transfer(LangGraphStore(store, namespace=...), "
                         "ExperienceStore('copy.db'))"
                         if {"store", "store_migrations"} <= set(tables) else "")
            raise CorruptStore(f"{self.path} is an SQLite database but not a Lamar store (its tables: "
                               f"{', '.join(sorted(tables)[:5])}); it was left untouched: name another file"
                               f"{langgraph}")
        return version

    def _schema_version(self) -> int | None:
        """The file's schema version; None when it has no Lamar schema yet.

        Raises:
            CorruptStore: the schema names a version but the events table is gone (dropped by
                hand, or a damaged file): it is never created again empty.
        """
        tables = self._tables()
        row = None
        if "meta" in tables:
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is not None and "events" not in tables:
            raise CorruptStore(f"{self.path} is a Lamar store (schema version {row[0]}) whose events table is gone; "
                               "it was left untouched: restore it from a backup")
        return None if row is None or "events" not in tables else int(row[0])

    def _tables(self) -> set[str]:
        return {name for (name,) in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _open_read_only(self, cause: sqlite3.OperationalError) -> None:
        """A file this process cannot write: read it as it is (mode=ro; else, with no write-ahead
        log to miss and no writer to come, immutable, which needs no -shm; else a private copy)."""
        last: sqlite3.Error = cause
        for flags in ("mode=ro", "mode=ro&immutable=1"):
            if "immutable" in flags and (wal_size(self.path) > 0 or sqlite_read_only.may_change(self.path)):
                # immutable=1 reads the main file alone, as it is now for good: the committed transactions
                # still in the write-ahead log would be missing without a word, and so would a writer's later ones
                try:
                    self._open_copy()
                    return
                except CorruptStore:
                    raise
                except StoreError:
                    if wal_size(self.path) > 0:
                        raise  # no room for a copy (a full disk): with no log to miss, the file as it is now
            self._db = self._connect(sqlite_read_only.uri(self.path, flags), uri=True)
            try:
                self._use_read_only(self._schema_version(), cause)
                return
            except sqlite3.DatabaseError as exc:
                self._db.close()
                last = exc
        self._fail(last)

    def _use_read_only(self, version: int | None, cause: sqlite3.Error | None = None) -> None:
        if version is None and cause is not None and not self._tables():  # the disk's fault, or the name's
            self._db.close()
            raise sqlite_checks.unmade(self.path, cause)
        if version is None or version > SCHEMA_VERSION:
            self._db.close()
            raise CorruptStore(f"{self.path} cannot be written and is not a Lamar SQLite store this Lamar "
                               f"reads (schema version {version}); it was left untouched")
        self.read_only = True
        self._checksummed = version >= 2

    def _open_copy(self) -> None:
        """Read a copy of the file and its write-ahead log, made in a private temporary folder
        where SQLite can recover the log: the store as of this open, with every commit (and a new
        copy once a writer changed them, `_follow`)."""
        try:
            self._copies.read(self._read_from)
        except CorruptStore:
            raise
        except (OSError, sqlite3.Error) as exc:
            raise sqlite_checks.copy_failure(self.path, exc) from exc

    def _read_from(self, target: str) -> None:
        """Read `target` from now on: a private copy's path, or the file itself by its `uri`; when it cannot be
        read, what was read until now is read on."""
        old = getattr(self, "_db", None)
        try:
            self._db = self._connect(target, uri=target.startswith("file:"))
            self._use_read_only(self._lamar_version())
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                if getattr(self, "_db", None) not in (None, old):  # none when the connect failed
                    self._db.close()
            if old is not None:
                self._db = old
            raise
        if old is not None:  # the copy read until now (or a connection closed already)
            old.close()

    def _follow(self) -> None:
        # A process that keeps the store open reads a new copy once a writer changed the file and it can be
        # checked, and the file itself once a writer has it open (Copies.follow)
        with contextlib.suppress(OSError, sqlite3.Error):  # else the copy taken before is read on
            self._copies.follow(self._read_from)

    def _fail(self, exc: sqlite3.Error | UnicodeDecodeError) -> None:
        with contextlib.suppress(AttributeError, sqlite3.Error):
            self._db.close()
        self._copies.release()
        raise open_failure(self.path, exc, self._timeout) from exc

    def append(self, events: Sequence[Event]) -> list[Event]:
        check_appendable(events)  # before any lock or transaction: a refusal leaves nothing behind
        rows = [(e.kind, e.key, e.time, e.data_json(), event_crc(e.kind, e.key, e.time, e.data_json())) for e in events]
        self._check_writable()
        with self._lock:
            try:
                begin(self._db, "IMMEDIATE")
            except sqlite3.Error as exc:
                raise sqlite_checks.write_failure(self.path, exc, self._timeout) from exc
            try:
                held.refuse_in_sqlite(self._db, events)  # a checkpoint took those keys' rows out, not their claim
                stored = []
                for event, row in zip(events, rows):
                    cur = self._db.execute("INSERT INTO events (kind, key, time, data, crc) VALUES (?,?,?,?,?)", row)
                    stored.append(event.numbered(int(cur.lastrowid or 0)))
                self._db.execute("COMMIT")
                return stored
            except sqlite3.IntegrityError as exc:
                self._db.execute("ROLLBACK")
                raise EventConflict(f"an event key is already in {self.path}: {exc}") from exc
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise StoreError(f"could not write {self.path}: {exc}; nothing of this write was kept"
                                 f"{sqlite_checks.write_advice(self.path, exc)}") from exc

    def rewrite(self, through: int, snapshot: Event) -> bool:
        row = ("snapshot", None, snapshot.time, snapshot.data_json())
        self._check_writable()
        with self._lock:
            try:
                begin(self._db, "IMMEDIATE")  # appends wait; readers see the old log until COMMIT
            except sqlite3.Error as exc:
                raise sqlite_checks.write_failure(self.path, exc, self._timeout) from exc
            try:
                first = self._db.execute("SELECT seq, kind FROM events ORDER BY seq LIMIT 1").fetchone()
                last = self._db.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
                if through > last or through < 1:
                    raise ValueError(f"cannot rewrite {self.path} through seq {through}: it holds seqs 1..{last}")
                if first[1] == "snapshot" and first[0] >= through or self._db.execute(_ERASED, (through,)).fetchone():
                    self._db.execute("ROLLBACK")
                    return False
                self._db.execute("DELETE FROM events WHERE seq <= ?", (through,))
                self._db.execute("INSERT INTO events (seq, kind, key, time, data, crc) VALUES (?, ?, ?, ?, ?, ?)",
                                 (through, *row, event_crc(*row)))
                episode_rows.rebuild(self._db, event_crc)
                self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"could not rewrite {self.path}: {exc}; the log is unchanged"
                                     f"{sqlite_checks.write_advice(self.path, exc)}") from exc
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

    def scrub(self, events: Sequence[Event]) -> int:
        """Replace events' data (`ErasableStore.scrub`) and drop the saved state in one transaction, with
        `secure_delete` on (then as it was) so SQLite zeroes what it frees; then VACUUM, fold the write-ahead
        log into the file and truncate it: no page, free or in the log, still holds the old data. An
        `erase` event's new data is stored after that, in a second write (`sqlite_scrub.scrub`).

        Raises:
            StoreError: also when readers kept the write-ahead log busy past the timeout: the log
                is scrubbed, but the file or its -wal may still hold old pages (scrub again).
        """
        rows = [(e.data_json(), event_crc(e.kind, e.key, e.time, e.data_json()), e.seq, e.kind, e.key, e.time)
                for e in events]
        self._check_writable()
        with self._lock:
            return sqlite_scrub.scrub(self._db, self.path, self._timeout, rows)

    def read(self, after: int = 0) -> list[Event]:
        """Committed events after seq `after`, every one checked (its checksum and what it holds),
        and none missing: seqs run on without a gap to the last one ever written.

        Raises:
            CorruptStore: an event was changed or removed (by hand, or a damaged file).
        """
        with no_cycle_collection():
            return self._events(self.read_texts(after))

    def read_texts(self, after: int = 0) -> list[StoredText]:
        """`read(after)` before decoding (`TextStore`): every event's checksum and seq checked,
        none missing; its data as stored, for the caller to decode (`decoded`)."""
        rows, top = self._rows("seq > ?", (after,), last=True)
        expect = after + 1
        for number, row in enumerate(rows):
            # (a read from before a rewrite starts with the snapshot that replaced the events up to its seq)
            if row.seq != expect and not (number == 0 and row.kind == "snapshot" and row.seq > after):
                raise self._corrupt(f"event {row.seq} follows event {expect - 1}: the events between were removed")
            expect = row.seq + 1
        if top is not None and top >= expect:
            raise self._corrupt(f"its events end at seq {expect - 1} but seq {top} was written: events were removed")
        return rows

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        keys = [key for key in keys if storable_key(key)]
        return self._select(f"key IN ({','.join('?' * len(keys))})", tuple(keys))

    def _select(self, where: str, params: tuple[object, ...]) -> list[Event]:
        with no_cycle_collection():
            return self._events(self._rows(where, params)[0])

    def _events(self, rows: list[StoredText]) -> list[Event]:
        decode = EventDecoder()
        try:
            return [event_of(row, decode) for row in rows]
        except base.UnknownKind as exc:  # a newer Lamar's event: the way on is to upgrade, not a backup
            raise exc.at(str(self.path)) from None
        except CorruptStore as exc:
            raise self._corrupt(str(exc)) from exc.__cause__

    def decoded(self, row: StoredText) -> Event:
        """The event `row` holds, checked as `read` checks it (`TextStore`).

        Raises:
            CorruptStore: its data does not parse, or holds what no write could have stored.
        """
        return self._events([row])[0]

    def _rows(self, where: str, params: tuple[object, ...], *,
              last: bool = False) -> tuple[list[StoredText], int | None]:
        """The events matching `where`, in commit order, each checksum checked; with `last`, the
        highest seq ever written (SQLite's AUTOINCREMENT counter), read in the same snapshot."""
        with no_cycle_collection():
            top = None
            with self._lock:
                self._follow()  # before the columns: a new copy may be of a newer schema
                self._check_file()
                columns = "seq, kind, key, time, data" + (", crc" if self._checksummed else ", NULL")
                try:
                    begin(self._db)
                    try:
                        rows = self._db.execute(
                            f"SELECT {columns} FROM events WHERE {where} ORDER BY seq", params).fetchall()
                        if last:
                            found = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
                            top = None if found is None else int(found[0])
                    finally:
                        self._db.execute("COMMIT")
                except sqlite3.DatabaseError as exc:
                    raise CorruptStore(f"cannot read {self.path}: {exc}") from exc
            texts = self._checked(rows)
            del rows  # before the collector resumes, which would walk every row once more
        return texts, top

    def _checked(self, rows: Iterable[tuple[int, str, str | None, float, str, int | None]]) -> list[StoredText]:
        texts = []
        new = tuple.__new__  # StoredText's own constructor is a Python call per row
        for seq, kind, key, at, data, crc in rows:
            try:
                changed = self._checksummed and crc != event_crc(kind, key, at, data)
            except (TypeError, ValueError, UnicodeError):  # a damaged row: a column of another type
                changed = True
            if changed:
                raise self._corrupt(f"event {seq} ({kind!r}) fails its checksum: it was changed since it was "
                                    "written (edited by hand, or a damaged file)")
            texts.append(new(StoredText, (seq, kind, key, at, data)))
        return texts

    def episodes(self) -> episode_rows.EpisodeRows | None:
        """The live episodes as the episode table holds them, and the events since (`EpisodeTableStore`);
        None when it does not describe the log (stale, or a file older than it read where it cannot be written)."""
        return self._table(episode_rows.read)

    def episode_counts(self) -> episode_rows.EpisodeCounts | None:
        """`episodes`, each episode as its time and how many lessons it injected and held out."""
        return self._table(episode_rows.counts)

    def _table(self, reader: Callable[[sqlite3.Connection, Callable[[int], list[StoredText]]], _T]) -> _T | None:
        """`reader`'s read of the episode table and the events after it, in one read transaction. A
        table far behind the log is first brought up to date, where it can be; one that fails its
        sums is repaired from the log (`episode_rows.repair`), where it can be, and else not read (None)."""
        self._check_open()
        with self._lock:
            behind = self.writes_on_read and not self.read_only and episode_rows.behind(self._db)
        if behind:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: this read folds the tail itself
                self._unwaited(lambda: episode_rows.catch_up(self._db, event_crc))
        try:
            return self._episode_table(reader)
        except Damaged:
            if self.read_only or not self.writes_on_read:
                return None
        with contextlib.suppress(sqlite3.Error):  # busy, or damaged past refilling: the log is folded
            self._unwaited(lambda: episode_rows.repair(self._db, event_crc))
        with contextlib.suppress(Damaged):
            return self._episode_table(reader)
        return None

    def _episode_table(self, reader: Callable[[sqlite3.Connection, Callable[[int], list[StoredText]]], _T]) -> _T:
        with no_cycle_collection(), self._lock:
            self._follow()
            self._check_file()
            try:
                begin(self._db)
                try:
                    return reader(self._db, lambda after: self._checked(self._db.execute(
                        "SELECT seq, kind, key, time, data, crc FROM events WHERE seq > ? ORDER BY seq", (after,))))
                finally:
                    # A read's end: a damaged page of the table may fail it too (Damaged then
                    # stands), and the next BEGIN rolls back whatever is left open.
                    with contextlib.suppress(sqlite3.DatabaseError):
                        self._db.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                raise CorruptStore(f"cannot read {self.path}: {exc}") from exc

    def _corrupt(self, what: str) -> CorruptStore:
        return CorruptStore(f"{self.path}: {what}; it was left untouched. Restore it from a backup")

    def load_state(self) -> str | None:
        with self._lock:
            self._check_open()  # else the closed connection's error would read as "no state yet"
            try:
                row = self._db.execute("SELECT body FROM state WHERE id = 1").fetchone()
            except sqlite3.Error:
                return None  # no state table yet (a store from before it), or unreadable: replay
        return None if row is None else str(row[0])

    def save_state(self, seq: int, text: str) -> None:
        self._check_open()
        if self.read_only or not self.writes_on_read:
            raise StoreError(f"{self.path} is open read-only; the state was not saved")
        def save() -> None:
            self._db.execute(_STATE)
            self._db.execute(_SAVE, (seq, text))
            episode_rows.catch_up(self._db, event_crc)  # in batches, off the path of each write

        try:
            self._unwaited(save)
        except sqlite3.Error as exc:
            raise StoreError(f"could not save the engine's state in {self.path}: {exc}") from exc

    def _unwaited(self, work: Callable[[], object]) -> None:
        """`work` in a write transaction that never waits for the write lock: what it writes is a
        cache (the state, the episode table), and a reader must not queue behind a writer for it.
        Someone writes it later."""
        with self._lock:
            self._db.execute("PRAGMA busy_timeout = 0")
            try:
                begin(self._db, "IMMEDIATE")
                try:
                    work()
                    self._db.execute("COMMIT")
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
            finally:
                self._db.execute(f"PRAGMA busy_timeout = {int(self._timeout * 1000)}")

    def _check_open(self) -> None:
        # sqlite3 says "Cannot operate on a closed database", which the reads would call corrupt.
        if self._closed:
            raise closed_store(self.location)

    def _check_file(self) -> None:
        # SQLite keeps reading and writing through its handle to a file deleted or moved away: later
        # events would be lost without a word, and reads show a store no one else sees.
        self._check_open()
        if (said := sqlite_checks.let_go_if_moved(self._db, self._file, self._identity)) is not None:
            raise StoreError(said)

    def _check_writable(self) -> None:
        self._check_file()
        if self.read_only:
            raise StoreError(self._unwritable)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            sqlite_checks.let_go_if_moved(self._db, self._file, self._identity)
            self._db.close()
            self._copies.release()
