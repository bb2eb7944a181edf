"""The lock a store's writers take at a path, held while `lamar export --force` looks a last time at the file it
replaces there and renames its copy over it: a writer's first write into that file lands before or after, never
in between."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

_WAIT = 10.0  # seconds to wait for a writer that holds the lock (a write takes milliseconds)
_HEAD = 4096  # bytes a store is known by (`lamar.store.files.head_kind`)


@contextlib.contextmanager
def writers_held(path: Path, suffix: str) -> Iterator[bytes | None]:
    """Hold the lock that the writers of a store at `path` take, and yield the first bytes of the file there as
    read under it (None: no file there). `suffix` names the backend its writers use: the JSON store's writers lock
    the `.lock` file beside it, and under that lock load a file replaced since they last looked. SQLite's writers
    are not held back: one that opened the file before the rename writes through its handle to the file it opened,
    whichever lock it waited for, so holding SQLite's lock would only move its write after the rename.

    Raises:
        StoreError: a writer held the lock past the wait; nothing was replaced.
    """
    if suffix != ".json":
        yield _head(path)
        return
    from lamar.store.file_lock import lock_writers

    fd = lock_writers(path, path.with_name(path.name + ".lock"), _WAIT)
    try:
        yield _head(path)
    finally:
        os.close(fd)  # releases the flock


def _head(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(_HEAD)
    except FileNotFoundError:
        return None
    except OSError:  # there, and unreadable: no store Lamar can know
        return b""


__all__ = ["writers_held"]
