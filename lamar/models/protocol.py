"""The `Model` protocol sleep calls, and the failure messages every adapter shares."""

from __future__ import annotations

import importlib
import inspect
import re
import threading
import time
import urllib.parse
from collections.abc import Iterable
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from lamar._errors import InvalidArgument, ModelError, a_or_an
from lamar.models.attempts import Deadline, deadline, wait_for
from lamar.storable import whole_number


@runtime_checkable
class Model(Protocol):
    """Anything that turns a prompt into text. Sleep needs nothing more.

    >>> class Echo:
    ...     def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
    ...         return prompt[:max_tokens]
    >>> isinstance(Echo(), Model)
    True
    """

    def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
        """Return the model's whole answer to `prompt`, at most `max_tokens` tokens long.

        Raises:
            ModelError: the call failed, or the answer is empty or cut off.
        """
        ...


DEFAULT_TIMEOUT = 300.0
"""Seconds one model call may take before sleep gives up on it (the `model_timeout` option)."""
PASS_API_KEY = " or pass api_key=..."
"""The missing-key advice's Python half, after "set ANTHROPIC_API_KEY": the CLI says the environment instead."""


def call_model(model: Any, prompt: str, *, max_tokens: int, timeout: float | None = DEFAULT_TIMEOUT) -> str:
    """`model.complete(prompt, max_tokens=...)`, bounded in time; every failure is a ModelError.

    The call runs in a daemon thread: one that hangs past `timeout` is abandoned (Python cannot
    kill a thread), and sleep goes on to fail cleanly instead of waiting forever. The call can read
    its deadline (`lamar.models.attempts.time_left`); the shipped adapters send nothing after it.

    Args:
        model: anything with `complete(prompt, *, max_tokens) -> str`.
        prompt: the prompt.
        max_tokens: the model's output limit.
        timeout: seconds to wait (None: wait as long as it takes).

    Raises:
        ModelError: the call raised (whatever it raised), returned something other than text,
            or took longer than `timeout`.
    """
    name = getattr(model, "model", None) or type(model).__name__
    box: dict[str, Any] = {}
    # Taken before the thread starts, so the call's deadline never falls after the moment we give up.
    at = Deadline(None if timeout is None else time.monotonic() + timeout)

    def run() -> None:
        try:
            with deadline(at):
                box["reply"] = model.complete(prompt, max_tokens=max_tokens)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller as a ModelError
            box["error"], box["ended"] = exc, time.monotonic()

    worker = threading.Thread(target=run, name="lamar-model-call", daemon=True)
    worker.start()
    wait_for(worker, timeout, at)  # an interrupt ends the call's deadline with the wait
    alive = worker.is_alive()  # before reading the box: a call ended since has filled it
    error = box.get("error")
    # A call that failed past its deadline is told as the deadline's, whichever thread woke first; one that
    # failed before it is told as itself, however late this thread wakes.
    if alive or (isinstance(error, Exception) and at.at is not None and box["ended"] >= at.at):
        raise ModelError(f"model {name!r} did not answer within {timeout:g} s; nothing was changed: run sleep "
                         "again, or raise model_timeout if the model is slow but working")
    if isinstance(error, ModelError):
        raise without_secrets(error)
    if isinstance(error, KeyboardInterrupt):
        raise error
    if error is not None:
        failure = ModelError(f"model {name!r} failed ({type(error).__name__}: {error}); nothing was changed: "
                             "check the model's setup and run sleep again")
        failure.__cause__ = error  # set before `without_secrets`, which drops it if it says a key
        raise without_secrets(failure)
    reply = box.get("reply")
    if not isinstance(reply, str):
        raise ModelError(f"model {name!r} returned {type(reply).__name__}, not text; its complete() must "
                         "return a str")
    return reply


_SHORTEST_KEY = 8  # "none", "EMPTY" and other placeholder keys are words a message may hold


