"""What a SQLite store checks of its rows, its file and its connection: each event's checksum, which
file is at a path (and was opened), whether a failed open means the file cannot be written, what to say when it
failed, and that no interrupted transaction is still open when a new one begins."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import zlib
from collections.abc import Callable
from pathlib import Path

from lamar._errors import CorruptStore, StoreError, advised
from lamar.store import base
from lamar.store.files import file_kind, gone, now_at


def event_crc(kind: str, key: str | None, time: float, data: str) -> int:
    """An event's checksum: CRC-32 of its kind, key, time and data as stored (the data's text is
    stored exactly as `Event.data_json` wrote it). Its seq is checked by the seqs around it."""
    named = "\x00" if key is None else key  # no key can hold a NUL (`check_appendable`)
    text = f"{kind}\x1f{named}\x1f{float(time)!r}\x1f{data}"
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def file_identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """The file at `path` (device and inode), or None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def moved_away(path: Path, opened: tuple[int, int] | None) -> str | None:
    """What a read or a write says when the file at `path` is not the one opened (`opened`, its
    `file_identity` then): deleted, or replaced by another file; None when it is the same."""
    now = file_identity(path)
    if now == opened:
        return None
    if now is None:  # so `opened` is not
        return gone(path, opened[1], opened[0], wal=True) if opened else f"{path} is gone"
    new = None if opened is None else now_at(path, opened[1], opened[0])[0]
    kept = f"; the file that was open, with its lessons, is now at {new}" if new is not None else ""
    return (f"{path} was replaced by another file while open; nothing was read or written: open the store "
            f"again to use the file now at that path{kept}")


def let_go_if_moved(db: sqlite3.Connection, path: Path, opened: tuple[int, int] | None) -> str | None:
    """`moved_away`; when the file was moved or replaced, first fold this connection's -wal into the file it has
    open and empty it. SQLite leaves the -wal of a file moved away where it was, at close too, and the file now at
    `path` would read it as its own: its next reader finds it "malformed", its next writer folds the pages of the
    other file into it, and the file moved away lacks the commits the -wal held."""
    said = moved_away(path, opened)
    if said is not None:
        with contextlib.suppress(sqlite3.Error):  # read-only, or busy: the -wal is left as SQLite leaves it
            db.execute("PRAGMA busy_timeout = 200")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return said


def opened_in_place(path: Path, connect: Callable[[], sqlite3.Connection],
                    prepare: Callable[[sqlite3.Connection], None]) -> tuple[sqlite3.Connection, tuple[int, int] | None]:
    """A connection to the file at `path`, `prepare`d, and the identity of the file it opened. `prepare` may wait
    for another writer's lock (`lamar export --force` holds it across its rename) and then write the schema into
    the file replaced meanwhile, through a `-wal` and `-shm` named by the path, which every other process would
    take for the new file's own: those are folded away and the file now at the path is opened instead."""
    refuse_orphan_wal(path)
    tries = 3
    while True:
        db = connect()
        opened = file_identity(path)
        prepare(db)
        tries -= 1
        # Deleted rather than replaced, or replaced each time: its first call says so, as for an open store.
        if let_go_if_moved(db, path, opened) is None or not tries or file_identity(path) is None:
            return db, opened
        db.close()  # as the last connection to the replaced file, SQLite removes its -wal and -shm


def refuse_orphan_wal(path: Path) -> None:
    """Refuse to make a store at `path` beside a `-wal` that holds commits. SQLite writes a database's first page
    before its `-wal`, so such a `-wal` belongs to a database moved or deleted without it (its writers killed, so no
    close folded it in), and SQLite deletes it on opening an empty file: the only copy of those commits.

    Raises:
        StoreError: the `-wal` is not empty and `path` holds no database (missing or 0 bytes).
    """
    if wal_size(path) == 0:  # looked at before the file: a database being made has its first page by then
        return
    try:
        if os.path.getsize(path) > 0:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return  # the open says what is wrong with the path
    raise StoreError(f"{path}-wal lies beside {path}, which holds no store: it holds the latest commits of a SQLite "
                     f"store that was moved, renamed or deleted without it, and opening {path} would delete it. "
                     f"Move it (and {path}-shm) back beside the database it belongs to, under that database's name "
                     "plus -wal, and open that; delete it only if that database is gone for good")


