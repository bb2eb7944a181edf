"""`in_thread`: sleep or apply from async code in a thread that cancelling the caller stops at its
next model call or proposal, and `stop_point`, where sleep and apply look for that cancellation."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_STOP: ContextVar[threading.Event | None] = ContextVar("lamar_stop", default=None)


class Cancelled(BaseException):
    """Raised in the thread of a cancelled `in_thread` at its next stop point. Not an Exception, as
    KeyboardInterrupt is not: an `except Exception` around sleep in that thread must not go on to
    save or apply what sleep was about to make."""


def stop_point() -> None:
    """Raise Cancelled when the caller this thread works for was cancelled: between two model calls,
    two proposals of an apply, and while a model call is awaited (`lamar.models.attempts.wait_for`)."""
    stop = _STOP.get()
    if stop is not None and stop.is_set():
        raise Cancelled("cancelled by its async caller")


def stopping() -> threading.Event | None:
    """The stop this thread's work looks at, or None outside `in_thread`."""
    return _STOP.get()


@contextmanager
def stopped_by(stop: threading.Event) -> Iterator[None]:
    """Within it (and in the threads `asyncio.to_thread` starts from it), `stop_point` looks at `stop`."""
    token = _STOP.set(stop)
    try:
        yield
    finally:
        _STOP.reset(token)


async def in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`await asyncio.to_thread(fn, *args, **kwargs)`, which a cancellation stops rather than leaves running.

    A thread cannot be killed, so a cancelled `asyncio.to_thread(lam.sleep, ...)` goes on calling the
    model and returns a report nobody reads, and an apply goes on writing. Here the cancellation
    stops `fn` at its next stop point (the model call it awaits ends at once, and sends nothing more;
    an apply stops before its next proposal, each proposal being written whole), and the cancelled
    await ends once the thread has stopped: nothing of it runs on after the caller moved on.

    >>> import asyncio
    >>> from lamar import Lamar
    >>> asyncio.run(in_thread(Lamar().sleep)).proposals
    []
    """
    import asyncio

    stop = threading.Event()
    with stopped_by(stop):  # the context to_thread copies into the thread
        work = asyncio.ensure_future(asyncio.to_thread(fn, *args, **kwargs))
    # The thread's Cancelled is read here, so that asyncio does not log it as never retrieved.
    work.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.wait([work])  # a second cancellation ends this wait, not the thread's stop
        raise


__all__ = ["Cancelled", "in_thread", "stop_point", "stopped_by", "stopping"]
