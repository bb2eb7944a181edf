"""A SQLite scrub's steps: replace events' data with `secure_delete` on, compact the file and its
write-ahead log, and only then store the `erase` events' new data (their scrub done)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from lamar._errors import StoreError
from lamar.store import episode_rows, sqlite_checks
from lamar.store.sqlite_checks import begin, event_crc

# (data, crc, seq, kind, key, time): an event's new data and checksum, then the event it names.
Row = tuple[str, int, int, str, "str | None", float]
_NAMED = "seq = ? AND kind = ? AND key IS ? AND time = ?"


def scrub(db: sqlite3.Connection, path: Path, timeout: float, rows: list[Row]) -> int:
    """`SqliteStore.scrub` under the store's lock: how many events were replaced.

    An `erase` event's new data (its scrub no longer pending) is written last, once the file is
    compacted: a scrub stopped before that (a kill, readers holding the write-ahead log) leaves
    the event pending and old pages in the file, and the next writer scrubs again and compacts."""
    later = [row for row in rows if row[3] == "erase"]
    before = int(db.execute("PRAGMA secure_delete").fetchone()[0])  # a build's default may be on
    try:
        try:
            db.execute("PRAGMA secure_delete = ON")
            begin(db, "IMMEDIATE")
        except sqlite3.Error as exc:
            raise sqlite_checks.write_failure(path, exc, timeout) from exc
        try:
            contexts = _contexts_change(db, rows)
            for row in rows:
                if row[3] == "erase":  # checked now, so that a wrong one changes nothing
                    found = db.execute(f"SELECT count(*) FROM events WHERE {_NAMED}", row[2:]).fetchone()[0]
                else:
                    found = db.execute(f"UPDATE events SET data = ?, crc = ? WHERE {_NAMED}", row).rowcount
                if found != 1:
                    raise ValueError(f"event {row[2]} ({row[3]}) is not stored in {path} as named; "
                                     "nothing was changed")
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'state'").fetchone():
                db.execute("DELETE FROM state")
            if contexts:  # the table holds the episodes' contexts, and nothing else an erase replaces
                episode_rows.rebuild(db, event_crc)
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"could not scrub {path}: {exc}; the log is unchanged"
                                 f"{sqlite_checks.write_advice(path, exc)}") from exc
            raise
        if len(later) < len(rows) or not rows:  # an erase event's data holds no erased text: none to compact away
            _compact(db, path, timeout, bool(rows))
        if later:
            _mark_done(db, path, later)
    finally:
        db.execute(f"PRAGMA secure_delete = {before}")
    return len(rows)


def _contexts_change(db: sqlite3.Connection, rows: list[Row]) -> bool:
    """Whether the new data changes an episode's context, logged or in a snapshot (before the rows
    are replaced): only then does the episode table need building again from the whole log."""
    for data, _, seq, kind, _, _ in rows:
        if kind == "episode":
            return True
        if kind == "snapshot":
            old = db.execute("SELECT data FROM events WHERE seq = ?", (seq,)).fetchone()
            if old is None or json.loads(old[0]).get("episodes") != json.loads(data).get("episodes"):
                return True
    return False


def _compact(db: sqlite3.Connection, path: Path, timeout: float, scrubbed: bool) -> None:
    """VACUUM, then fold the write-ahead log into the file and truncate it: no page, free or in
    the log, still holds the data the scrub replaced. `scrubbed`: events were replaced just now
    (an erase's first step replaces none, and its refusal must not say it did)."""
    kept_wal = f"readers kept its write-ahead log ({path}-wal) from being emptied"
    try:
        db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")  # readers get this long
        db.execute("VACUUM")  # a fresh file: free pages that held the data are gone
        busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    except sqlite3.Error as exc:
        if scrubbed:
            raise StoreError(f"{path}: the events were scrubbed, but the file could not be compacted ({exc}); old "
                             "pages may remain until it is: scrub again when no one reads it") from exc
        raise StoreError(f"{path}: the file could not be compacted ({exc}); wait until no one reads it") from exc
    if busy and scrubbed:
        raise StoreError(f"{path}: the events were scrubbed, but {kept_wal}; scrub again when no one reads it")
    if busy:
        raise StoreError(f"{path}: {kept_wal}; wait until no one reads it")


def _mark_done(db: sqlite3.Connection, path: Path, rows: list[Row]) -> None:
    """Store the `erase` events' new data. One a checkpoint took out meanwhile needs none: its
    snapshot was folded from the scrubbed log."""
    try:
        begin(db, "IMMEDIATE")
        try:
            db.executemany(f"UPDATE events SET data = ?, crc = ? WHERE {_NAMED}", rows)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: the events were scrubbed and the file compacted, but the erase events could "
                         f"not be marked done ({exc}); scrub again") from exc