def wal_size(path: object) -> int:
    try:
        return os.path.getsize(f"{path}-wal")
    except OSError:
        return 0


def begin(db: sqlite3.Connection, mode: str = "") -> None:
    """BEGIN a transaction (`mode`: "", "IMMEDIATE"). A Ctrl+C that lands between a BEGIN and the
    try that ends it leaves that transaction open, and SQLite would refuse this BEGIN as nested;
    nothing of it was committed, so it is rolled back, as closing the connection would."""
    if db.in_transaction:
        db.execute("ROLLBACK")
    db.execute(f"BEGIN {mode}".rstrip())


def cannot_write(path: Path, exc: sqlite3.OperationalError) -> str | None:
    """Why opening failed, when it is that the file, its folder or the mount cannot be written here:
    read-only, or no room for the `-shm` SQLite makes beside it (a full disk, a file size limit). It
    is what a write to the store, opened read-only instead, says; None for any other failure."""
    text = str(exc).lower()
    if "disk is full" in text or "disk i/o error" in text:
        return (f"{path} cannot be written: its disk is full, or the file is over this process's size limit "
                f"({exc}); it was opened read-only and left untouched: free some space, then open it again")
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return unwritable(path)
    return None


def unwritable(path: Path) -> str:
    """What a write to the store at `path`, which this process cannot write, says."""
    sides = [f"{path}{suffix}" for suffix in ("-wal", "-shm")
             if os.path.exists(f"{path}{suffix}") and not os.access(f"{path}{suffix}", os.W_OK)]
    if sides and os.access(path, os.W_OK):
        # SQLite writes the file only through its -wal and -shm, which another user's writer made (with its own
        # owner and the file's mode at the time): deleting them would lose the commits the -wal still holds.
        return (f"{path} can be written here but its {' and '.join(sides)} cannot (made by a writer run as another "
                f"user, or made read-only since): give this user write access to them (see `ls -l {' '.join(sides)}`)"
                f", or write as the user who owns them; never delete them, the -wal may hold commits the file lacks")
    return f"{path} cannot be written (read-only file, folder or mount); {base.WRITABLE_COPY}"


def copy_failure(path: Path, exc: OSError | sqlite3.Error) -> StoreError:
    """The error when a store this process cannot write could not be read from a private copy either."""
    side = getattr(exc, "filename", None)
    if isinstance(exc, PermissionError) and side in (f"{path}-wal", f"{path}-shm"):
        # The file itself may be fine: a side file another user's writer made, or whose mode changed since.
        return StoreError(f"cannot read {path}: this user may not read or write its {side} ({exc.strerror}; made "
                          "by a writer run as another user, or its mode changed since); nothing was read or written: "
                          f"give this user read and write access to it (see `ls -l {side}`), or open the store as "
                          "the user who owns it; never delete it, a -wal may hold commits the file lacks")
    return StoreError(f"cannot read {path}: it cannot be written here, a read-only open would miss committed events "
                      f"(in its write-ahead log {path}-wal, or a writer's to come), and a private copy failed ({exc}); "
                      "open it once where it can be written")


