"""A server that echoes the caller's key in an error (a proxy, a compatible server) does not put
it in the ModelError, in sleep's warning or in the saved report. Real SDKs, HTTP mocked."""

from __future__ import annotations

import json
import logging

import httpx
import httpx2
import ollama
import pytest

from lamar import Lamar, ModelError, Trace
from lamar.models import ScriptedModel
from lamar.models.anthropic import AnthropicModel
from lamar.models.ollama import OllamaModel
from lamar.models.openai import OpenAIModel

ANTHROPIC_KEY = "sk-ant-api03-Zq8wXv2Lk9Tn4Rb7Yc1Md6Pf3Hs5Jg0A"
PROXY_KEY = "team-proxy-7f3a9c2e1b8d"  # no shape a secret scanner knows: only its value finds it


def echo_key(status: int) -> httpx2.MockTransport:
    def handler(request: httpx2.Request) -> httpx2.Response:
        said = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        return httpx2.Response(status, json={"type": "error", "error": {
            "type": "authentication_error", "message": f"invalid key {said}"}})
    return httpx2.MockTransport(handler)


def _anthropic_error(status: int) -> ModelError:
    """The ModelError an Anthropic model raises for an HTTP `status` answer that echoes its key."""
    model = AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, max_retries=0,
                           http_client=httpx2.Client(transport=echo_key(status)))
    with pytest.raises(ModelError, match=f"HTTP {status}") as caught:
        model.complete("hi")
    return caught.value


@pytest.mark.parametrize("status", [401, 500])
def test_anthropic_error_does_not_repeat_the_key(status: int) -> None:
    error = _anthropic_error(status)
    assert ANTHROPIC_KEY not in str(error)
    assert "Zq8wXv2Lk9" not in str(error)


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_openai_compatible_proxy_key_of_any_shape_is_hidden(api: str) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(403, json={"error": {"message": f"no route for {request.headers['authorization']}"}})

    model = OpenAIModel("local", api=api, api_key=PROXY_KEY, base_url="http://proxy.test/v1", max_retries=0,
                        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with pytest.raises(ModelError, match="HTTP 403") as caught:
        model.complete("hi")
    assert PROXY_KEY not in str(caught.value)
    assert "no route for Bearer [REDACTED:api-key]" in str(caught.value)


def test_ollama_key_from_its_authorization_header_is_hidden() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": f"unauthorized: {request.headers['authorization']}"})

    client = ollama.Client(host="http://ollama.test:11434", headers={"Authorization": f"Bearer {PROXY_KEY}"},
                           transport=httpx.MockTransport(handler))
    with pytest.raises(ModelError, match="HTTP 401") as caught:
        OllamaModel("llama-test", client=client).complete("hi")
    assert PROXY_KEY not in str(caught.value)


def test_sleep_keeps_an_echoed_key_out_of_its_warning_and_its_report(caplog: pytest.LogCaptureFixture) -> None:
    model = AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, max_retries=0,
                           http_client=httpx2.Client(transport=echo_key(401)))
    traces = [Trace(f"t{i}", {"project": "p"}, input="fix the build", outcome="reverted") for i in range(2)]
    with caplog.at_level(logging.WARNING, logger="lamar.sleep.mining"):
        report = Lamar(":memory:", seed=1).sleep(traces=traces, model=model)
    assert "HTTP 401" in report.mining_error
    assert "Zq8wXv2Lk9" not in json.dumps(report.to_dict())
    assert "Zq8wXv2Lk9" not in caplog.text and "HTTP 401" in caplog.text


def test_a_model_of_ones_own_that_says_a_key_has_it_scrubbed_in_the_report() -> None:
    said = ModelError(f"gateway refused Authorization: Bearer {ANTHROPIC_KEY}")
    traces = [Trace(f"t{i}", {"project": "p"}, input="fix the build", outcome="reverted") for i in range(2)]
    report = Lamar(":memory:", seed=1).sleep(traces=traces, model=ScriptedModel([said]))
    assert "gateway refused" in report.mining_error
    assert "Zq8wXv2Lk9" not in json.dumps(report.to_dict())


def _chain(error: BaseException) -> str:
    """What a traceback of `error` prints: its message and every exception it shows as its cause."""
    import traceback

    return "".join(traceback.format_exception(error))


@pytest.mark.parametrize("status", [401, 500])
def test_the_sdk_error_behind_a_model_error_does_not_show_the_key_in_a_traceback(status: int) -> None:
    error = _anthropic_error(status)
    assert "Zq8wXv2Lk9" not in _chain(error)
    assert f"HTTP {status}" in _chain(error)


def test_a_proxy_key_of_any_shape_is_not_in_the_traceback_of_call_model() -> None:
    from lamar.models.protocol import call_model

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(403, json={"error": {"message": f"no route for {request.headers['authorization']}"}})

    model = OpenAIModel("local", api="chat", api_key=PROXY_KEY, base_url="http://proxy.test/v1", max_retries=0,
                        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with pytest.raises(ModelError, match="HTTP 403") as caught:
        call_model(model, "hi", max_tokens=16, timeout=30)
    assert PROXY_KEY not in _chain(caught.value)


def test_a_failing_model_of_ones_own_does_not_show_a_key_in_the_traceback_of_call_model() -> None:
    from lamar.models.protocol import call_model

    class Broken:
        def complete(self, prompt: str, *, max_tokens: int) -> str:
            raise RuntimeError(f"gateway refused Authorization: Bearer {ANTHROPIC_KEY}")

    with pytest.raises(ModelError, match="gateway refused") as caught:
        call_model(Broken(), "hi", max_tokens=16, timeout=30)
    assert "Zq8wXv2Lk9" not in _chain(caught.value)


def test_an_error_without_a_key_keeps_its_cause() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "overloaded"}})

    model = AnthropicModel("claude-test", api_key=ANTHROPIC_KEY, max_retries=0,
                           http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with pytest.raises(ModelError, match="HTTP 500") as caught:
        model.complete("hi")
    assert caught.value.__cause__ is not None and "overloaded" in _chain(caught.value)


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
def test_a_gateway_key_in_a_custom_header_is_hidden(provider: str) -> None:
    """A key the client sends in a header of the user's own (`X-Gateway-Key`), which a gateway echoes
    in its error, is hidden as the client's API key is, whatever its shape."""
    said = {"message": "gateway refused"}

    def answer(headers: dict[str, str]) -> dict[str, object]:
        said["message"] = f"gateway refused key {headers.get('x-gateway-key')}"
        return {"error": dict(said)}

    custom = {"X-Gateway-Key": PROXY_KEY}
    if provider == "ollama":
        transport = httpx.MockTransport(lambda request: httpx.Response(401, json=answer(dict(request.headers))))
        model: object = OllamaModel("llama-test", client=ollama.Client(host="http://ollama.test:11434", headers=custom,
                                                                       transport=transport))
    else:
        client = httpx2.Client(transport=httpx2.MockTransport(
            lambda request: httpx2.Response(401, json=answer(dict(request.headers)))))
        build = AnthropicModel if provider == "anthropic" else OpenAIModel
        model = build("m", api_key="sk-none", default_headers=custom, http_client=client, max_retries=0)
    with pytest.raises(ModelError, match="HTTP 401") as caught:
        model.complete("hi")  # type: ignore[attr-defined]
    assert PROXY_KEY in said["message"]  # the gateway did echo it
    assert PROXY_KEY not in str(caught.value) and "[REDACTED:api-key]" in str(caught.value)
