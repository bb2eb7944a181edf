"""`OllamaModel`: the Model protocol over a local Ollama server (the `ollama` extra)."""

from __future__ import annotations

from typing import Any

from lamar._errors import ModelError
from lamar.models.attempts import cut_to_deadline, end_reads_at_deadline
from lamar.models.protocol import (
    DEFAULT_TIMEOUT,
    answer_of,
    check_max_tokens,
    connection_failure,
    header_secrets,
    load_sdk,
    no_socks,
    refuse_async,
    socks_failure,
    status_failure,
    truncated_failure,
    unexpected_reply,
    without_secrets,
)
from lamar.models.timeouts import slow_failure

_PROVIDER = "Ollama"


class OllamaModel:
    """A local model through `ollama.Client.generate`.

    Args:
        model: the model name as Ollama knows it, e.g. "llama3.2:3b" (required).
        client: an `ollama.Client` to use (one is built when omitted). Its HTTP client gets a
            request hook that cuts each request's timeout to the deadline of a call sleep bounds.
        host: the server address for a new client (default: OLLAMA_HOST or localhost:11434).
        **client_kwargs: passed to `ollama.Client(...)` (and on to its httpx client); `timeout`
            defaults to `lamar.models.protocol.DEFAULT_TIMEOUT` seconds (the SDK's own default is none).

    Raises:
        ImportError: the ollama package is not installed.
        InvalidArgument: `client` is an async client.
    """

    def __init__(self, model: str, *, client: Any = None, host: str | None = None, **client_kwargs: Any) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be an Ollama model name; got {model!r}")
        self.model = model
        self._sdk = load_sdk("ollama", "ollama")
        if client is not None and (client_kwargs or host is not None):
            raise TypeError("pass either client= or host=/keyword arguments for a new client, not both")
        if client is None:
            # The SDK waits forever by default; a hung server must not hang sleep.
            client_kwargs.setdefault("timeout", DEFAULT_TIMEOUT)
        try:
            self.client = client if client is not None else self._sdk.Client(host=host, **client_kwargs)
        except ImportError as exc:
            if not no_socks(exc):
                raise
            raise socks_failure("the Ollama client") from exc
        refuse_async(_PROVIDER, self.client, "generate", "ollama.Client")
        # generate() takes no timeout: each request's is cut to the call's deadline by its HTTP client.
        hooks = getattr(getattr(self.client, "_client", None), "event_hooks", None)
        if isinstance(hooks, dict) and cut_to_deadline not in hooks.get("request", []):
            hooks.setdefault("request", []).append(cut_to_deadline)
        end_reads_at_deadline(getattr(self.client, "_client", None))

    def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
        """Generate an answer to `prompt` with at most `max_tokens` tokens (Ollama's num_predict).

        Raises:
            ModelError: HTTP error (an unpulled model is a 404), server not running, or an
                empty or cut-off answer.
        """
        try:
            return self._complete(prompt, max_tokens)
        except ModelError as exc:  # a server or a proxy may echo the key it was sent
            without_secrets(exc, header_secrets(getattr(getattr(self.client, "_client", None), "headers", None)))
            raise

    def _complete(self, prompt: str, max_tokens: int) -> str:
        check_max_tokens(max_tokens)
        import httpx  # the ollama SDK's own transport, installed with it

        where = str(getattr(getattr(self.client, "_client", None), "base_url", "the Ollama server"))
        try:
            result = self.client.generate(model=self.model, prompt=prompt, options={"num_predict": max_tokens})
        except self._sdk.ResponseError as exc:
            if exc.status_code == 404 and "model" in str(exc.error).lower():
                raise ModelError(
                    f"Ollama does not have model {self.model!r} ({exc.error}); run `ollama pull {self.model}`"
                ) from exc
            if exc.status_code == 404:  # Ollama names the model it lacks; any other 404 is a wrong path
                raise status_failure(_PROVIDER, self.model, 404, str(exc.error),
                                     missing_path=where.rstrip("/") + "/api/generate") from exc
            if exc.status_code < 300:
                raise ModelError(f"Ollama failed on model {self.model!r}: {exc.error}") from exc
            raise status_failure(_PROVIDER, self.model, exc.status_code, str(exc.error)) from exc
        except (ConnectionError, httpx.TransportError, httpx.DecodingError) as exc:
            raise (slow_failure(_PROVIDER, self.model, where, exc)
                   or connection_failure(_PROVIDER, where, exc)) from exc
        except ValueError as exc:  # a success status with a body that is not Ollama's JSON: a proxy's page
            raise unexpected_reply(_PROVIDER, where, exc, "host") from exc
        except (httpx.HTTPError, self._sdk.RequestError, TypeError, KeyError) as exc:
            # A reply the SDK cannot decode, a request it refuses to build: still the model's failure.
            raise ModelError(f"Ollama call for model {self.model!r} failed ({type(exc).__name__}: {exc}); "
                             "check the server and the model, then run sleep again") from exc
        if getattr(result, "response", None) is None and getattr(result, "done", None) is None:
            # Ollama always says whether it is done; a body without either is another server's
            # (a proxy's error JSON, which the SDK drops before we see it), not an empty answer.
            raise unexpected_reply(_PROVIDER, where, "JSON without Ollama's response and done", "host")
        if getattr(result, "done", None) is False:  # one chunk of a streamed answer: its start, at most
            raise ModelError(
                f"Ollama model {self.model!r} returned part of an answer (done is false): the server, or a "
                "proxy before it, sent the first chunk of a stream; nothing was changed: check host, then run "
                "sleep again"
            )
        text = getattr(result, "response", None) or ""
        if not isinstance(text, str):
            raise ModelError(f"Ollama model {self.model!r} returned {type(text).__name__}, not text")
        if result.done_reason == "length":
            raise truncated_failure(_PROVIDER, self.model, max_tokens)
        return answer_of(_PROVIDER, self.model, text, f"done_reason {result.done_reason!r}")

    def __repr__(self) -> str:
        return f"OllamaModel({self.model!r})"


__all__ = ["OllamaModel"]
