"""AnthropicModel through the real anthropic SDK, HTTP mocked at the transport."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from lamar import InvalidArgument, ModelError
from lamar.extras import install_command
from lamar.models import Model
from lamar.models.anthropic import AnthropicModel

Handler = Callable[[httpx2.Request], httpx2.Response]


def message(*texts: str, stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": t} for t in texts],
        "stop_reason": stop_reason, "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 3},
    }


def model_with(handler: Handler) -> AnthropicModel:
    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client, max_retries=0)


def test_request_shape_and_text_extraction() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=message("[{\"a\": ", "1}]"))

    model = model_with(handler)
    assert isinstance(model, Model)
    assert model.complete("find lessons", max_tokens=321) == '[{"a": 1}]'
    (request,) = seen
    assert request.method == "POST" and request.url.path == "/v1/messages"
    body = json.loads(request.content)
    assert body == {"model": "claude-test", "max_tokens": 321,
                    "messages": [{"role": "user", "content": "find lessons"}]}
    assert "sk-ant-test" in request.headers.get("x-api-key", "") + request.headers.get("authorization", "")


def test_default_max_tokens_is_2048() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=message("ok"))

    model_with(handler).complete("hi")
    assert bodies[0]["max_tokens"] == 2048


@pytest.mark.parametrize(
    ("status", "words"),
    [
        (400, "rejected the request"),
        (401, "ANTHROPIC_API_KEY"),
        (404, "check the model name"),
        (429, "rate limiting"),
        (500, "failed on its side"),
        (529, "failed on its side"),
    ],
)
def test_http_errors_become_model_errors(status: int, words: str) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json={"type": "error", "error": {"type": "x", "message": "boom"}})

    with pytest.raises(ModelError, match=words) as caught:
        model_with(handler).complete("hi")
    assert f"HTTP {status}" in str(caught.value) and "claude-test" in str(caught.value)
    assert f"HTTP {status}: boom" in str(caught.value), "the SDK's message repeats the status"


def test_connection_error_becomes_a_model_error() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused")

    with pytest.raises(ModelError, match="could not reach Anthropic at https://api.anthropic.com"):
        model_with(handler).complete("hi")


def test_empty_reply_is_an_error() -> None:
    with pytest.raises(ModelError, match="returned no text"):
        model_with(lambda request: httpx2.Response(200, json=message())).complete("hi")


def test_truncated_reply_is_an_error() -> None:
    reply = message('[{"precondition": "x", "act', stop_reason="max_tokens")
    with pytest.raises(ModelError, match=r"output limit \(max_tokens=50\).*cut off"):
        model_with(lambda request: httpx2.Response(200, json=reply)).complete("hi", max_tokens=50)


def test_missing_credentials_say_what_to_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path))  # no profile on disk either
    client = httpx2.Client(transport=httpx2.MockTransport(lambda request: httpx2.Response(200, json=message("x"))))
    with pytest.raises(ModelError, match="set ANTHROPIC_API_KEY"):
        AnthropicModel("claude-test", http_client=client, max_retries=0).complete("hi")


def test_an_injected_client_is_used() -> None:
    import anthropic

    client = anthropic.Anthropic(api_key="k", http_client=httpx2.Client(
        transport=httpx2.MockTransport(lambda request: httpx2.Response(200, json=message("from injected")))))
    assert AnthropicModel("claude-test", client=client).complete("hi") == "from injected"
    with pytest.raises(TypeError, match="either client="):
        AnthropicModel("claude-test", client=client, api_key="k")
    with pytest.raises(ValueError, match="model name"):
        AnthropicModel("", client=client)


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ImportError, match=re.escape(f"the anthropic extra: {install_command('anthropic')}")):
        AnthropicModel("claude-test")


@pytest.mark.parametrize("texts", [(), ("I can't help with that.",), ('[{"precondition": "the build',)],
                         ids=["no-text", "apology", "partial-json"])
def test_a_refusal_is_an_error_not_an_answer(texts: tuple[str, ...]) -> None:
    """stop_reason "refusal": whatever text came before it is not the model's answer to mine."""
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, json=message(*texts, stop_reason="refusal"))

    with pytest.raises(ModelError, match="refused to answer"):
        model_with(handler).complete("hi")


@pytest.mark.parametrize(("body", "kind"), [("<html><body>Sign in to the proxy</body></html>", "text/html"),
                                            ("{not json", "application/json")], ids=["html", "broken-json"])
def test_a_reply_that_is_not_the_api_is_a_model_error(body: str, kind: str) -> None:
    """A proxy's login page or a broken body answered 200: complete() keeps its contract (a
    ModelError) and names the address to check."""
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, text=body, headers={"content-type": kind})

    with pytest.raises(ModelError, match="not a reply of the Anthropic API.*base_url") as caught:
        model_with(handler).complete("hi")
    assert body[:9] in str(caught.value)  # the body itself, not where a JSON decoder stopped in it


@pytest.mark.parametrize("block", [{"type": "text", "text": None}, {"type": "text"}, {"type": "text", "text": 5}],
                         ids=["null", "missing", "number"])
