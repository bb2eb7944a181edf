"""The attempts of one model call: the deadline `call_model` gives the call, and the Anthropic
and OpenAI SDKs' retries, made here so that none is sent after that deadline."""

from __future__ import annotations

import email.utils
import math
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from types import ModuleType
from typing import Any, TypeVar

T = TypeVar("T")

_DEADLINE: ContextVar[Deadline | None] = ContextVar("lamar_model_deadline", default=None)
_FIRST_WAIT = 0.5  # the SDKs' backoff: 0.5 s, doubling, at most 8 s, less up to a quarter at random
_LONGEST_WAIT = 8.0
# Its own generator, so a test can seed the jitter without touching the caller's `random` state.
_JITTER = random.Random()
# openai-python's MAX_RETRY_AFTER_DELAY (`_should_retry`): a server that asks for a longer wait gets
# no retry, and the call fails at once saying when to try again, rather than holding sleep that long.
LONGEST_RETRY_AFTER = 120.0


class Deadline:
    """A call's deadline, a `time.monotonic()` reading (None: no limit), which its caller may bring forward."""

    __slots__ = ("at",)

    def __init__(self, at: float | None) -> None:
        self.at = at

    def end(self) -> None:
        """Give up on the call now: what it would send next is not sent."""
        now = time.monotonic()
        self.at = now if self.at is None else min(self.at, now)


def wait_for(worker: Any, timeout: float | None, call: Deadline) -> None:
    """`worker.join(timeout)`; interrupted (Ctrl-C, a notebook's interrupt) or cancelled (`lamar.cancel`),
    the call's deadline ends too: the process lives on, and the call's thread would otherwise retry
    until its deadline."""
    from lamar.cancel import stop_point, stopping

    try:
        stop_point()  # cancelled before the call: its thread sends nothing, its deadline being over
        if stopping() is None:
            worker.join(timeout)
            return
        # A cancellation sets no exception in this thread, as Ctrl-C does: it is looked for between waits.
        end = None if timeout is None else time.monotonic() + timeout
        while worker.is_alive() and (end is None or time.monotonic() < end):
            worker.join(_LOOK if end is None else max(0.0, min(_LOOK, end - time.monotonic())))
            stop_point()
    except BaseException:
        call.end()
        raise


_LOOK = 0.05  # seconds between two looks for a cancellation while a model call is awaited


@contextmanager
def deadline(at: float | Deadline | None) -> Iterator[None]:
    """Within it, `time_left()` counts down to `at`, a `time.monotonic()` reading (None: no limit)."""
    token = _DEADLINE.set(at if isinstance(at, Deadline) else Deadline(at))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def time_left() -> float | None:
    """Seconds before `call_model` gives up on the call this thread runs (None: it waits as long as it takes)."""
    call = _DEADLINE.get()
    return None if call is None or call.at is None else call.at - time.monotonic()


