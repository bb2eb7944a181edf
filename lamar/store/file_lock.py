"""A `flock` waited for at most `timeout` seconds (the JSON store's writers' lock, a trace file's,
exclusive; a trace reader's, shared), so a stuck or stopped writer makes a write or read fail, not hang."""

from __future__ import annotations

import _thread
import errno
import os
import stat
from contextlib import suppress
from typing import TYPE_CHECKING

from lamar._errors import InvalidArgument, StoreError, advised
from lamar.storable import finite_number
from lamar.store import base
from lamar.store.files import lock_failed

if TYPE_CHECKING:
    from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock, so `needs_posix_locks` refuses what cannot be locked
    fcntl = None  # type: ignore[assignment]

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def needs_posix_locks(what: str) -> None:
    """Refuse `what` with a `StoreError` saying what to use instead, where there are no POSIX file locks."""
    if fcntl is None:
        raise StoreError(f"{what} needs POSIX file locks (fcntl), which this platform (Windows) lacks: keep the "
                         "lessons in a SQLite store instead (a path ending .db, such as \"lessons.db\"), "
                         "or in \":memory:\"")


def checked_timeout(timeout: float) -> float:
    """`timeout`, when it is a finite number of seconds >= 0; else an `InvalidArgument` (as SQLite's)."""
    if not (finite_number(timeout) and timeout >= 0):
        raise InvalidArgument(f"timeout is the seconds to wait for another writer's lock, a finite number "
                              f">= 0; got {timeout!r}")
    return float(timeout)


def lock_writers(path: Path, lock: Path, timeout: float) -> int:
    """A descriptor of `lock` holding its exclusive `flock` (closing it releases the lock).

    Raises:
        StoreError: the lock file cannot be opened or locked, or another holder kept the lock past
            `timeout` seconds.
    """
    try:
        # Never through a link: the lock's name is foreseeable, and a write notes in it where it starts, so in a
        # folder others may write a link planted there would have that note written over another file's head.
        fd = exclusive(lock, timeout, flags=NOFOLLOW)
        if fd is not None and not stat.S_ISREG(os.fstat(fd).st_mode):  # a pipe: opened, but no note fits in it
            os.close(fd)
            raise OSError(errno.EINVAL, "not a file", str(lock))
    except OSError as exc:
        raise StoreError(lock_failed(path, lock, exc)) from exc
    if fd is None:
        raise advised(StoreError, f"cannot write {path}: another process holds its lock ({lock}) past the "
                      f"{timeout:g} s wait; nothing was written: ", base.WRITER_AGAIN)
    return fd


def exclusive(lock: Path, timeout: float, *, flags: int = 0, mode: int = 0o644) -> int | None:
    """A descriptor of `lock` (opened read-write with `flags`, created with `mode`) holding its
    exclusive `flock`, or None when another holder kept the lock past `timeout` seconds.

    Raises:
        OSError: the file cannot be opened or locked.
        StoreError: this platform has no POSIX file locks.
    """
    needs_posix_locks(f"locking {lock}")
    return _locked(os.open(lock, os.O_RDWR | os.O_CREAT | flags, mode), fcntl.LOCK_EX, timeout)


def shared(fd: int, timeout: float) -> int | None:
    """A duplicate of open `fd` holding a shared `flock` of its file (a reader's, that waits out a
    writer mid-write), or None when a writer kept its lock past `timeout` seconds. The duplicate shares
    the lock: `flock(dup, LOCK_UN)` lets go of it.

    Raises:
        OSError: the file cannot be locked.
    """
    return _locked(os.dup(fd), fcntl.LOCK_SH, timeout)


def _locked(fd: int, operation: int, timeout: float) -> int | None:
    """`fd`, or the descriptor of an earlier wait for the same lock, holding the `flock` `operation`
    asks for, or None when a holder kept the lock past `timeout` seconds (`fd` is then closed)."""
    try:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:  # another holder: wait for it below
            pass
        if timeout == 0:
            os.close(fd)
            return None
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino, operation, fcntl.fcntl(fd, fcntl.F_GETFL))
    except BaseException:
        os.close(fd)
        raise
    wait = _adopted(key)
    if wait is None:
        wait = _Wait(fd, operation, key)
    else:
        os.close(fd)  # the earlier wait's descriptor stands in for it
    return wait.result(min(timeout, _thread.TIMEOUT_MAX))


