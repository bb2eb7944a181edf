"""`readable`: the stdio stream of requests, where a line the SDK's parser refuses only for a lone surrogate
(half of an emoji a client cut in two) is read again, each lone half as U+FFFD, instead of left unanswered."""

from __future__ import annotations

import json
import re
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter
from pydantic import ValidationError

from lamar.storable import without_lone_surrogates


class _Readable:
    """The SDK's read stream with refused lines read again; everything else passes as it came."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    @property
    def last_context(self) -> Any:  # the sender's context, which the SDK's dispatcher restores per message
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        item = await self._inner.receive()
        return _read_again(item) if isinstance(item, ValidationError) else item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


def readable(stream: Any) -> Any:
    """`stream`, the SDK's stdio read stream, with lines its parser refused for a lone surrogate read again.

    The SDK's JSON parser refuses a `\\ud83d` escape without its other half, and over stdio such a
    line is dropped without an answer: the client would wait for it for ever. Python's parser reads
    it; each lone half becomes U+FFFD, as a byte that is not UTF-8 already does on this pipe, so no
    tool ever holds (or echoes into an answer the SDK cannot write) text that is not Unicode.
    """
    return _Readable(stream)


def _read_again(error: ValidationError) -> SessionMessage | ValidationError:
    errors = error.errors()
    line = errors[0].get("input") if len(errors) == 1 and errors[0]["type"] == "json_invalid" else None
    if not isinstance(line, str) or not re.search(r"\\u[dD][89a-fA-F]", line):
        return error  # not a lone surrogate: the SDK's own handling stands
    try:
        message = jsonrpc_message_adapter.validate_python(without_lone_surrogates(json.loads(line)), by_name=False)
    except (ValueError, ValidationError):
        return error
    return SessionMessage(message)


__all__ = ["readable"]
