"""A `flock` waited for at most `timeout` seconds (the JSON store's writers' lock, a trace file's,
exclusive; a trace reader's, shared), so a stuck or stopped writer makes a write or read fail, not hang."""

from __future__ import annotations

import _thread
import fcntl
import os
from typing import TYPE_CHECKING

from lamar._errors import InvalidArgument, StoreError
from lamar.storable import finite_number
from lamar.store.files import lock_failed

if TYPE_CHECKING:
    from _thread import LockType
    from pathlib import Path


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
        fd = exclusive(lock, timeout)
    except OSError as exc:
        raise StoreError(lock_failed(path, lock, exc)) from exc
    if fd is None:
        raise StoreError(f"cannot write {path}: another process holds its lock ({lock}) past the {timeout:g} s "
                         "wait; nothing was written: try again once that writer is done")
    return fd


def exclusive(lock: Path, timeout: float, *, flags: int = 0, mode: int = 0o644) -> int | None:
    """A descriptor of `lock` (opened read-write with `flags`, created with `mode`) holding its
    exclusive `flock`, or None when another holder kept the lock past `timeout` seconds.

    Raises:
        OSError: the file cannot be opened or locked.
    """
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
    """`fd` holding the `flock` `operation` asks for, or None when a holder kept the lock past `timeout`
    seconds (`fd` is then closed, or the waiting thread's to close)."""
    try:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:  # another holder: wait for it below
            pass
    except BaseException:
        os.close(fd)
        raise
    if timeout == 0:
        os.close(fd)
        return None
    return fd if _waited(fd, min(timeout, _thread.TIMEOUT_MAX), operation) else None


def _waited(fd: int, timeout: float, operation: int = fcntl.LOCK_EX) -> bool:
    """Whether a blocking `flock` of `fd`, in a thread of its own, got the lock within `timeout` seconds.

    The kernel's wait, not polling: a poller looks only now and then, and a writer that lets go
    and locks again at once keeps the lock from it. When the lock does not come in time, `fd` is
    the waiting thread's: it closes it (letting go of the lock) when its `flock` returns, which
    for a stopped holder is never; a thread and a descriptor per write given up on.
    """
    guard, done = _thread.allocate_lock(), _thread.allocate_lock()
    done.acquire()
    state: list[bool | OSError | None] = [None]  # the wait's outcome; False once the caller gave up

    def wait() -> None:
        outcome: bool | OSError
        try:
            fcntl.flock(fd, operation)
            outcome = True
        except OSError as exc:
            outcome = exc
        with guard:
            if state[0] is False:
                os.close(fd)  # the caller gave up on it: let go of a lock no one will use
                return
            state[0] = outcome
        done.release()

    _thread.start_new_thread(wait, ())
    try:
        done.acquire(timeout=timeout)
    except BaseException:  # a Ctrl+C while waiting
        if _settle(guard, state) is not None:
            os.close(fd)  # the wait ended first: the descriptor is still ours
        raise
    outcome = _settle(guard, state)
    if isinstance(outcome, OSError):
        os.close(fd)
        raise outcome
    return outcome is True


def _settle(guard: LockType, state: list[bool | OSError | None]) -> bool | OSError | None:
    """The wait's outcome, or None when it has none yet: the waiting thread then owns the descriptor."""
    with guard:
        outcome = state[0]
        if outcome is None:
            state[0] = False
        return outcome


__all__ = ["checked_timeout", "exclusive", "lock_writers", "shared"]