def without_secrets(error: ModelError, keys: Iterable[object] = ()) -> ModelError:
    """`error` with `keys` (the client's own credentials, of any shape) and any credential
    `lamar.safety.scrub` knows taken out of its message: a server or a proxy may echo the key it
    was sent, and the message reaches logs and the saved sleep report. Changed in place; the
    exceptions behind it are dropped when one of them says a key, as a traceback would print them."""
    said = _without_secrets(str(error), keys)
    if said != str(error):
        error.args = (said,)
    behind: BaseException = error
    for _ in range(_DEEPEST):  # the SDK's error holds the server's whole answer, not cut as the message is
        nearer = behind.__cause__ or (None if behind.__suppress_context__ else behind.__context__)
        if nearer is None:
            break
        behind = nearer
        if _without_secrets(str(behind), keys) != str(behind):
            error.__cause__, error.__suppress_context__ = None, True
            break
    return error


_DEEPEST = 8  # exceptions behind an error looked at: a chain is a few links, or a cycle
# Header names that carry a credential: Authorization, a gateway's X-Gateway-Key, a session cookie.
_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|passw|cookie|signature", re.IGNORECASE)


def header_secrets(headers: object) -> list[str]:
    """The values of a client's own `headers` whose names say they carry a credential, and the
    token after an auth scheme ("Bearer x"): a gateway may echo them as it echoes a key."""
    try:
        items = list(dict(headers).items()) if headers else []  # type: ignore[call-overload]
    except (TypeError, ValueError):  # not a mapping: no headers of its own to hide
        return []
    values = [value for name, value in items if isinstance(value, str) and _CREDENTIAL_HEADER.search(str(name))]
    return values + [value.partition(" ")[2] for value in values]


def _without_secrets(text: str, keys: Iterable[object]) -> str:
    from lamar.safety import scrub

    for key in keys:
        if isinstance(key, str) and len(key.strip()) >= _SHORTEST_KEY:
            text = text.replace(key.strip(), "[REDACTED:api-key]")
    return scrub(text)[0]


def load_sdk(module: str, extra: str) -> ModuleType:
    """Import an adapter's SDK, or fail with the install command that provides it (or, for a SOCKS
    proxy the SDK cannot use, with `socks_failure`: ollama builds a client as it is imported)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        from lamar.extras import needs_extra

        if no_socks(exc):
            raise socks_failure(f"the {module} SDK") from exc

        raise ImportError(needs_extra(f"this model adapter needs the {module!r} package", extra)) from exc


def sdk_client(provider: str, factory: Any, error: type[BaseException], client: Any,
               client_kwargs: dict[str, Any], setup_hint: str) -> Any:
    """`client` as given, or a new one from `factory(**client_kwargs)`; never both. A new client's
    `timeout` defaults to `DEFAULT_TIMEOUT`: the SDKs' own (ten minutes, per attempt) would keep a
    call that sleep gave up on running long after it.

    Raises:
        TypeError: both a client and keyword arguments for a new one were passed.
        ModelError: the SDK refused to build a client (`setup_hint` says what to set).
    """
    if client is not None and client_kwargs:
        raise TypeError("pass either client= or keyword arguments for a new client, not both")
    if client is not None:
        return client
    try:
        return factory(**{"timeout": DEFAULT_TIMEOUT, **client_kwargs})
    except error as exc:
        raise ModelError(f"cannot set up the {provider} client ({exc}); {setup_hint}") from exc
    except ImportError as exc:
        if no_socks(exc):
            raise socks_failure(f"the {provider} client") from exc
        raise


def no_socks(exc: BaseException) -> bool:
    """Whether `exc` is httpx's ImportError for a SOCKS proxy without the socksio package."""
    return isinstance(exc, ImportError) and "socksio" in str(exc)