def test_json_of_another_shape_is_a_model_error_not_a_type_error(block: dict[str, Any]) -> None:
    """A server that answers 200 with a message whose text block holds no text (an imitation of
    the API, say) gets the same ModelError as a login page, not a TypeError from joining the text."""
    body = {**message(), "content": [block]}
    with pytest.raises(ModelError, match="not a reply of the Anthropic API.*base_url"):
        model_with(lambda request: httpx2.Response(200, json=body)).complete("hi")


@pytest.mark.parametrize(("options", "read"), [({}, 300.0), ({"timeout": 12.5}, 12.5)])
def test_a_new_client_gives_up_when_sleep_does(options: dict[str, Any], read: float) -> None:
    # The SDK's own ten minutes per attempt would keep a call sleep abandoned running long after.
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=message("[]"))

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    model = AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client, max_retries=0, **options)
    assert model.complete("find lessons") == "[]"
    assert seen[0].extensions["timeout"]["read"] == read


def test_missing_credentials_are_said_when_the_model_is_built(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """As the OpenAI adapter does: a missing key stops `lamar sleep` before it reads the traces,
    not at the first call after the store's proposals were made."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no profile on disk either
    with pytest.raises(ModelError, match="no Anthropic credentials for model 'claude-test': set ANTHROPIC_API_KEY"):
        AnthropicModel("claude-test")
    assert AnthropicModel("claude-test", auth_token="token").model == "claude-test"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    assert AnthropicModel("claude-test").model == "claude-test"


@pytest.mark.parametrize(("name", "max_tokens"), [("claude-test", 32_000), ("claude-opus-4-0", 16_000)])
def test_a_large_max_tokens_is_sent_through_a_client_of_your_own(name: str, max_tokens: int) -> None:
    """A client at the SDK's default timeout refused a large max_tokens before sending ("streaming
    is required"), reported as a proxy's page at base_url; a client Lamar builds sends it."""
    import anthropic

    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=message("[]"))

    client = anthropic.Anthropic(api_key="k", max_retries=0,
                                 http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    assert AnthropicModel(name, client=client).complete("hi", max_tokens=max_tokens) == "[]"
    assert bodies[0]["max_tokens"] == max_tokens
    ours = AnthropicModel(name, api_key="k", max_retries=0,
                          http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    assert ours.complete("hi", max_tokens=max_tokens) == "[]"


def test_a_404_from_a_wrong_base_url_names_the_address_not_the_model() -> None:
    """A base_url ending in /v1 sends to /v1/v1/messages: the 404 is the path's, not the model's."""
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(404, text="404 page not found")

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    model = AnthropicModel("claude-test", api_key="k", http_client=client, max_retries=0,
                           base_url="https://proxy.example/anthropic/v1")
    with pytest.raises(ModelError, match=r"nothing answers as the Anthropic API at "
                                         r"https://proxy.example/anthropic/v1/v1/messages .*without /v1") as caught:
        model.complete("hi")
    assert "does not know model" not in str(caught.value)


@pytest.mark.parametrize("body", [{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                                  {"error": {"message": "Overloaded", "code": 529}}], ids=["anthropic", "gateway"])
def test_an_error_body_under_a_success_status_says_the_error(body: dict[str, Any]) -> None:
    """A gateway that answers 200 with the API's error JSON: the message says what the server
    said, not only that the reply is not the API's."""
    with pytest.raises(ModelError, match="answered model 'claude-test' with an error.*'Overloaded'"):
        model_with(lambda request: httpx2.Response(200, json=body)).complete("hi")


def test_a_redirect_says_to_set_base_url_to_where_it_leads() -> None:
    """A 301 or 302 (http:// to https://) is followed as a GET, which the API refuses with a 405; a
    client that follows no redirects gets the 301 itself. Neither is the model's fault nor the
    server's: the message names where the redirect leads and says to set base_url there."""
    def moved(request: httpx2.Request) -> httpx2.Response:
        if request.url.scheme == "http":
            return httpx2.Response(301, headers={"location": "https://api.test/v1/messages"})
        return httpx2.Response(405 if request.method == "GET" else 200, json=message("[]"))

    follows = httpx2.Client(transport=httpx2.MockTransport(moved), follow_redirects=True)
    for client in (follows, httpx2.Client(transport=httpx2.MockTransport(moved))):
        model = AnthropicModel("claude-test", api_key="sk-ant-test", base_url="http://api.test", http_client=client,
                               max_retries=0)
        with pytest.raises(ModelError, match=r"redirect.* to https://api\.test/v1/messages.*set base_url") as caught:
            model.complete("hi")
        # The base_url to set, not the endpoint's URL: the SDK adds /v1/messages to it.
        assert "set base_url to https://api.test, where" in str(caught.value)


def test_an_async_client_is_refused_when_the_model_is_built() -> None:
    """Its create() returns a coroutine that never runs: at the first call, that read as a reply
    of another API ('check base_url'), with a never-awaited warning."""
    import anthropic

    with pytest.raises(InvalidArgument, match="async Anthropic client.*anthropic.Anthropic"):
        AnthropicModel("claude-test", client=anthropic.AsyncAnthropic(api_key="sk-ant-test"))