# Waits whose callers gave up (or were interrupted), by lock file, operation and open flags:
# the next wait for the same lock takes one over rather than start another.
_parked: dict[tuple[int, int, int, int], list[_Wait]] = {}
_live: set[_Wait] = set()  # the waits whose threads have not ended (parked ones too)
_guard = _thread.allocate_lock()  # over _parked, _live and each wait's `parked` and `outcome`


class _Wait:
    """A blocking `flock` of `fd` in a thread of its own, waited for by one caller at a time.

    The kernel's wait, not polling: a poller looks only now and then, and a writer that lets go
    and locks again at once keeps the lock from it. A blocked `flock` cannot be called off, so a
    caller that gives up parks the wait instead: the next wait for the same lock takes it over, and
    when the lock comes with no caller, the thread lets go of it at once. So a holder that never
    lets go costs a process one thread and one descriptor per lock, not one per write given up on.
    """

    def __init__(self, fd: int, operation: int, key: tuple[int, int, int, int]) -> None:
        import threading  # only when a lock is contended

        self.fd, self.key = fd, key
        self.parked = False
        self.outcome: bool | OSError | None = None
        self.done = _thread.allocate_lock()
        self.done.acquire()
        with _guard:
            _forget_at_fork()
            _live.add(self)
        try:
            threading.Thread(target=self._wait, args=(operation,), name="lamar-flock-wait", daemon=True).start()
        except BaseException:
            with _guard:
                _live.discard(self)
            os.close(fd)
            raise

    def _wait(self, operation: int) -> None:
        outcome: bool | OSError
        try:
            fcntl.flock(self.fd, operation)
            outcome = True
        except OSError as exc:
            outcome = exc
        with _guard:
            _live.discard(self)
            if self.parked:  # no caller wants it: let go of the lock, and end
                waits = _parked[self.key]
                waits.remove(self)
                if not waits:
                    del _parked[self.key]
                os.close(self.fd)
                return
            self.outcome = outcome
        self.done.release()

    def result(self, timeout: float) -> int | None:
        """The descriptor holding the lock, or None when it did not come within `timeout` seconds
        (the wait is then parked).

        Raises:
            OSError: the lock could not be taken.
        """
        try:
            self.done.acquire(timeout=timeout)
        except BaseException:  # a Ctrl+C while waiting
            if self._settle() is not None:
                os.close(self.fd)  # the wait ended first: the descriptor is still ours
            raise
        outcome = self._settle()
        if isinstance(outcome, OSError):
            os.close(self.fd)
            raise outcome
        return None if outcome is None else self.fd

    def _settle(self) -> bool | OSError | None:
        """The wait's outcome, or None (the wait then parked) when it has none yet."""
        with _guard:
            if self.outcome is None:
                self.parked = True
                _parked.setdefault(self.key, []).append(self)
            return self.outcome


def _adopted(key: tuple[int, int, int, int]) -> _Wait | None:
    """A parked wait for the same lock, now the caller's, or None."""
    with _guard:
        waits = _parked.get(key)
        if not waits:
            return None
        wait = waits.pop()
        if not waits:
            del _parked[key]
        wait.parked = False
        return wait


_watching_forks = False


def _forget_at_fork() -> None:
    """Have a forked child close its copies of the waiting descriptors: a lock belongs to the open
    file, so a copy kept in a child would hold it, once the wait takes it, for as long as the child
    lives, and the child has none of the threads that let go of it. (Called holding `_guard`.)"""
    global _watching_forks
    if not _watching_forks:
        _watching_forks = True
        os.register_at_fork(before=_guard.acquire, after_in_parent=_guard.release, after_in_child=_in_child)


def _in_child() -> None:
    for wait in _live:
        with suppress(OSError):
            os.close(wait.fd)
    _live.clear()
    _parked.clear()
    _guard.release()  # taken before the fork, by the thread that forked: the child's one thread


__all__ = ["NOFOLLOW", "checked_timeout", "exclusive", "fcntl", "lock_writers", "needs_posix_locks", "shared"]
