"""`OpenAIModel`: the Model protocol over OpenAI's Responses API, or chat completions for
compatible servers (the `openai` extra)."""

from __future__ import annotations

from typing import Any

from lamar._errors import ModelError
from lamar.models.attempts import end_reads_at_deadline, with_retries
from lamar.models.protocol import (
    PASS_API_KEY,
    answer_of,
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

_SET_KEY = "set OPENAI_API_KEY" + PASS_API_KEY  # what a missing or refused key asks for
_PROVIDER = "OpenAI"
_APIS = ("responses", "chat")


class OpenAIModel:
    """A model behind the OpenAI SDK.

    Args:
        model: the model name, e.g. "gpt-5-mini" (required).
        client: an `openai.OpenAI` client to use (one is built when omitted).
        api: "responses" (default; `client.responses.create`) or "chat"
            (`client.chat.completions.create`, for servers that only speak chat completions).
        token_limit: the name of the output-limit parameter for api="chat";
            "max_completion_tokens" (OpenAI) or "max_tokens" (older compatible servers; one that
            refuses max_completion_tokens by name is asked again with max_tokens, kept from then on).
        **client_kwargs: passed to `openai.OpenAI(...)` (api_key, base_url, max_retries,
            http_client, ...); `timeout` defaults to `lamar.models.protocol.DEFAULT_TIMEOUT` seconds.
            The adapter makes the client's retries itself, none past the deadline of a call sleep
            bounds (`model_timeout`).

    Raises:
        ImportError: the openai package is not installed.
        ModelError: the client cannot be built (no API key, say).
        InvalidArgument: `client` is an async client.
    """

    def __init__(self, model: str, *, client: Any = None, api: str = "responses",
                 token_limit: str = "max_completion_tokens", **client_kwargs: Any) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError(f"model must be an OpenAI model name; got {model!r}")
        if api not in _APIS:
            raise ValueError(f"api must be one of {list(_APIS)}; got {api!r}")
        if token_limit not in ("max_completion_tokens", "max_tokens"):
            raise ValueError(f"token_limit must be 'max_completion_tokens' or 'max_tokens'; got {token_limit!r}")
        self.model = model
        self.api = api
        self.token_limit = token_limit
        self._sdk = load_sdk("openai", "openai")
        try:
            self.client = sdk_client(_PROVIDER, self._sdk.OpenAI, self._sdk.OpenAIError, client, client_kwargs,
                                     _SET_KEY)
        except ModelError as exc:
            if _no_key(client_kwargs, exc.__cause__):  # the SDK's words list options that call no model
                raise ModelError(f"no OpenAI credentials for model {model!r}: {_SET_KEY}") from exc
            raise
        refuse_async(_PROVIDER, self.client, "responses.create" if api == "responses" else "chat.completions.create",
                     "openai.OpenAI")
        end_reads_at_deadline(getattr(self.client, "_client", None))  # the SDK's HTTP client, shared by its copies

    def complete(self, prompt: str, *, max_tokens: int = 2048) -> str:
        """Send `prompt`; return the answer's text.

        Raises:
            ModelError: HTTP error, unreachable server, or an empty, incomplete or cut-off answer.
        """
        try:
            return self._complete(prompt, max_tokens)
        except ModelError as exc:  # a server or a proxy may echo the key it was sent
            without_secrets(exc, (getattr(self.client, "api_key", None),
                                  *header_secrets(getattr(self.client, "default_headers", None))))
            raise

    def _complete(self, prompt: str, max_tokens: int) -> str:
        check_max_tokens(max_tokens)
        sdk = self._sdk
        try:
            if self.api == "responses":
                return self._responses(prompt, max_tokens)
            return self._chat(prompt, max_tokens)
        except (sdk.OpenAIError, ValueError) as exc:  # ValueError: a success status with a body that is not JSON
            raise sdk_failure(_PROVIDER, self.model, self.client, sdk, sdk.OpenAIError, exc, _SET_KEY) from exc

    def _responses(self, prompt: str, max_tokens: int) -> str:
        response = with_retries(self.client, self._sdk, lambda client, options: client.responses.create(
            model=self.model, input=prompt, max_output_tokens=max_tokens, **options))
        try:
            text = response.output_text  # the SDK's property walks `output`, which another API's JSON lacks
        except (AttributeError, TypeError):
            text = None
        if not isinstance(text, str):  # JSON, or text, of another shape (a chat completion, say)
            raise self._not_a_reply(response)
        if response.status == "incomplete":
            details = getattr(response, "incomplete_details", None)
            reason = getattr(details, "reason", None)
            if reason == "max_output_tokens":
                raise truncated_failure(_PROVIDER, self.model, max_tokens)
            raise ModelError(
                f"OpenAI model {self.model!r} returned an incomplete response (reason {reason!r}); "
                "nothing usable came back, try again or rephrase the traces"
            )
        if response.status == "failed":
            error = getattr(response, "error", None)
            raise ModelError(f"OpenAI model {self.model!r} failed the response: {getattr(error, 'message', error)}")
        if response.status not in (None, "completed"):  # cancelled or still running: part of an answer at most
            raise ModelError(
                f"OpenAI model {self.model!r} did not complete (status {response.status!r}); nothing usable "
                "came back: run sleep again, and check base_url if a proxy answers before the model is done"
            )
        refusals = [part.refusal for item in response.output or [] if getattr(item, "type", None) == "message"
                    for part in item.content or [] if getattr(part, "type", None) == "refusal"]
        if refusals:  # text beside a refusal is no answer, even when it parses
            raise refusal_failure(_PROVIDER, self.model, " ".join(refusals))
        if not text.strip():
            raise empty_failure(_PROVIDER, self.model, f"status {response.status!r}")
        return text

    def _chat(self, prompt: str, max_tokens: int) -> str:
        def send(limit: str) -> Any:
            return with_retries(self.client, self._sdk, lambda client, options: client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": prompt}],
                **{limit: max_tokens},
                **options,
            ))

        try:
            completion = send(self.token_limit)
        except self._sdk.BadRequestError as exc:
            # An older compatible server refuses OpenAI's name for the limit, by name; `lamar sleep
            # --model openai-chat:...` has no way to pass token_limit, so the adapter asks again.
            if self.token_limit != "max_completion_tokens" or "max_completion_tokens" not in str(exc):
                raise
            completion = send("max_tokens")
            self.token_limit = "max_tokens"
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list):  # JSON, or text, of another shape
            raise self._not_a_reply(completion)
        if not choices:
            raise empty_failure(_PROVIDER, self.model, "no choices")
        choice = choices[0]
        content = getattr(getattr(choice, "message", None), "content", 0)
        if isinstance(content, list):  # parts, as Mistral and some gateways send: their text is the answer
            content = _text_of_parts(content)
        if content is not None and not isinstance(content, str):  # no message, or content of another shape
            raise unexpected_reply(_PROVIDER, str(self.client.base_url), completion)
        if choice.finish_reason == "length":
            raise truncated_failure(_PROVIDER, self.model, max_tokens)
        if choice.finish_reason == "content_filter":
            raise ModelError(f"model {self.model!r} stopped on its content filter; nothing usable came back")
        text = content or ""
        refusal = getattr(choice.message, "refusal", None)
        if refusal:  # text beside a refusal is no answer, even when it parses
            raise refusal_failure(_PROVIDER, self.model, refusal)
        return answer_of(_PROVIDER, self.model, text, f"finish_reason {choice.finish_reason!r}")

    def _not_a_reply(self, reply: object) -> ModelError:
        if said := reported_error(reply):
            return error_reply(_PROVIDER, self.model, str(self.client.base_url), said)
        return unexpected_reply(_PROVIDER, str(self.client.base_url), reply)

    def __repr__(self) -> str:
        return f"OpenAIModel({self.model!r}, api={self.api!r})"


def _text_of_parts(parts: list[Any]) -> object:
    """The text parts of a chat message's content joined (a "thinking" part is no part of the
    answer), or `parts` as they came when one is not of that shape."""
    texts = [part.get("text") for part in parts if isinstance(part, dict) and part.get("type") == "text"]
    if not all(isinstance(part, dict) for part in parts) or not all(isinstance(text, str) for text in texts):
        return parts
    return "".join(str(text) for text in texts)


def _no_key(client_kwargs: dict[str, Any], refusal: BaseException | None) -> bool:
    """Whether the SDK refused to build a client for want of a key: none passed, none in the environment."""
    import os

    return (not client_kwargs.get("api_key") and not os.environ.get("OPENAI_API_KEY")
            and "api_key" in str(refusal).lower())


__all__ = ["OpenAIModel"]
