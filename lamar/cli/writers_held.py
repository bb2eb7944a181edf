"""The lock a store's writers take at a path, held while `lamar export --force` looks a last time at the file it
replaces there and renames its copy over it: a writer's first write into that file lands before or after, never
in between."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from lamar._errors import StoreError

_WAIT = 10.0  # seconds to wait for a writer that holds the lock (a write takes milliseconds)
_HEAD = 4096  # bytes a store is known by (`lamar.store.files.head_kind`)


@contextlib.contextmanager
def writers_held(path: Path, suffix: str) -> Iterator[bytes | None]:
    """Hold the lock that the writers of a store at `path` take, and yield the first bytes of the file there as
    read under it (None: no file there). `suffix` names the backend its writers use: the JSON store's writers lock
    the `.lock` file beside it, and load a file replaced since they last looked; SQLite's lock the file itself, and
    a Lamar store whose opening waited for the lock opens the file now there instead.

    Raises:
        StoreError: a writer held the lock past the wait; nothing was replaced.
    """
    if suffix == ".json":
        from lamar.store.file_lock import lock_writers

        fd = lock_writers(path, path.with_name(path.name + ".lock"), _WAIT)
        try:
            yield _head(path)
        finally:
            os.close(fd)  # releases the flock
    elif suffix in (".db", ".sqlite", ".sqlite3") and os.path.lexists(path):
        with _sqlite_exclusive(path) as head:
            yield head
    else:
        yield _head(path)


@contextlib.contextmanager
def _sqlite_exclusive(path: Path) -> Iterator[bytes | None]:
    """SQLite's exclusive lock on the file at `path`, which a writer's first transaction waits for. POSIX locks are
    the process's, and closing any descriptor of the file drops them: the file is read through a descriptor opened
    under the lock and closed only after the connection that holds it."""
    import sqlite3

    try:
        # mode=rw: a file removed meanwhile is not made anew by the lock's own open
        conn = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, timeout=_WAIT, isolation_level=None)
    except sqlite3.Error:
        conn = None  # removed since the caller looked (or no file SQLite opens, which no SQLite writer writes into)
    if conn is None:
        yield _head(path)  # None when it is gone: the copy is made new
        return
    fd = -1
    try:
        try:
            conn.execute("BEGIN EXCLUSIVE")
        except sqlite3.OperationalError as exc:
            if os.path.lexists(path):
                raise StoreError(f"cannot replace {path}: another process kept writing to it ({exc}) past "
                                 f"{_WAIT:g} s; nothing was replaced: run the export again") from exc
        except sqlite3.DatabaseError:
            pass  # no SQLite database: no SQLite writer can write into it either
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:  # removed meanwhile: nothing there to replace
            yield None
            return
        yield os.pread(fd, _HEAD, 0)
    finally:
        conn.close()  # rolls back (nothing was written) and lets the lock go, before the close below drops it
        if fd >= 0:
            os.close(fd)


def _head(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(_HEAD)
    except FileNotFoundError:
        return None
    except OSError:  # there, and unreadable: no store Lamar can know
        return b""


__all__ = ["writers_held"]
