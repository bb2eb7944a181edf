"""`claimed_stdin`: the client's lines on stdin for the SDK's stdio transport, where a request whose id MCP does not
take (no string, no integer) is answered -32600 instead of read by the SDK as a notification and left unanswered."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Self

import anyio
from mcp.types import INVALID_REQUEST, ErrorData, JSONRPCError

Refuse = Callable[[JSONRPCError], Awaitable[None]]


class _Lines:
    """stdin's lines as the SDK's reader takes them, less those that are requests with an id MCP does not take."""

    def __init__(self, file: Any) -> None:
        self._lines = aiter(file)
        self.refuse: Refuse | None = (
            None  # set once the session's write stream exists, before any line is read
        )

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        while True:
            line: str = await anext(self._lines)
            refusal = bad_id(line)
            if refusal is None or self.refuse is None:
                return line
            await self.refuse(refusal)


def bad_id(line: str) -> JSONRPCError | None:
    """The -32600 answer to `line` when it is a request (an object with a method) whose id is neither a string nor
    an integer; else None, and the SDK reads the line.

    The SDK reads such a line as a notification, which drops the id and is never answered (its issue #2057):
    the client waits for ever. MCP takes no null id either. The answer's id is null, as JSON-RPC 2.0 says of
    an id that cannot be read.

    >>> bad_id('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}').error.code, bad_id('{"id": "1", "method": "p"}')
    (-32600, None)
    """
    if '"id"' not in line:  # a notification: nothing to read twice
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None  # no JSON the SDK reads either: answered where its refusal arrives (`wire.refused`)
    if not isinstance(value, dict) or "method" not in value or "id" not in value:
        return None
    found = value["id"]
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return None
    shown = {
        type(None): "null",
        bool: "true or false",
        float: "a number with a fraction or an exponent",
        list: "an array",
        dict: "an object",
    }.get(type(found), type(found).__name__)
    return JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=ErrorData(
            code=INVALID_REQUEST,
            message=(
                f"Invalid Request: id: a request's id is a string or an integer, not {shown}; "
                "a message meant to get no answer (a notification) has no id"
            ),
        ),
    )


@contextlib.contextmanager
def claimed_stdin() -> Iterator[_Lines]:
    """The client's lines on stdin (`_Lines`), read from a private copy of fd 0 while fd 0 reads the null device.

    As the SDK's own stdio transport does when it is given no stdin: a child process (`git`, reading rules)
    reads EOF from fd 0 and cannot take the client's next request. The copy is left open: a worker thread of
    the read may still block on it after the session, and a closed descriptor could be reused under it.
    """
    try:
        private = os.dup(0)
        diversion = os.open(os.devnull, os.O_RDONLY)
    except OSError:  # no fd 0 (started with stdin closed): no line will come
        yield _Lines(anyio.wrap_file(io.StringIO()))
        return
    try:
        os.dup2(diversion, 0)
    finally:
        os.close(diversion)
    try:
        # As the SDK reads stdin: UTF-8, a byte that is not read as U+FFFD
        yield _Lines(
            anyio.wrap_file(
                io.TextIOWrapper(os.fdopen(private, "rb", closefd=False), encoding="utf-8", errors="replace")
            )
        )
    finally:
        os.dup2(private, 0)


__all__ = ["bad_id", "claimed_stdin"]
