"""`Deliveries`: a stdio session's write stream, watched for the recall answers that never reach the client
(the pipe breaks under the answer, or the session ends before it goes out): their episodes are expired."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Self

from mcp.types import JSONRPCError, JSONRPCResponse

Expire = Callable[[], Awaitable[None]]


class Deliveries:
    """The SDK's stdio write stream, and the recall answers it owes or holds.

    An answer is owed from the moment the recall returns it until the SDK hands it to the stdout
    writer; the writer then holds it until it takes the next message, which it takes only once
    the one before is written. An answer never handed over, one the SDK replaced by an error,
    and one the writer held when the pipe broke never reached the client.
    """

    def __init__(self) -> None:
        self._inner: Any = None
        self._owed: dict[str, Expire] = {}  # by request id, as the SDK matches a cancellation to its request
        self._held: Expire | None = None

    def watch(self, stream: Any) -> Self:
        self._inner = stream
        return self

    def owe(self, request_id: Any, expire: Expire) -> None:
        """The answer to `request_id` holds an episode: `expire` settles it if the answer never arrives."""
        self._owed[str(request_id)] = expire

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", None)
        answer = message if isinstance(message, (JSONRPCResponse, JSONRPCError)) else None
        expire = self._owed.pop(str(answer.id), None) if answer is not None else None
        if expire is not None and isinstance(message, JSONRPCError):
            await expire()  # an error goes out instead (the session closed under the call): no episode id
            expire = None
        try:
            await self._inner.send(item)
        except BaseException:
            if expire is not None:
                await expire()
            raise
        self._held = expire

    async def settle(self, broken: bool) -> None:
        """At the session's end: expire the answers never handed over, and, when the pipe broke, the one
        the writer was writing."""
        left = [*self._owed.values(), *([self._held] if broken and self._held is not None else [])]
        self._owed.clear()
        if broken:  # else the writer may still fail on it: a broken pipe found later settles it then
            self._held = None
        for expire in left:
            await expire()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


# The session's `Deliveries`, set before its streams start: each request's handler runs in a copy of
# the context its line was read in, so the recall finds it there. Unset (HTTP, a direct call), no watch.
WATCHING: contextvars.ContextVar[Deliveries | None] = contextvars.ContextVar("lamar_mcp_deliveries", default=None)

__all__ = ["WATCHING", "Deliveries"]
