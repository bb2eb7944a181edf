"""Reading an SQLite store this process cannot write from a private copy, where SQLite would read it
in place only by making a `-wal` and `-shm` beside it that it can never remove."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

_TRIES = 3  # copies checked against a writer before reading the file in place instead
# A file's inode, size, mtime and ctime, and whether a -wal or -shm is beside it.
State = tuple[int, int, int, int, bool]


def leaves_files(path: Path) -> bool:
    """Whether reading `path` in place would leave a `-wal` and `-shm` beside it: a WAL-mode file this
    process cannot write, in a folder it can, with neither there yet.

    SQLite reads a WAL-mode file through its `-shm` (a writer may come) and makes both when the folder
    allows; a read-only connection cannot checkpoint, so it never removes them. Made with the file's
    mode and owned by whoever read, they then refuse the file's own writer ("attempt to write a
    readonly database") once the file is writable again. When they are there already, SQLite reads
    through them and makes nothing.
    """
    if os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
        return False
    if any(os.path.lexists(f"{path}{suffix}") for suffix in ("-wal", "-shm")):
        return False
    try:
        with open(path, "rb") as file:
            header = file.read(20)
    except OSError:
        return False
    # bytes 18 and 19 of the header: 2 and 2 for a file in WAL mode
    return header.startswith(b"SQLite format 3\0") and header[18:20] == b"\x02\x02"


def private_copy(path: Path, *, wal: bool) -> tuple[str, State | None]:
    """A private temporary folder holding a copy of `path`, and with `wal` of its write-ahead log; without
    `wal`, also the file's state when it was copied (`fresh_copy` compares it).

    Without `wal`, the copy is kept only if no writer touched the file while it was made: a writer in
    WAL mode makes a `-wal` before it changes anything, and changes the main file only by a checkpoint,
    which moves its modification time (and making the file writable again, its change time).

    Raises:
        OSError: the copy failed, or a writer changed the file during every try.
    """
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="lamar-ro-")
    copy = os.path.join(folder, path.name)
    try:
        if wal:
            shutil.copyfile(path, copy)
            shutil.copyfile(f"{path}-wal", f"{copy}-wal")
            return folder, None
        for _ in range(_TRIES):
            before = _state(path)
            shutil.copyfile(path, copy)
            if before[-1] is False and _state(path) == before:
                return folder, before
        raise OSError(f"{path} changed while it was copied")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def fresh_copy(path: Path, copied: State) -> tuple[str, State | None] | None:
    """A new `private_copy` of `path` when a writer changed it since the copy taken in state `copied`; None
    when none did, or when no copy can be checked now (a writer has it open: its `-wal` is there)."""
    try:
        if _state(path) == copied or not leaves_files(path):
            return None
        return private_copy(path, wal=False)
    except OSError:
        return None


class Copies:
    """The private copy a store reads, in `folder`, and the file's state when it was taken (`copied`): a
    newer copy replaces it once a writer changed the file, and `remove` deletes the one read last."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder: str | None = None
        self.copied: State | None = None

    def read(self, *, wal: bool, use: Callable[[str], None]) -> None:
        """Take a `private_copy` and `use` the file in it (open it, or raise to refuse it).

        Raises:
            OSError: the copy failed; or what `use` raised. The copy read until then is read on.
        """
        self._switch(private_copy(self.path, wal=wal), use)

    def instead_of_in_place(self, use: Callable[[str], None]) -> bool:
        """Read a copy (`use`) of a file that reading in place would leave a `-wal` and `-shm` beside, the store
        as of now; False (read it in place) for any other file, or one a writer kept changing."""
        if not leaves_files(self.path):
            return False
        try:
            self.read(wal=False, use=use)
        except OSError:
            return False
        return True

    def follow(self, use: Callable[[str], None]) -> None:
        """Read a new copy (`use`) once a writer changed the file since this one was taken and it can be checked;
        the file itself (`use` of its `uri`) once a writer has it open.

        Raises:
            OSError: or what `use` raised; the copy read until then is read on.
        """
        if self.copied is None:
            return
        if all(os.path.lexists(f"{self.path}{suffix}") for suffix in ("-wal", "-shm")):
            # A writer has the file open: the commits in its -wal reach the file only when it checkpoints,
            # and no copy taken meanwhile could be checked. SQLite reads them through the -wal and -shm
            # already there, making nothing, as a store opened now does; SQLite follows the file from then on.
            use(uri(self.path, "mode=ro"))
            self.remove()
            self.copied = None
            return
        fresh = fresh_copy(self.path, self.copied)
        if fresh is not None:
            self._switch(fresh, use)

    def _switch(self, taken: tuple[str, State | None], use: Callable[[str], None]) -> None:
        import shutil

        folder, copied = taken
        try:
            use(os.path.join(folder, self.path.name))
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        old, self.folder, self.copied = self.folder, folder, copied
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def remove(self) -> None:
        if self.folder is not None:
            import shutil

            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None


def uri(path: Path, flags: str) -> str:
    """The URI SQLite opens `path` by with `flags` (`mode=ro`)."""
    import urllib.parse

    return f"file:{urllib.parse.quote(str(path.resolve()))}?{flags}"


def _state(path: Path) -> State:
    found = os.stat(path)
    beside = any(os.path.lexists(f"{path}{suffix}") for suffix in ("-wal", "-shm"))
    return found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns, beside
