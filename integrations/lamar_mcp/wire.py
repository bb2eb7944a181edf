"""`readable`: the stdio stream of requests, where a line the SDK's parser refuses only for a lone surrogate is read
again (each lone half as U+FFFD), any other line the SDK cannot read is answered with the JSON-RPC 2.0 error it calls
for (-32700, -32600) and said on stderr, and the end of stdin waits for the answers still owed."""

from __future__ import annotations

import json
import re
import sys
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from lamar.storable import without_lone_surrogates


class _Answers:
    """The session's write stream, noting which requests are still owed an answer."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._owed: set[str] = set()  # as text, as the SDK matches a cancellation's requestId to its request
        self._none_owed = anyio.Event()
        self._none_owed.set()

    def owe(self, request_id: str | int) -> None:
        self._owed.add(str(request_id))
        if self._none_owed.is_set():
            self._none_owed = anyio.Event()

    def settled(self, request_id: Any) -> None:
        """`request_id` is answered, or cancelled by its client (which then expects no answer)."""
        self._owed.discard(str(request_id))
        if not self._owed:
            self._none_owed.set()

    async def all_sent(self) -> None:
        await self._none_owed.wait()

    async def send(self, item: Any) -> None:
        await self._inner.send(item)
        message = getattr(item, "message", None)
        if isinstance(message, (JSONRPCResponse, JSONRPCError)):
            self.settled(message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


class _Readable:
    """The SDK's read stream with refused lines read again or answered; every message passes as it came."""

    def __init__(self, inner: Any, answers: _Answers) -> None:
        self._inner = inner
        self._answers = answers

    @property
    def last_context(self) -> Any:  # the sender's context, which the SDK's dispatcher restores per message
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                # The SDK's dispatcher cancels every call in flight at the end of stdin, and a script that pipes
                # its requests in (`printf ... | lamar mcp`) closes stdin right after its last line: each call is
                # answered first. A client that wants the server gone sooner sends SIGTERM, as MCP's stdio says.
                await self._answers.all_sent()
                raise
            if isinstance(item, ValidationError):
                item = _read_again(item)
            if not isinstance(item, Exception):
                self._note(item.message)
                return item
            await self._refuse(item)

    def _note(self, message: Any) -> None:
        if isinstance(message, JSONRPCRequest):
            self._answers.owe(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == "notifications/cancelled":
            self._answers.settled((message.params or {}).get("requestId"))

    async def _refuse(self, unread: Exception) -> None:
        """Answer a line the SDK could not read, as JSON-RPC 2.0 says, and say so on stderr.

        The SDK's server hands such a line on as an exception, which its dispatcher drops with a debug
        log: its `on_stream_exception` observer is set only by the client's session, and the server's
        runner builds its dispatcher with no way to pass one, so the read stream handed to the run is the
        seam. Dropped, a client waiting for the answer to a request cut short or misspelt would wait for
        ever, and a person reading the client's log of the server's stderr would see nothing.
        """
        refusal = refused(unread)
        if refusal is not None:
            await self.answer(refusal)

    async def answer(self, refusal: JSONRPCError) -> None:
        """Send `refusal`, the answer to a line that is no message the SDK takes, and say so on stderr."""
        print(f"lamar mcp: a line on stdin is no JSON-RPC message ({refusal.error.message}): answered with error "
              f"{refusal.error.code}", file=sys.stderr, flush=True)
        try:
            await self._answers.send(SessionMessage(refusal))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the session is closing: no one is left to tell

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


def readable(stream: Any, answers: Any) -> tuple[Any, Any]:
    """`stream`, the SDK's stdio read stream, with lines its parser refused for a lone surrogate read again,
    and every other line it refused answered on `answers`, the session's write stream (`refused`); returned
    with `answers` noting the requests owed an answer, which the end of `stream` waits for.

    The SDK's JSON parser refuses a `\\ud83d` escape without its other half, and over stdio such a
    line is dropped without an answer: the client would wait for it for ever. Python's parser reads
    it; each lone half becomes U+FFFD, as a byte that is not UTF-8 already does on this pipe, so no
    tool ever holds (or echoes into an answer the SDK cannot write) text that is not Unicode.
    """
    written = _Answers(answers)
    return _Readable(stream, written), written


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


def refused(unread: Exception) -> JSONRPCError | None:
    """The JSON-RPC 2.0 error that answers a line the SDK could not read (`unread`, what its reader raised);
    None for a blank line, which holds no message.

    Text that is no JSON gets -32700 (parse error). JSON that is no message gets -32600 (invalid request):
    a batch (MCP sends one message a line), a value that is no object, a message missing a field or with
    one of the wrong type, or one the SDK cannot read (a number of thousands of digits, deeper nesting than
    it reads). The answer carries the request's id where the message is a request whose id can be read,
    so that a client waiting for it hears why; else null, as JSON-RPC 2.0 asks.

    >>> refused(_unread("{oops")).error.code, refused(_unread('{"jsonrpc": "2.0", "id": 4, "method": 1}')).id
    (-32700, 4)
    """
    if not isinstance(unread, ValidationError):
        return _error(None, PARSE_ERROR, f"Parse error: {type(unread).__name__}")
    errors = unread.errors()
    line = errors[0].get("input") if len(errors) == 1 and errors[0]["type"] == "json_invalid" else None
    if isinstance(line, str):
        if not line.strip():
            return None
        digits: list[int] = []
        try:
            value = json.loads(line, parse_int=lambda text: _whole(text, digits), parse_constant=_no_constant)
        except (ValueError, RecursionError):
            return _error(None, PARSE_ERROR, f"Parse error: {str(errors[0]['msg']).removeprefix('Invalid JSON: ')}")
        value = without_lone_surrogates(value)
        return _error(_request_id(value), INVALID_REQUEST, f"Invalid Request: {_why_unread(value, digits, errors)}")
    value = _message(errors)
    return _error(_request_id(value), INVALID_REQUEST, f"Invalid Request: {_what_is_wrong(value, errors)}")


def _why_unread(value: Any, digits: list[int], errors: list[Any]) -> str:
    """Why JSON that Python reads (`value`) is no message the SDK reads: a number too long, the message's
    own fault (one that also held half of an emoji), or the SDK's parser's refusal (nesting past its limit)."""
    if digits:
        return f"it holds a number of {max(digits)} digits, too long to read"
    try:
        jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError as exc:
        return _what_is_wrong(value, exc.errors())
    return str(errors[0]["msg"]).removeprefix("Invalid JSON: ")


_LONGEST_WHOLE = 4300  # digits: Python's own limit on reading an integer from text


def _whole(text: str, long: list[int]) -> int | None:
    """An integer of the JSON text as `json.loads` reads it; one too long to read is noted in `long` and is None."""
    if len(text.lstrip("-")) > _LONGEST_WHOLE:
        long.append(len(text.lstrip("-")))
        return None
    return int(text)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON")  # Python reads NaN and Infinity; JSON has neither


def _message(errors: list[Any]) -> Any:
    """The value the SDK's reader refused, as its errors hold it: a branch's own error holds the whole
    value, a missing field the object it is missing from; None when no error holds it."""
    for error in errors:
        if len(error["loc"]) == 1 or (error["type"] == "missing" and len(error["loc"]) == 2):
            return error.get("input")
    return None


def _request_id(value: Any) -> str | int | None:
    """The id of a message meant as a request, when it can be read (a string, or a whole number in
    JSON-RPC's sense); a reply's id names a request of the server, which an error must not answer."""
    if not isinstance(value, dict) or "method" not in value:
        return None
    found = value.get("id")
    return found if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)) else None


def _what_is_wrong(value: Any, errors: list[Any]) -> str:
    """Why `value` is no message, from the SDK's errors for the kind of message it looks meant as."""
    if isinstance(value, list):
        return "a batch (a JSON array) of messages, which MCP does not take: send one message a line"
    if not isinstance(value, dict):
        return "a message is a JSON object with \"jsonrpc\": \"2.0\""
    meant = ("JSONRPCRequest" if "id" in value else "JSONRPCNotification") if "method" in value \
        else ("JSONRPCError" if "error" in value else "JSONRPCResponse")
    said = [f"{'.'.join(str(part) for part in error['loc'][1:])}: {error['msg']}"
            for error in errors if error["loc"] and error["loc"][0] == meant]
    return "; ".join(said[:3]) or str(errors[0]["msg"])


def _error(request_id: str | int | None, code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))


def _unread(line: str) -> ValidationError:
    """What the SDK's stdio reader raises for `line` (for the examples)."""
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        return exc
    raise AssertionError(f"{line!r} is a message")


__all__ = ["readable", "refused"]