def socks_failure(what: str) -> ModelError:
    """A ModelError for a SOCKS proxy in the environment that the HTTP client cannot use: which
    variable names it, and the two ways out (httpx's own ImportError names neither)."""
    import os

    from lamar.extras import pip_command

    named = sorted(f"{name}={address(value)}" for name, value in os.environ.items()
                   if name.lower() in ("all_proxy", "https_proxy", "http_proxy") and "socks" in value.lower())
    where = f" ({', '.join(named)})" if named else ""
    return ModelError(
        f"cannot set up {what}: the environment names a SOCKS proxy{where}, and SOCKS support needs the "
        f"socksio package: install it with `{pip_command()} install socksio`, or set that variable to an "
        "http:// proxy (or unset it), then run again"
    )


def refuse_async(provider: str, client: Any, method: str, sync_class: str) -> None:
    """Raise InvalidArgument when `client`'s `method` ("messages.create") is a coroutine function:
    `complete` would get a coroutine that never runs, not an answer."""
    found: Any = client
    for name in method.split("."):
        found = getattr(found, name, None)
    if found is not None and inspect.iscoroutinefunction(inspect.unwrap(found)):
        raise InvalidArgument(f"client= is an async {provider} client ({type(client).__name__}); pass "
                              f"{a_or_an(sync_class)} instead: sleep calls the model from a worker thread, "
                              "not an event loop")


def check_max_tokens(max_tokens: int) -> int:
    if not whole_number(max_tokens, low=1):
        raise ValueError(f"max_tokens must be a whole number >= 1; got {max_tokens!r}")
    return max_tokens


def clipped(text: object, width: int) -> str:
    """`text` on one line, at most `width` characters, cut after a whole word with "…" where it was cut.

    >>> clipped("the model is  overloaded, try again later", 26), clipped("x" * 30, 10)
    ('the model is overloaded,…', 'xxxxxxxxx…')
    """
    flat = " ".join(str(text).split())
    if len(flat) <= width:
        return flat
    head = flat[:width - 1]
    # One word as long as the room (a token, a URL) is cut inside itself rather than dropped whole.
    word_end = head.rfind(" ") if flat[width - 1] != " " else width - 1
    return (head[:word_end] if word_end > width // 2 else head).rstrip() + "…"


def status_failure(provider: str, model: str, status: int, detail: str, *, credentials: str = "",
                   missing_path: str = "", moved_to: str = "", moved_base: str = "",
                   wait: float | None = None) -> ModelError:
    """A ModelError for an HTTP error status, saying what to do about it. `missing_path`: the URL
    of a 404 the API did not write (no error of its own: a wrong base_url's path, not the model).
    `moved_to`: where a redirect pointed (`redirected_to`); `moved_base`: the setting that reaches it
    (`redirect_base`), as the SDK adds the endpoint's path to it. `wait`: the seconds the server's
    retry-after asks for (`attempts.server_wait`), said with the moment to run sleep again."""
    detail = clipped(detail, 300)
    said = f"HTTP {status}: {detail}" if detail else f"HTTP {status}"
    setting = "host" if provider == "Ollama" else "base_url"
    there = f"{address(moved_base)}, where the redirect leads" if moved_base else "the address it redirects to"
    if 300 <= status < 400:  # a client that follows no redirects: the API is at another address
        to = f" to {address(moved_to)}" if moved_to else ""
        return ModelError(f"{provider} redirected the request for model {model!r}{to} ({said}); set {setting} "
                          f"to {there}, then run sleep again")
    if status == 405:  # never the model's fault; HTTP clients follow a 301 or 302 as a GET
        via = f" after a redirect to {address(moved_to)}" if moved_to else ""
        return ModelError(
            f"{provider} refused the request's method for model {model!r}{via} ({said}): a 301 or 302 redirect "
            f"(http:// to https://, a path the server moved) sends the request on as a GET; set {setting} to "
            f"{there}, then run sleep again"
        )
    if status in (401, 403):
        fix = f"check the credentials ({credentials})" if credentials else "check the credentials"
        return ModelError(f"{provider} refused the request for model {model!r} ({said}); {fix}")
    if status == 404 and missing_path:
        return ModelError(f"nothing answers as the {provider} API at {address(missing_path)} ({said}); check the "
                          f"address ({_ROOTS.get(provider, 'base_url')}), then the model name {model!r}")
    if status == 404:
        return ModelError(f"{provider} does not know model {model!r} ({said}); check the model name")
    again = _run_again_after(wait)
    if status in (408, 429):
        return ModelError(
            f"{provider} is rate limiting or timed out on model {model!r} ({said}); "
            f"{again or 'wait and run sleep again'}, or send less per call with a smaller max_prompt_tokens"
        )
    if 400 <= status < 500:
        return ModelError(
            f"{provider} rejected the request for model {model!r} ({said}); check the model name and "
            "max_tokens, and lower max_prompt_tokens if the prompt is too long for the model"
        )
    return ModelError(
        f"{provider} failed on its side for model {model!r} ({said}); nothing was changed, "
        f"{again or 'run sleep again later'}"
    )


def _run_again_after(wait: float | None) -> str:
    """ "it asks for a wait of 300 s: run sleep again after <UTC time>", or "" for no wait."""
    if wait is None or not 0 < wait < float("inf"):  # digits past a float's range say no moment
        return ""
    seconds = f"{wait:.1f}".removesuffix(".0")
    try:
        at = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(time.time() + wait))
    except (OverflowError, OSError, ValueError):  # a wait past the years a clock can name
        return f"it asks for a wait of {seconds} s: run sleep again after that"
    return f"it asks for a wait of {seconds} s: run sleep again after {at}"


