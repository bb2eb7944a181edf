"""`lamar ui`'s long work (Run sleep, Apply) in a thread that `lamar.cancel.in_thread` stops at its next
stop point when the tab that asked for it closes or the server stops."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.requests import Request

from lamar.cancel import in_thread

T = TypeVar("T")


class Stopped(Exception):
    """The work was stopped: its tab closed, or the server is stopping (`Stoppable.run`)."""


class Stoppable:
    """The work under way that a closed tab or a stopping server stops, as cancelling `lamar sleep`'s
    async caller does: a thread cannot be killed, and one left running calls the model and saves a
    report nobody asked for any more, and keeps a stopping server waiting for it."""

    def __init__(self) -> None:
        self._running: dict[asyncio.Future[Any], str] = {}  # each work under way, by the id its form sent
        self._why: dict[asyncio.Future[Any], str] = {}  # why a work was stopped

    async def run(self, request: Request, what: str, fn: Callable[[], T], *, work_id: str = "") -> T:
        """`fn()` in a thread, stopped when `request`'s client goes away or `stop` is called.

        Args:
            request: the request whose form is read already: what it receives next is its disconnect.
            what: the work, as the server's terminal names it when it stops ("Run sleep").
            fn: the work; it looks for the stop at `lamar.cancel.stop_point`.
            work_id: the id the page's form sent, which its tab sends to `stop` when it closes.

        Raises:
            Stopped: the work stopped, once its thread did; what `fn` raises otherwise.
        """
        work = asyncio.ensure_future(in_thread(fn))
        gone = asyncio.ensure_future(_disconnected(request))
        self._running[work] = work_id
        try:
            await asyncio.wait([work, gone], return_when=asyncio.FIRST_COMPLETED)
            if not work.done():  # the client went: nobody reads what the work would make
                self._stop(work, _CLOSED)
                await asyncio.wait([work])
        except asyncio.CancelledError:  # the server cancelled this request: its work stops with it
            self._stop(work, _STOPPING)
            await asyncio.wait([work])
            raise
        finally:
            gone.cancel()
            del self._running[work]
            why = self._why.pop(work, _STOPPING)
        if work.cancelled():
            # The one place it can be said: the tab is gone, and a stopping server answers no one.
            print(f"lamar ui: {what} stopped: {why}", file=sys.stderr, flush=True)
            raise Stopped(f"{what} stopped: {why}")
        return work.result()

    def stop(self, work_id: str | None = None) -> None:
        """Stop the work its tab's form named `work_id` (its tab closed), or all of it (None: the server is
        stopping); each ends at its next stop point. An id of no work under way (done already) stops nothing."""
        for work, key in list(self._running.items()):
            if work_id is None or (work_id and key == work_id):
                self._stop(work, _STOPPING if work_id is None else _CLOSED)

    def _stop(self, work: asyncio.Future[Any], why: str) -> None:
        self._why.setdefault(work, why)
        work.cancel()


_CLOSED = "the tab that asked for it closed"
_STOPPING = "lamar ui is stopping"


async def _disconnected(request: Request) -> None:
    """Return once the client has gone. The form is read by then: all that is left to receive is the
    disconnect, which comes when the browser closes the connection (a tab closed, a page left)."""
    while (await request.receive())["type"] != "http.disconnect":
        continue


__all__ = ["Stoppable", "Stopped"]
