"""Reading an SQLite store this process cannot write from a private copy, where SQLite would read it
in place only by making a `-wal` and `-shm` beside it that it can never remove."""

from __future__ import annotations

import _thread
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

_TRIES = 3  # copies checked against a writer before reading the file in place instead
# The bytes of a file that SQLite's unix VFS read-locks for each connection reading it (SHARED_FIRST, SHARED_SIZE):
# the last connection to close write-locks them to checkpoint, then deletes the -wal and -shm.
_SHARED_FIRST, _SHARED_SIZE = 0x40000002, 510
_Stat = tuple[int, int, int, int, int]  # device, inode, size, mtime and ctime
# The file's, its -wal's (None: none), and whether a -shm is beside it.
State = tuple[_Stat, _Stat | None, bool]


def makes_files(path: Path) -> bool:
    """Whether SQLite may read `path` in place only through a `-wal` and `-shm` it makes beside it: a file this
    process cannot write, in a folder it can (`wal_mode` tells the rest).

    SQLite reads a WAL-mode file through its `-shm` (a writer may come) and makes both when the folder
    allows; a read-only connection cannot checkpoint, so it never removes them. Made with the file's
    mode and owned by whoever read, they then refuse the file's own writer ("attempt to write a
    readonly database") once the file is writable again. When they are there already, SQLite reads
    through them and makes nothing.
    """
    return not os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def may_change(path: Path) -> bool:
    """Whether a writer may still change `path`, a file SQLite can read here only as immutable (no `-shm` can be
    made beside it), which reads it as it is now for good: a WAL-mode file not on a read-only mount."""
    try:
        if os.statvfs(path).f_flag & os.ST_RDONLY:
            return False
        hold = Hold.take(path)
    except OSError:
        return False
    if hold is None:  # a connection holds it alone: a writer
        return True
    try:
        return hold.wal_mode()
    finally:
        hold.release()


def writer_files(path: Path) -> bool:
    """Whether a `-wal` and a `-shm` are beside `path`: a writer has it open (or was killed with it open)."""
    return all(os.path.lexists(f"{path}{suffix}") for suffix in ("-wal", "-shm"))


class Hold:
    """`path` open for reading, with the bytes SQLite's readers lock read-locked: while it is held, no connection can
    take the lock by which the last one to close deletes the `-wal` and `-shm` (it leaves them, as it does for any
    reader), so what is beside the file now stays there.

    POSIX locks belong to the process, and closing any descriptor of a file drops all of them, SQLite's own
    included: one `Hold` per file is shared by every store of this process (`take`, `release`), and the file
    is read through its descriptor, never opened again while it is held.
    """

    def __init__(self, file: BinaryIO, key: tuple[int, int]) -> None:
        self.file, self.key, self.count = file, key, 1

    @classmethod
    def take(cls, path: Path) -> Hold | None:
        """The hold of `path`; None when a connection has its readers' bytes write-locked (the last one closing,
        checkpointing and deleting its `-wal` and `-shm`, or a writer holding the file alone).

        Raises:
            OSError: the file cannot be opened.
        """
        with _HELD_LOCK:
            found = os.stat(path)
            held = _HELD.get((found.st_dev, found.st_ino))
            if held is not None:
                held.count += 1
                return held
            file = open(path, "rb")  # noqa: SIM115 - kept open until the last release
            opened = os.fstat(file.fileno())
            try:
                import fcntl
            except ImportError:  # pragma: no cover - no POSIX locks (Windows), where an open file is not deleted
                pass
            else:
                try:
                    fcntl.lockf(file, fcntl.LOCK_SH | fcntl.LOCK_NB, _SHARED_SIZE, _SHARED_FIRST)
                except OSError:
                    file.close()
                    return None
            held = _HELD[(opened.st_dev, opened.st_ino)] = cls(file, (opened.st_dev, opened.st_ino))
            return held

    def release(self) -> None:
        with _HELD_LOCK:
            self.count -= 1
            if self.count == 0:
                del _HELD[self.key]
                self.file.close()

    def wal_mode(self) -> bool:
        """Whether the file held is an SQLite file in WAL mode."""
        header = os.pread(self.file.fileno(), 20, 0)
        # bytes 18 and 19 of the header: 2 and 2 for a file in WAL mode
        return header.startswith(b"SQLite format 3\0") and header[18:20] == b"\x02\x02"

    def copy_to(self, target: str) -> None:
        """Copy the file held into `target`, through the descriptor held."""
        fd = self.file.fileno()
        with open(target, "wb") as out:
            offset = 0
            while chunk := os.pread(fd, 1 << 20, offset):
                out.write(chunk)
                offset += len(chunk)


_HELD: dict[tuple[int, int], Hold] = {}  # by device and inode
_HELD_LOCK = _thread.allocate_lock()


def hold_when_closed(path: Path, timeout: float) -> Hold | None:
    """`Hold.take`, waiting up to `timeout` seconds while a connection closing holds the file (it checkpoints,
    deletes its `-wal` and `-shm`, and lets go), as SQLite waits for a lock. None when it is held past that.

    Raises:
        OSError: the file cannot be opened.
    """
    import time

    deadline, pause = time.monotonic() + timeout, 0.001
    while (hold := Hold.take(path)) is None:
        if time.monotonic() + pause > deadline:
            return None
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return hold