_ROOTS = {
    "Anthropic": "base_url is the server's root, without /v1, as in https://api.anthropic.com",
    "OpenAI": "base_url ends where the API's paths start, /v1 on most servers, as in http://localhost:8000/v1",
    "Ollama": "host is the server alone, as in http://localhost:11434",
}


def redirected_to(response: object) -> str:
    """Where a response's redirect pointed: a 3xx's `location`, or the URL a followed one ended at."""
    status = getattr(response, "status_code", 0)
    if isinstance(status, int) and 300 <= status < 400:
        location = str((getattr(response, "headers", None) or {}).get("location") or "")
        return urllib.parse.urljoin(str(getattr(response, "url", "")), location) if location else ""
    return str(getattr(response, "url", "")) if getattr(response, "history", None) else ""


def redirect_base(response: object, base_url: str) -> str:
    """The `base_url` that reaches where a response's redirect pointed: that URL without the
    endpoint's path the SDK added to `base_url` (`/v1/messages`), or "" when the redirect did not
    keep that path."""
    moved = redirected_to(response)
    history = getattr(response, "history", None) or []
    try:  # the first request's URL: base_url and the endpoint's path
        asked = str((history[0] if history else response).request.url)  # type: ignore[union-attr]
    except (AttributeError, RuntimeError):  # a response made without its request
        return ""
    base = urllib.parse.urlsplit(base_url).path.rstrip("/")
    path = urllib.parse.urlsplit(asked).path
    tail = path[len(base):] if path.startswith(base) else ""
    to = urllib.parse.urlsplit(moved)
    if not moved or not tail.strip("/") or not to.path.endswith(tail):
        return ""
    return urllib.parse.urlunsplit((to.scheme, to.netloc, to.path[:len(to.path) - len(tail)], "", ""))


def api_wrote(body: object) -> bool:
    """Whether an error body is the API's own JSON error (the SDKs unwrap OpenAI's "error")."""
    return isinstance(body, dict) and (isinstance(body.get("error"), dict) or "message" in body)


# A password in an address's user part, and each value of its query (a proxy's key may ride there).
_USER_PASSWORD = re.compile(r"(//[^/?#@:\s]*):[^/?#@\s]*@")
_QUERY_VALUE = re.compile(r"([?&][^=&#\s?]*=)[^&#\s]*")  # a key stops at "?": each "?" read on to the end


