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
    from typing import BinaryIO

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


def not_a_file(path: str | os.PathLike[str]) -> str | None:
    """What is at `path` when something is there but no file (through a link): "a folder", "a pipe", a link
    that leads nowhere; None when nothing is there or a file is."""
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None if not os.path.islink(path) else "a symbolic link that leads nowhere (its target is gone)"
    except OSError:
        return "a symbolic link that leads nowhere (a loop)" if os.path.islink(path) else None
    if stat.S_ISREG(mode):
        return None
    return "a folder" if stat.S_ISDIR(mode) else "a pipe" if stat.S_ISFIFO(mode) else "a device or a socket"


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened to read, when it is a file. Raises OSError otherwise: a pipe planted beside a store
    would hold a plain open until some writer came, for ever."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def prepare(path: Path, *, beside: int = 0, made_private: bool = False, sides: tuple[str, ...] = ()) -> None:
    """Make the folder of a store file not made yet; refuse a path that cannot be one. In ~/.lamar the
    store's folders are made (or made again) readable by this user alone.

    Args:
        path: the store file.
        beside: the most bytes the store adds to the file's name for the files it keeps beside it.
        made_private: in ~/.lamar, make a missing file here, empty and 0600, for a store (SQLite) that
            would otherwise create it with the umask's mode.
        sides: the suffixes of the files the store's engine opens beside it by itself (SQLite's).

    Raises:
        StoreError: the path names a folder, a pipe (whose open would wait for a writer for ever)
            or a device, or no file can have it or the files beside it (too long, a loop of links);
            or one of `sides` is there and no file.
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
    from lamar.atomic import in_lamar_home, own_folder

    private = in_lamar_home(path)
    if mode is None:
        try:
            own_folder(path.parent) if private else path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for {path}: {exc}") from exc
        if private and made_private:
            _made_private(path)
    elif private:  # a store there before Lamar closed its folders, or a folder opened since
        own_folder(path.parent)
    if mode is not None and not stat.S_ISREG(mode):
        raise StoreError(f"{path} is not a file (a folder, a pipe or a device) but a store is one; it was left "
                         "untouched: name a file, or move that one away")
    for suffix in sides:
        # SQLite would wait for ever on a pipe there, and call the rest a read-only file or a full disk.
        what = not_a_file(f"{path}{suffix}")
        if what:
            raise StoreError(f"{path}{suffix} is {what}, where the store {path} keeps a file; nothing was read or "
                             f"written: move {path}{suffix} away (it holds no commits), then open the store again")


def _made_private(path: Path) -> None:
    """An empty file at `path`, 0600 whatever the umask: SQLite makes its database in it, and its -wal and -shm
    with the database file's mode. Where it cannot be made (a link, a race), SQLite makes the file, or says why not."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return
    try:
        if hasattr(os, "fchmod"):  # Windows before 3.13 has none, nor POSIX modes
            os.fchmod(fd, 0o600)  # not through os.open's mode alone, which the umask narrows
    finally:
        os.close(fd)


# What opening a link with O_NOFOLLOW raises: ELOOP on Linux and macOS, EMLINK on FreeBSD.
_LINK = (errno.ELOOP, errno.EMLINK)

# The refusals a read-only file, folder or mount (or an immutable file) gives a writer.
_READ_ONLY = (errno.EACCES, errno.EPERM, errno.EROFS)


# The refusals a full disk, a full quota or the file size limit gives a writer.
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def refusal_advice(path: Path, exc: OSError) -> str:
    """What to do about the write to `path` refused with `exc` ("; ..."): for a read-only file, folder or mount, or a
    full disk; "" for any other refusal."""
    from lamar.store.base import FULL_DISK, WRITABLE_COPY

    if exc.errno in _READ_ONLY:
        return f"; {path} cannot be written (read-only file, folder or mount); {WRITABLE_COPY}"
    if exc.errno in _FULL:
        return f"; {FULL_DISK}"
    return ""