def write_advice(path: Path, exc: sqlite3.Error) -> str:
    """What to do when SQLite refused a write as read-only (it opens a file this process may not write, in a
    folder it may, read-only without a word, so only a write finds out) or as a full disk; "" for any other."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == sqlite3.SQLITE_READONLY:
        return f"; {unwritable(path)}"
    if code == sqlite3.SQLITE_FULL:
        return f"; {base.FULL_DISK}"
    if code == sqlite3.SQLITE_IOERR:  # what SQLite calls a write past the file size limit (EFBIG), among others
        return f"; if its disk is full (or the file is over this process's size limit): {base.FULL_DISK}"
    return ""


# The Python API's advice, carried as the refusal's `advice`: the command line, which has no timeout to pass,
# puts its own in its place, found by this value.
BUSY_ADVICE = "try again once that writer is done, or pass a longer timeout="


def unmade(path: Path, cause: sqlite3.Error) -> StoreError:
    """The error when SQLite made (or found) an empty file but could not set the store up in it."""
    return StoreError(f"cannot make a store at {path}: {cause}; nothing was stored: free some space, or name a "
                      "writable file (with a shorter name)")


def open_failure(path: Path, exc: sqlite3.Error | UnicodeDecodeError, timeout: float) -> StoreError:
    """The error that says why the file at `path` could not be opened as a store, and what to do."""
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return advised(StoreError, f"cannot open {path}: another connection holds its lock ({exc}) past the "
                       f"{timeout:g} s wait; the file was left untouched: ", BUSY_ADVICE)
    if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc) and _unreadable(path):
        return StoreError(f"cannot open {path}: this process may not read it (permission denied; {exc}); the file "
                          f"was left untouched: give the user who runs Lamar read and write access to it and its "
                          f"folder (see `ls -l {path}`), or name another store")
    if isinstance(exc, sqlite3.OperationalError):
        return StoreError(f"cannot open {path}: {exc}")
    if file_kind(path) == "json":
        return CorruptStore(f"{path} is a Lamar JSON store, not SQLite; it was left untouched: open it by a .json "
                            "path (rename it), or copy it into SQLite with `lamar export`")
    return CorruptStore(f"{path} is not a readable Lamar SQLite store ({exc}); it was left untouched: name another "
                        "file, or restore it from a backup")


def refuse_triggers(db: sqlite3.Connection, path: Path) -> None:
    """Refuse a store that holds a trigger: Lamar makes none, and one can drop or rewrite what Lamar writes.

    A store shared in a repository or a folder others write may carry one that, say, drops every bad outcome
    as it is written, so that no lesson is ever proven harmful; its checksums would hold, since it writes nothing.

    Raises:
        CorruptStore: naming the triggers and how to drop them.
    """
    names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")]
    if names:
        import shlex

        # The names are the store's, so anyone's: quoted for SQL and the whole for the shell, the command given
        # to paste drops the triggers and does nothing else, whatever quotes or semicolons a name holds.
        drops = "; ".join("DROP TRIGGER \"" + name.replace('"', '""') + '"' for name in names)
        raise CorruptStore(f"{path} holds {'a trigger' if len(names) == 1 else 'triggers'} "
                           f"({', '.join(f'trigger {name}' for name in names)}), and Lamar makes none: a trigger "
                           "can drop or change the events Lamar writes, so the store was left untouched. If you made "
                           f"it, drop it (sqlite3 {shlex.quote(str(path))} {shlex.quote(drops)}); else the file was "
                           "changed by someone else: restore it from a copy you trust")


def _unreadable(path: Path) -> bool:
    """Whether reading the file at `path` is refused. SQLite says only "unable to open database file",
    as for a missing folder; `os.access` would answer for the real user, not for this process."""
    try:
        with open(path, "rb"):
            return False
    except PermissionError:
        return True
    except OSError:
        return False


def write_failure(path: Path, exc: sqlite3.Error, timeout: float) -> StoreError:
    """The error when a write cannot begin: mostly another writer's lock, held past the wait."""
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return advised(StoreError, f"cannot write {path}: another connection holds its lock ({exc}) past the "
                       f"{timeout:g} s wait; nothing was written: ", base.WRITER_AGAIN)
    return StoreError(f"cannot write {path}: {exc}{write_advice(path, exc)}")