def with_retries(client: Any, sdk: ModuleType, send: Callable[[Any, dict[str, Any]], T]) -> T:
    """`send(client, options)`, one request, with the client's `max_retries` retries made here.

    The SDK's own retries wait and send again whether or not anyone still waits for the answer, so a
    call that `call_model` gave up on would send its prompt after sleep returned. Here each part of
    an attempt's `timeout` (connect, read, write, pool) is cut to the time left, and a retry is made
    only when its wait (the server's retry-after, else 0.5 s doubling up to 8 s) ends before the
    deadline. What the SDKs retry is retried: 408, 409, 429, 5xx (529 included), a failed
    connection, a timed-out attempt, and what the server's `x-should-retry` header asks for, but not
    a failure whose retry-after asks for more than `LONGEST_RETRY_AFTER` seconds (as openai-python). The
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


def cut_to_deadline(request: Any) -> None:
    """An httpx request hook (the ollama SDK's client): the request's timeout, each part, cut to the
    time left in the call, as `with_retries` cuts an attempt's; none is sent after the deadline."""
    left = time_left()
    if left is None:
        return
    if left <= 0:  # a redirect's next request, say
        raise TimeoutError("the model call's deadline passed before this request")
    parts = request.extensions.get("timeout") or {}
    request.extensions["timeout"] = {phase: _cut_part(parts.get(phase), left) for phase in _PHASES}


def end_reads_at_deadline(http_client: Any) -> None:
    """Give `http_client` (an httpx, or the SDKs' httpx2, Client) a response hook that stops
    reading a body at the call's deadline: a read timeout bounds each read, not the whole body, so
    a server sending it slowly kept a call that sleep gave up on reading, and its connection open."""
    import sys

    hooks = getattr(http_client, "event_hooks", None)
    # The HTTP library the client is of: the module whose Client its class is, or derives from.
    http = next((module for klass in type(http_client).__mro__
                 if (module := sys.modules.get(klass.__module__.partition(".")[0])) is not None
                 and getattr(module, "Client", None) is klass and hasattr(module, "SyncByteStream")), None)
    if http is None or not isinstance(hooks, dict) or any(getattr(hook, "_lamar", False) for hook in hooks["response"]):
        return
    timed_out = http.ReadTimeout

    class Bounded(http.SyncByteStream):  # type: ignore[misc, name-defined]
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        def __iter__(self) -> Iterator[bytes]:
            for chunk in self._stream:
                left = time_left()
                if left is not None and left <= 0:
                    raise timed_out("the model call's deadline passed while its answer was arriving")
                yield chunk

        def close(self) -> None:
            self._stream.close()

    def bound(response: Any) -> None:
        if time_left() is not None:
            response.stream = Bounded(response.stream)

    bound._lamar = True  # type: ignore[attr-defined]
    hooks.setdefault("response", []).append(bound)


def _cut_part(timeout: object, left: float) -> float:
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout <= left:
        return timeout
    return left


def _retry_wait(exc: BaseException, sdk: ModuleType, client: Any, attempt: int) -> float | None:
    """Seconds to wait before retrying after `exc`, or None when the SDK would not retry it."""
    headers: Mapping[str, str] = getattr(getattr(exc, "response", None), "headers", None) or {}
    asked = _retry_after(headers)
    if asked is not None and asked > LONGEST_RETRY_AFTER:  # before x-should-retry, as openai-python
        return None
    told = headers.get("x-should-retry")
    if told == "false":
        return None
    if isinstance(exc, sdk.APIStatusError) and told != "true":
        status = exc.status_code
        # A 401 on a client with refreshing credentials (an Anthropic profile): the SDK has dropped
        # the rejected token, and one more attempt sends its replacement.
        refresh = status == 401 and attempt == 0 and getattr(client, "custom_auth", None) is not None
        if not (status in (408, 409, 429) or status >= 500 or refresh) or out_of_credit(status, exc.body):
            return None
    if asked is not None and asked > 0:
        return asked
    # The jitter of the SDKs' `_calculate_retry_timeout` (anthropic-sdk-python, openai-python).
    return min(_FIRST_WAIT * 2.0 ** attempt, _LONGEST_WAIT) * (1.0 - 0.25 * _JITTER.random())


def server_wait(response: object) -> float | None:
    """The seconds a failed response's retry-after asks to wait (more than 0), or None."""
    asked = _retry_after(getattr(response, "headers", None) or {})
    return asked if asked is not None and asked > 0 else None


_INFINITY = ("inf", "+inf", "infinity", "+infinity")


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a server asks for: retry-after-ms, or retry-after in seconds or as an HTTP date;
    None for none, or one that is no length ("inf", "nan"), as openai-python reads it."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            asked = float(value) / scale
        except ValueError:
            continue
        if asked == math.inf and value.strip().lower() not in _INFINITY:
            return math.inf  # digits past a float's range: a wait longer than any, not a malformed one
        return asked if math.isfinite(asked) else None
    try:
        when = email.utils.parsedate_tz(headers.get("retry-after", ""))
        return None if when is None else email.utils.mktime_tz(when) - time.time()
    except (TypeError, ValueError, OverflowError, OSError):
        return None


# What the APIs say for an account out of credit or quota: OpenAI's 429 "insufficient_quota" (a rate
# limit's status, but no wait lifts it), Anthropic's "billing_error" and its 400 "credit balance is too low".
_BILLING_CODES = frozenset({"insufficient_quota", "billing_error", "billing_not_active", "billing_hard_limit_reached"})
_BILLING_WORDS = re.compile(r"credit balance is too low", re.IGNORECASE)


def out_of_credit(status: int, body: object) -> bool:
    """Whether a failed response (its status, and its JSON `body` as the SDK keeps it) says the account
    is out of credit or quota: no retry helps, however soon or late."""
    if status == 402:  # Payment Required
        return True
    error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else body
    if not isinstance(error, dict):
        return False
    return (bool({str(error.get("type")), str(error.get("code"))} & _BILLING_CODES)
            or bool(_BILLING_WORDS.search(str(error.get("message", "")))))


__all__ = ["LONGEST_RETRY_AFTER", "Deadline", "cut_to_deadline", "deadline", "end_reads_at_deadline", "out_of_credit",
           "server_wait", "time_left", "wait_for", "with_retries"]