def private_copy(path: Path, hold: Hold | None = None) -> tuple[str, State, bool]:
    """A private temporary folder holding a copy of `path` and its `-wal` (when there is one), the file's state
    just before, and whether the copy is checked: the same `path` held (`hold`) all along, no `-shm` beside it and
    nothing changed while the copy was made.

    A writer makes a `-shm` when it opens the file, before it changes anything, and changes the file only by a
    checkpoint, which moves its modification time (and making the file writable again, its change time); held,
    the file keeps the `-shm` of any writer that opened it meanwhile, and the `-wal` it recovers the copy from.

    Raises:
        OSError: the copy failed.
    """
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="lamar-ro-")
    copy = os.path.join(folder, path.name)
    held = hold or Hold.take(path)
    try:
        before = _state(path)
        if held is None:
            shutil.copyfile(path, copy)
        else:
            held.copy_to(copy)
        if before[1] is not None:
            shutil.copyfile(f"{path}-wal", f"{copy}-wal")  # its own file: copying it drops no lock of the file's
        same = held is not None and held.key == before[0][:2]
        return folder, before, same and not before[2] and _state(path) == before
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        if held is not None and hold is None:
            held.release()


class Copies:
    """The private copy a store reads, in `folder`, and the file's state when it was taken (`copied`): a newer copy
    replaces it once a writer changed the file, and `remove` deletes the one read last. Read in place through
    a writer's `-wal` and `-shm`, the store keeps the file held (`Hold`), so that they stay while it reads."""

    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path, self.timeout = path, timeout  # the seconds to wait for a connection closing (`hold_when_closed`)
        self.folder: str | None = None
        self.copied: State | None = None
        self._hold: Hold | None = None
        self._gone: Any = None  # the copy's removal when the store is never closed (`_switch`)

    def read(self, use: Callable[[str], None]) -> None:
        """Take a `private_copy` and `use` the file in it (open it, or raise to refuse it): a checked one when
        one of `_TRIES` is, else the last, which the next `follow` replaces.

        Raises:
            OSError: the copy failed, or a connection held the file past the timeout; or what `use` raised. The
                copy read until then is read on.
        """
        for _ in range(_TRIES - 1):
            if self._copy(use, in_place=False):
                return
        folder, before, _ = private_copy(self.path)
        self._switch(folder, before, use)

    def instead_of_in_place(self, use: Callable[[str], None]) -> bool:
        """Read a checked copy (`use`) of a file SQLite would read in place only through a `-wal` and `-shm` it
        may make beside it, the store as of now; False (read it in place) for any other file, for one a writer
        has open (then held until `release`, so that its `-wal` and `-shm` stay), or one a writer kept changing."""
        if not makes_files(self.path):
            return False
        for _ in range(_TRIES):
            try:
                if self._copy(use, in_place=True):
                    return self.folder is not None
            except OSError:  # not a file SQLite makes a -wal for, held past the timeout, or its copy failed
                return False
        return False

    def follow(self, use: Callable[[str], None]) -> None:
        """Read a new copy (`use`) once a writer changed the file since this one was taken and it can be checked;
        the file itself (`use` of its `uri`) once a writer has it open.

        Raises:
            OSError: or what `use` raised; the copy read until then is read on.
        """
        if self.copied is not None and _state(self.path) != self.copied:
            self._copy(use, in_place=True)

    def _copy(self, use: Callable[[str], None], *, in_place: bool) -> bool:
        """Hold the file and read what is beside it: with `in_place`, the file itself (`use` of its `uri`) when a
        writer has it open, SQLite reading the commits still in its `-wal` through the `-wal` and `-shm` held there;
        else a checked copy. False when neither was read: the copy changed while it was made.

        Raises:
            OSError: a connection held the file past the timeout (`TimeoutError`), the copy failed, or what `use`
                raised.
        """
        hold = hold_when_closed(self.path, self.timeout)
        if hold is None:
            raise TimeoutError(f"{self.path} is held by another connection (one holding it alone, or closing)")
        try:
            if in_place and self.copied is None and not hold.wal_mode():  # opening: SQLite reads it in place
                raise OSError(f"{self.path} is not an SQLite file in WAL mode")
            if in_place and writer_files(self.path):
                if self.copied is not None:  # a store opening reads the file in place itself
                    use(uri(self.path, "mode=ro"))
                    self.remove()
                    self.copied = None
                self._hold, hold = hold, None
                return True
            folder, before, checked = private_copy(self.path, hold)
            if not checked:
                import shutil

                shutil.rmtree(folder, ignore_errors=True)
                return False
            self._switch(folder, before, use)
            return True
        finally:
            if hold is not None:
                hold.release()

    def _switch(self, folder: str, copied: State, use: Callable[[str], None]) -> None:
        import shutil

        try:
            use(os.path.join(folder, self.path.name))
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        import weakref

        old, self.folder, self.copied = self.folder, folder, copied
        if self._gone is not None:
            self._gone.detach()
        # A store never closed (a script without `with`, an engine left to the garbage collector) must not
        # leave a copy of the whole file in the temporary folder: it goes when the store does, or Python exits.
        self._gone = weakref.finalize(self, shutil.rmtree, folder, True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def remove(self) -> None:
        """Delete the copy read last."""
        if self._gone is not None:
            self._gone()  # removes the folder once: the removal at exit has nothing left to do
            self._gone = None
        self.folder = None

    def release(self) -> None:
        """Delete the copy and let the file go: the store's connection to it is closed."""
        self.remove()
        if self._hold is not None:
            self._hold.release()
            self._hold = None


def uri(path: Path, flags: str) -> str:
    """The URI SQLite opens `path` by with `flags` (`mode=ro`)."""
    import urllib.parse

    return f"file:{urllib.parse.quote(str(path.resolve()))}?{flags}"


def _stat(name: str | Path) -> _Stat:
    found = os.stat(name)
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns


def _state(path: Path) -> State:
    try:
        wal: _Stat | None = _stat(f"{path}-wal")
    except FileNotFoundError:
        wal = None
    return _stat(path), wal, os.path.lexists(f"{path}-shm")