def write_failed(path: Path, exc: OSError) -> str:
    """What a JSON store says when a write to `path` failed with `exc`: the cause, that the file
    holds what it held, and for a read-only file, folder or mount, or a full disk, what to do."""
    return (f"could not write {path}: {exc.strerror or exc}; its previous contents are intact"
            f"{refusal_advice(path, exc)}")


def lock_failed(path: Path, lock: Path, exc: OSError) -> str:
    """What a JSON store says when its lock file `lock` could not be opened for a write."""
    if exc.errno in _LINK and os.path.islink(lock):
        return (f"cannot lock {path}: its lock {lock} is a symbolic link, which a writer never opens (it would "
                f"write into the file the link names); nothing was written: remove {lock}, and the next write "
                "makes the lock anew")
    what = not_a_file(lock)
    if what:
        return (f"cannot lock {path}: its lock {lock} is {what}, not a file; nothing was written: move {lock} "
                "away, and the next write makes the lock anew")
    return f"cannot lock {path} (via {lock}): {exc.strerror or exc}{refusal_advice(path, exc)}"


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
        if mode is not None and hasattr(os, "fchmod"):  # Windows before 3.13 has none, nor POSIX modes
            os.fchmod(fd, mode)  # not through os.open's mode, which the umask narrows
    except OSError:
        os.close(fd)
        raise
    return fd


def now_at(path: Path, ino: int, dev: int | None) -> tuple[str | None, bool]:
    """Where the file opened at `path` (inode `ino` on device `dev`) is now, and whether it is known deleted:
    through a descriptor this process holds on it (Linux's /proc names its path, or its link count says it is
    gone), else by a file of that inode in the same folder (a rename there); (None, False) when unknown."""
    fds = "/proc/self/fd"
    with contextlib.suppress(OSError):
        for name in os.listdir(fds):
            try:
                found = os.stat(f"{fds}/{name}")
                if found.st_ino != ino or (dev is not None and found.st_dev != dev):
                    continue
                if found.st_nlink == 0:
                    return None, True
                return os.readlink(f"{fds}/{name}"), False
            except OSError:
                continue
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        here = os.stat(path.parent).st_dev if dev is None else dev
        for entry in entries:
            if entry.inode() == ino and entry.stat(follow_symlinks=False).st_dev == here and entry.is_file():
                return entry.path, False
    return None, False


def gone(path: Path, ino: int, dev: int | None = None, *, wal: bool = False) -> str:
    """What a store says when its file (inode `ino`) is no longer at `path`: moved or renamed (where to, when the
    OS tells), deleted, or either; `wal`: a SQLite store, whose latest writes a rename may leave behind. Opening
    `path` again would start a new, empty store there, which looks like the lessons were lost; so each says what
    keeps them."""
    new, deleted = now_at(path, ino, dev)
    empty = f"opening {path} again would start a new, empty store there, without its lessons"
    if new is not None and new != str(path) and wal and os.path.exists(f"{path}-wal"):
        # SQLite keeps the latest writes in a file named after the path, which a rename of the store leaves behind
        return (f"{path} was moved or renamed to {new} while open; nothing was read or written: its latest writes "
                f"are still in {path}-wal, beside the old name, so move it back to {path} and open the store again "
                f"({empty}); to rename a store, first stop every process that has it open")
    if new is not None and new != str(path):
        return (f"{path} was moved or renamed to {new} while open; nothing was read or written: open the store at "
                f"{new}, or move it back to {path} and open the store again ({empty})")
    if deleted:
        return (f"{path} was deleted while open; nothing was read or written: restore it from a backup to {path}, "
                f"then open the store again (without one, {empty})")
    return (f"{path} was deleted, moved or renamed while open; nothing was read or written: if it was moved, open "
            f"the store at its new path, or move it back and open the store again; else restore it from a backup "
            f"({empty})")


__all__ = ["JSON_BESIDE", "create_like", "file_kind", "gone", "head_kind", "lock_failed", "now_at", "prepare",
           "write_failed"]