def address(where: str) -> str:
    """`where` (a base_url, a request's URL) as a message may show it: a password or a query
    value in it reads [secure], as httpx's repr shows a password.

    >>> address("https://team:pw@proxy.example/v1/messages?key=abc&beta=true")
    'https://team:[secure]@proxy.example/v1/messages?key=[secure]&beta=[secure]'
    """
    return _QUERY_VALUE.sub(r"\1[secure]", _USER_PASSWORD.sub(r"\1:[secure]@", where))


def connection_failure(provider: str, where: str, exc: BaseException) -> ModelError:
    """A ModelError for a request that got no answer: what broke (the SDK's cause too, when its own
    message is a bare "Connection error."), and the proxy the environment names for `where`."""
    said = f"{type(exc).__name__}: {exc}"
    cause: BaseException = exc
    undecodable = type(exc).__name__ == "DecodingError"
    for _ in range(_DEEPEST):
        nearer = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
        if nearer is None:
            break
        cause = nearer
        undecodable = undecodable or type(cause).__name__ == "DecodingError"
    if cause is not exc and str(cause) and str(cause) not in said:
        said += f"; {type(cause).__name__}: {cause}"
    if undecodable:  # httpx's: the server answered, with a body its Content-Encoding does not describe
        setting = "host" if provider == "Ollama" else "base_url"
        return ModelError(
            f"the answer from {address(where)} does not decode as its Content-Encoding header says "
            f"({clipped(said, 300)}); a proxy may have changed the body or that header: check {setting} and "
            "the proxy, then run sleep again"
        )
    proxy = _proxy_for(where)
    # The SDKs' HTTP clients send through it, so a proxy that is down reads as the server being down.
    through = (f"; the environment sends requests for it through the proxy {address(proxy)} (HTTP_PROXY, "
               "HTTPS_PROXY or ALL_PROXY): check the proxy, or name the host in NO_PROXY") if proxy else ""
    return ModelError(
        f"could not reach {provider} at {address(where)} ({clipped(said, 400)}){through}; check the network, "
        "the server address and that the service is running, then run sleep again"
    )


def _proxy_for(where: str) -> str:
    """The proxy the environment's *_PROXY variables name for the address `where`, or ""."""
    import urllib.request

    parts = urllib.parse.urlsplit(where if "://" in where else f"http://{where}")
    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(parts.scheme) or proxies.get("all") or ""
    # NO_PROXY as the SDKs' HTTP clients read it (typeshed leaves this stdlib function out).
    bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if not proxy or not parts.hostname or bypass(parts.netloc, proxies):
        return ""
    # A proxy without a scheme is sent to as http://, and read with one: `address` finds its password.
    return proxy if "://" in proxy else f"http://{proxy}"


def empty_failure(provider: str, model: str, why: str = "") -> ModelError:
    because = f" ({why})" if why else ""
    return ModelError(
        f"{provider} model {model!r} returned no text{because}; nothing can be mined from it, "
        "try again or use another model"
    )


def refusal_failure(provider: str, model: str, said: str = "") -> ModelError:
    """A ModelError for a model that declined to answer: what it said is no answer to mine."""
    said = clipped(said, 300)
    quoted = f": {said!r}" if said else ""
    return ModelError(
        f"{provider} model {model!r} refused to answer{quoted}; nothing was changed: look for trace text "
        "that trips its safety rules (remove or shorten those traces), or mine with another model"
    )


