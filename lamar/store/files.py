"""The file stores' files: whether a path can hold one, and which backend a file holds, told by how
it opens: never by its name, nor by text further in (a store's lessons are free text, and may quote any marker)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from typing import TYPE_CHECKING

from lamar._errors import StoreError

if TYPE_CHECKING:
    from pathlib import Path

_SQLITE = b"SQLite format 3\x00"  # how every SQLite database file opens
_JSON_STORE = re.compile(rb'\A\s*\{\s*"format"\s*:\s*"lamar"\s*,')  # both versions open with it


def head_kind(head: bytes) -> str | None:
    """"sqlite" or "json" for a file's first bytes when they open a SQLite database or a Lamar
    JSON store, else None."""
    if head.startswith(_SQLITE):
        return "sqlite"
    return "json" if _JSON_STORE.match(head) else None


def file_kind(path: str | os.PathLike[str]) -> str | None:
    """`head_kind` of the file at `path` (None when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return head_kind(fh.read(4096))
    except OSError:
        return None


_NAME_MAX = 255  # bytes in one file name, on Linux's and macOS's file systems
# What a JSON store adds to its name for the files it keeps beside it, at the longest
# `.NAME.index.PID.tmp` (and `.state.`), with a PID of up to 7 digits (Linux's largest).
JSON_BESIDE = len("..index..tmp") + 7


def prepare(path: Path, *, beside: int = 0) -> None:
    """Make the folder of a store file not made yet; refuse a path that cannot be one.

    Args:
        path: the store file.
        beside: the most bytes the store adds to the file's name for the files it keeps beside it.

    Raises:
        StoreError: the path names a folder, a pipe (whose open would wait for a writer for ever)
            or a device, or no file can have it or the files beside it (too long, a loop of links).
    """
    size, longest = len(os.fsencode(path.name)), _NAME_MAX - beside
    if beside and size > longest:
        # Refused before any file is made: past it, a write fails part-way with "File name too long".
        raise StoreError(f"the store name {path.name} is {size} bytes long, and this store's name may be at "
                         f"most {longest} (a file name holds {_NAME_MAX}, and the files the store keeps beside "
                         f"it add up to {beside}): use a shorter name")
    try:
        mode: int | None = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # the folder's absence is reported below
        mode = None
    except OSError as exc:
        raise StoreError(f"cannot open {path}: {exc.strerror or exc}; name another path") from exc
    if mode is None:
        from lamar.atomic import in_lamar_home, own_folder

        try:
            own_folder(path.parent) if in_lamar_home(path) else path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for {path}: {exc}") from exc
    elif not stat.S_ISREG(mode):
        raise StoreError(f"{path} is not a file (a folder, a pipe or a device) but a store is one; it was left "
                         "untouched: name a file, or move that one away")


# What opening a link with O_NOFOLLOW raises: ELOOP on Linux and macOS, EMLINK on FreeBSD.
_LINK = (errno.ELOOP, errno.EMLINK)

# The refusals a read-only file, folder or mount (or an immutable file) gives a writer.
_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


def _advice(path: Path, exc: OSError) -> str:
    if exc.errno in _READ_ONLY:
        from lamar.store.base import WRITABLE_COPY

        return f"; {path} cannot be written (read-only file, folder or mount); {WRITABLE_COPY}"
    return ""


def write_failed(path: Path, exc: OSError) -> str:
    """What a JSON store says when a write to `path` failed with `exc`: the cause, that the file
    holds what it held, and for a read-only file, folder or mount what to do."""
    return f"could not write {path}: {exc.strerror or exc}; its previous contents are intact{_advice(path, exc)}"


def lock_failed(path: Path, lock: Path, exc: OSError) -> str:
    """What a JSON store says when its lock file `lock` could not be opened for a write."""
    if exc.errno in _LINK and os.path.islink(lock):
        return (f"cannot lock {path}: its lock {lock} is a symbolic link, which a writer never opens (it would "
                f"write into the file the link names); nothing was written: remove {lock}, and the next write "
                "makes the lock anew")
    return f"cannot lock {path} (via {lock}): {exc.strerror or exc}{_advice(path, exc)}"


def create_like(new: Path, path: Path) -> int:
    """Open `new` (made new) to write, with the permission bits of the store file `path` when there is
    one: a store its user made private (a chmod 600, a NamedTemporaryFile) stays so when a write swaps a new
    file in for it, and the files beside it, which hold its text too, are as private."""
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        from lamar.atomic import in_lamar_home

        mode = 0o600 if in_lamar_home(path) else None  # a new store in ~/.lamar is private, as all there
    # `new` is named after this process, which any user can see: in a folder others may write, a link planted
    # there would have the store's text (and its mode) written through it into another file of this user. So
    # whatever is there goes (a link is removed, never its target) and the file is made new, or not at all.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(new)
    fd = os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                 0o666 if mode is None else 0o600)
    try:
        if mode is not None:
            os.fchmod(fd, mode)  # not through os.open's mode, which the umask narrows
    except OSError:
        os.close(fd)
        raise
    return fd


__all__ = ["JSON_BESIDE", "create_like", "file_kind", "head_kind", "lock_failed", "prepare", "write_failed"]
