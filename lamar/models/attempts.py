"""The attempts of one model call: the deadline `call_model` gives the call, and the Anthropic
and OpenAI SDKs' retries, made here so that none is sent after that deadline."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")

_DEADLINE: ContextVar[float | None] = ContextVar("lamar_model_deadline", default=None)
_FIRST_WAIT = 0.5  # the SDKs' backoff: 0.5 s, doubling, at most 8 s, less up to a quarter at random
_LONGEST_WAIT = 8.0
# Its own generator, so a test can seed the jitter without touching the caller's `random` state.
_JITTER = random.Random()
_LONGEST_ASKED = 4_294_967.0  # time.sleep refuses longer waits on some platforms


@contextmanager
def deadline(at: float | None) -> Iterator[None]:
    """Within it, `time_left()` counts down to `at`, a `time.monotonic()` reading (None: no limit)."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds before `call_model` gives up on the call this thread runs (None: it waits as long as it takes)."""
    at = _DEADLINE.get()
    return None if at is None else at - time.monotonic()


def with_retries(client: Any, sdk: ModuleType, send: Callable[[Any, dict[str, Any]], T]) -> T:
    """`send(client, options)`, one request, with the client's `max_retries` retries made here.

    The SDK's own retries wait and send again whether or not anyone still waits for the answer, so a
    call that `call_model` gave up on would send its prompt after sleep returned. Here each part of
    an attempt's `timeout` (connect, read, write, pool) is cut to the time left, and a retry is made
    only when its wait (the server's retry-after, else 0.5 s doubling up to 8 s) ends before the
    deadline. What the SDKs retry is retried: 408, 409, 429, 5xx (529 included), a failed
    connection, a timed-out attempt, and what the server's `x-should-retry` header asks for. The
    backoff is cut by up to a quarter at random, so that processes rate limited together do not
    retry together. A client without `with_options` retries as it will.
    """
    copy = getattr(client, "with_options", None)
    if copy is None:
        return send(client, {})
    budget = int(client.max_retries)
    once = copy(max_retries=0)
    failure: BaseException | None = None
    for attempt in range(budget + 1):
        left = time_left()
        if left is not None and left <= 0:
            break
        try:
            return send(once, {"timeout": client.timeout if left is None else _cut(client.timeout, left)})
        except (sdk.APIStatusError, sdk.APIConnectionError) as exc:
            failure = exc
            wait = _retry_wait(exc, sdk, client, attempt)
            left = time_left()
            if attempt == budget or wait is None or (left is not None and wait >= left):
                raise
            time.sleep(wait)
    if failure is not None:
        raise failure
    raise TimeoutError("the model call's deadline passed before its first request")


_PHASES = ("connect", "read", "write", "pool")


def _cut(timeout: object, left: float) -> object:
    """The client's timeout with each part (seconds, or an SDK `Timeout`'s connect, read, write and
    pool) cut to the time left; a part without a limit, or a timeout of another shape, is the time left."""
    if all(hasattr(timeout, phase) for phase in _PHASES):
        # The SDK's own Timeout class, built again: a short connect or read stays as the user set it.
        try:
            return type(timeout)(**{phase: _cut_part(getattr(timeout, phase), left) for phase in _PHASES})
        except (TypeError, ValueError):  # a class built otherwise: its parts cannot be kept
            return left
    return _cut_part(timeout, left)


def _cut_part(timeout: object, left: float) -> float:
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout <= left:
        return timeout
    return left


def _retry_wait(exc: BaseException, sdk: ModuleType, client: Any, attempt: int) -> float | None:
    """Seconds to wait before retrying after `exc`, or None when the SDK would not retry it."""
    headers: Mapping[str, str] = getattr(getattr(exc, "response", None), "headers", None) or {}
    told = headers.get("x-should-retry")
    if told == "false":
        return None
    if isinstance(exc, sdk.APIStatusError) and told != "true":
        status = exc.status_code
        # A 401 on a client with refreshing credentials (an Anthropic profile): the SDK has dropped
        # the rejected token, and one more attempt sends its replacement.
        refresh = status == 401 and attempt == 0 and getattr(client, "custom_auth", None) is not None
        if not (status in (408, 409, 429) or status >= 500 or refresh):
            return None
    asked = _retry_after(headers)
    if asked is not None and asked > 0:
        return min(asked, _LONGEST_ASKED)
    # The jitter of the SDKs' `_calculate_retry_timeout` (anthropic-sdk-python, openai-python).
    return min(_FIRST_WAIT * 2.0 ** attempt, _LONGEST_WAIT) * (1.0 - 0.25 * _JITTER.random())


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a server asks for: retry-after-ms, or retry-after in seconds or as an HTTP date."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return float(headers.get(name, "")) / scale
        except ValueError:
            pass
    when = email.utils.parsedate_tz(headers.get("retry-after", ""))
    return None if when is None else email.utils.mktime_tz(when) - time.time()


__all__ = ["deadline", "time_left", "with_retries"]
