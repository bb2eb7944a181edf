"""`lamar ui`'s long work (Run sleep, Apply) in a thread that `lamar.cancel.in_thread` stops at its next
stop point when the server stops or the client that asked for it drops its connection."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.requests import Request

from lamar.cancel import in_thread

T = TypeVar("T")


class Stopped(Exception):
    """The work was stopped: its client went away, or the server is stopping (`Stoppable.run`)."""


class Stoppable:
    """The work under way that a dropped connection or a stopping server stops, as cancelling `lamar sleep`'s
    async caller does: a thread cannot be killed, and one left running calls the model and saves a
    report nobody asked for any more, and keeps a stopping server waiting for it."""

    def __init__(self) -> None:
        self._running: set[asyncio.Future[Any]] = set()

    async def run(self, request: Request, what: str, fn: Callable[[], T]) -> T:
        """`fn()` in a thread, stopped when `request`'s client goes away or `stop` is called.

        Args:
            request: the request whose form is read already: what it receives next is its disconnect.
            what: the work, as the server's terminal names it when it stops ("Run sleep").
            fn: the work; it looks for the stop at `lamar.cancel.stop_point`.

        Raises:
            Stopped: the work stopped, once its thread did; what `fn` raises otherwise.
        """
        work = asyncio.ensure_future(in_thread(fn))
        gone = asyncio.ensure_future(_disconnected(request))
        self._running.add(work)
        try:
            await asyncio.wait([work, gone], return_when=asyncio.FIRST_COMPLETED)
            if not work.done():  # the client went: nobody reads what the work would make
                work.cancel()
                await asyncio.wait([work])
        except asyncio.CancelledError:  # the server cancelled this request: its work stops with it
            work.cancel()
            await asyncio.wait([work])
            raise
        finally:
            gone.cancel()
            self._running.discard(work)
        if work.cancelled():
            why = "the connection that asked for it closed" if gone.done() and not gone.cancelled() else \
                "lamar ui is stopping"
            # The one place it can be said: the client is gone, and a stopping server answers no one.
            print(f"lamar ui: {what} stopped: {why}", file=sys.stderr, flush=True)
            raise Stopped(f"{what} stopped: {why}")
        return work.result()

    def stop(self) -> None:
        """Stop all the work under way (the server is stopping): each ends at its next stop point."""
        for work in list(self._running):
            work.cancel()


async def _disconnected(request: Request) -> None:
    """Return once the client has gone. The form is read by then: all that is left to receive is the
    disconnect, which comes when the client closes the connection (Chromium keeps the connection of a
    closed tab's request open: that one comes only with the answer)."""
    while (await request.receive())["type"] != "http.disconnect":
        continue


__all__ = ["Stoppable", "Stopped"]