def unexpected_reply(provider: str, where: str, reply: object, setting: str = "base_url") -> ModelError:
    """A ModelError for a success status whose body is not the API's (a proxy's page, broken JSON)."""
    doc = getattr(reply, "doc", None)  # a JSONDecodeError holds the body: a login page says more than its column
    body = doc if isinstance(reply, ValueError) and isinstance(doc, str) and doc.strip() else ""
    body = reply if isinstance(reply, str) else body  # a body the SDK kept as text (not declared JSON)
    preview = clipped(body or reply, 120)
    if isinstance(reply, UnicodeDecodeError):  # the SDKs read JSON as UTF-8 whatever charset is declared
        gzip = reply.object[:2] == b"\x1f\x8b"
        what = ("a gzip-compressed body without the Content-Encoding: gzip header that says so" if gzip else
                f"a body that is not UTF-8, as JSON over HTTP must be ({reply})")
        return ModelError(f"the answer from {address(where)} is {what}; a proxy may re-encode the server's answer: "
                          f"check {setting} and the proxy, then run sleep again")
    if body.lstrip().startswith(("data:", "event:")) or (body.count("\n") > 1 and '"done"' in body):
        return ModelError(  # server-sent events, or Ollama's JSON lines: a stream no request asked for
            f"the answer from {address(where)} is a stream ({preview!r}), though the request asked for one whole "
            f"answer; check {setting}: a proxy or a server that streams every answer cannot be used, then run "
            "sleep again"
        )
    return ModelError(
        f"the answer from {address(where)} is not a reply of the {provider} API ({preview!r}); check {setting} "
        "(a proxy or a login page may have answered instead), then run sleep again"
    )


def reported_error(reply: object) -> str:
    """The error a success-status body holds instead of an answer, or "": the API's own error JSON
    (`{"error": {"message": ...}}`), which some proxies and gateways send with HTTP 200."""
    error = getattr(reply, "error", None)  # the SDKs keep fields their model lacks as attributes
    if isinstance(error, dict):
        error = error.get("message") or error.get("type") or error
    elif error is not None and not isinstance(error, str):
        error = getattr(error, "message", None) or error
    return clipped(error, 300) if error else ""


def error_reply(provider: str, model: str, where: str, said: str, setting: str = "base_url") -> ModelError:
    """A ModelError for a success status whose body is an error: what the server said, not a guess."""
    return ModelError(
        f"the server at {address(where)} answered model {model!r} with an error under a success status "
        f"({said!r}); nothing was changed: act on what it says, or check {setting} if a proxy stands in "
        f"for the {provider} API, then run sleep again"
    )


def without_thinking(text: str) -> str:
    """`text` without the reasoning a local model writes first between <think> and </think>
    (Ollama, vLLM and other servers pass it on inside the answer); "" when it never closed.

    >>> without_thinking("<think>maybe [1]</think> []")
    ' []'
    """
    stripped = text.lstrip()
    if not stripped.startswith("<think>"):
        return text
    _, closed, answer = stripped.partition("</think>")
    return answer if closed else ""


def answer_of(provider: str, model: str, text: str, stopped: str) -> str:
    """`text` without its reasoning (`without_thinking`), or an empty_failure when nothing is left:
    one naming the reasoning when there was some, else `stopped` (why the model stopped)."""
    answer = without_thinking(text)
    if not answer.strip():
        raise empty_failure(provider, model, "only its reasoning" if text.strip() else stopped)
    return answer


def truncated_failure(provider: str, model: str, max_tokens: int) -> ModelError:
    return ModelError(
        f"{provider} model {model!r} hit the output limit (max_tokens={max_tokens}) and its answer is "
        "cut off; raise max_tokens, or lower max_prompt_tokens so each call covers fewer traces"
    )


__all__ = [
    "DEFAULT_TIMEOUT", "Model", "address", "answer_of", "api_wrote", "call_model", "check_max_tokens",
    "connection_failure", "empty_failure", "error_reply", "header_secrets", "load_sdk", "no_socks", "redirect_base",
    "redirected_to", "refusal_failure", "refuse_async", "reported_error", "socks_failure", "status_failure",
    "truncated_failure", "unexpected_reply", "without_secrets", "without_thinking",
]
