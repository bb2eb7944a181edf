"""`AnthropicModel`: the Model protocol over Anthropic's Messages API (the `anthropic` extra)."""

from __future__ import annotations

from typing import Any

from lamar._errors import ModelError
from lamar.models.attempts import end_reads_at_deadline, with_retries
from lamar.models.protocol import (
    PASS_API_KEY,
    check_max_tokens,
    empty_failure,
    error_reply,
    header_secrets,
    load_sdk,
    refusal_failure,
    refuse_async,
    reported_error,
    sdk_client,
    truncated_failure,
    unexpected_reply,
    without_secrets,
)
from lamar.models.sdk_failures import sdk_failure

_SET_KEY = "set ANTHROPIC_API_KEY" + PASS_API_KEY  # what a missing or refused key asks for
_PROVIDER = "Anthropic"
_CUT_OFF = frozenset({"max_tokens", "model_context_window_exceeded"})


class AnthropicModel:
    """Claude through `client.messages.create`; the answer is the text blocks joined.

    Args:
        model: the model name, e.g. "claude-sonnet-4-5" (required: Lamar picks no default).
        client: an `anthropic.Anthropic` client to use (one is built when omitted).
        **client_kwargs: passed to `anthropic.Anthropic(...)` (api_key, base_url,
            max_retries, http_client, ...); `timeout` defaults to
            `lamar.models.protocol.DEFAULT_TIMEOUT` seconds. The adapter makes the client's
            retries itself, none past the deadline of a call sleep bounds (`model_timeout`).

    Raises:
        ImportError: the anthropic package is not installed.
        InvalidArgument: `client` is an async client.
    """

    def __init__(self, model: str, *, client: Any = None, **client_kwargs: Any) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be an Anthropic model name; got {model!r}")
        self.model = model
        self._sdk = load_sdk("anthropic", "anthropic")
        self.client = sdk_client(_PROVIDER, self._sdk.Anthropic, self._sdk.AnthropicError, client, client_kwargs,
                                 _SET_KEY)
        refuse_async(_PROVIDER, self.client, "messages.create", "anthropic.Anthropic")
        end_reads_at_deadline(getattr(self.client, "_client", None))  # the SDK's HTTP client, shared by its copies
        if client is None and not _has_credentials(self.client):
            # The SDK only notices at the first call; said here, the CLI stops before reading traces.
            raise ModelError(f"no Anthropic credentials for model {model!r}: {_SET_KEY}")

    def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
        """Send `prompt` as one user message; return the reply's text.

        Raises:
            ModelError: HTTP error, unreachable API, missing credentials, or an empty or
                cut-off reply.
        """
        try:
            return self._complete(prompt, max_tokens)
        except ModelError as exc:  # a server or a proxy may echo the key it was sent
            without_secrets(exc, (getattr(self.client, "api_key", None), getattr(self.client, "auth_token", None),
                                  *header_secrets(getattr(self.client, "default_headers", None))))
            raise

    def _complete(self, prompt: str, max_tokens: int) -> str:
        check_max_tokens(max_tokens)
        sdk = self._sdk
        # with_retries says each request's timeout outright: left unsaid on a client at the SDK's
        # default, the SDK refuses a large max_tokens ("streaming is required") before sending,
        # where a client Lamar builds sends it; model_timeout bounds the call either way.
        try:
            message = with_retries(self.client, sdk, lambda client, options: client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=[{"role": "user", "content": prompt}],
                **options,
            ))
        except (sdk.AnthropicError, ValueError) as exc:  # ValueError: a success status with a body that is not JSON
            raise sdk_failure(_PROVIDER, self.model, self.client, sdk, sdk.AnthropicError, exc, _SET_KEY) from exc
        except TypeError as exc:
            # The SDK reports missing credentials as a TypeError before sending anything.
            if "authentication" not in str(exc):
                raise
            raise ModelError(
                f"no Anthropic credentials for model {self.model!r}: {_SET_KEY}"
            ) from exc
        if not isinstance(getattr(message, "content", None), list):  # JSON, or text, of another shape
            if said := reported_error(message):
                raise error_reply(_PROVIDER, self.model, str(self.client.base_url), said)
            raise unexpected_reply(_PROVIDER, str(self.client.base_url), message)
        texts = [getattr(block, "text", None) for block in message.content if getattr(block, "type", None) == "text"]
        parts = [part for part in texts if isinstance(part, str)]
        if len(parts) < len(texts):  # a text block without text: another API's JSON
            raise unexpected_reply(_PROVIDER, str(self.client.base_url), message)
        text = "".join(parts)
        if message.stop_reason == "refusal":  # text before it is no answer, even when it parses
            raise refusal_failure(_PROVIDER, self.model, text)
        if message.stop_reason in _CUT_OFF:
            raise truncated_failure(_PROVIDER, self.model, max_tokens)
        if not text.strip():
            raise empty_failure(_PROVIDER, self.model, f"stop_reason {message.stop_reason!r}")
        return text

    def __repr__(self) -> str:
        return f"AnthropicModel({self.model!r})"


def _has_credentials(client: Any) -> bool:
    """What the SDK checks before sending: a key or token header, or an auth hook (a profile's tokens)."""
    headers = {str(key).lower(): value for key, value in dict(getattr(client, "default_headers", None) or {}).items()}
    return (bool(headers.get("x-api-key") or "authorization" in headers)
            or getattr(client, "custom_auth", None) is not None)


__all__ = ["AnthropicModel"]
