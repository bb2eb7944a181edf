"""OllamaModel through the real ollama SDK, HTTP mocked with httpx.MockTransport."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

import httpx
import ollama
import pytest

from lamar import InvalidArgument, ModelError
from lamar.extras import install_command
from lamar.models.ollama import OllamaModel

HOST = "http://ollama.test:11434"


def generated(text: str, *, done_reason: str = "stop") -> dict[str, Any]:
    return {"model": "llama-test", "created_at": "2026-01-01T00:00:00Z", "response": text, "done": True,
            "done_reason": done_reason}


def model_with(handler: Callable[[httpx.Request], httpx.Response]) -> OllamaModel:
    return OllamaModel("llama-test", client=ollama.Client(host=HOST, transport=httpx.MockTransport(handler)))


def test_request_shape_and_text() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=generated("[]"))

    assert model_with(handler).complete("find lessons", max_tokens=256) == "[]"
    (request,) = seen
    assert str(request.url) == f"{HOST}/api/generate"
    body = json.loads(request.content)
    assert (body["model"], body["prompt"], body["options"], body["stream"]) == (
        "llama-test", "find lessons", {"num_predict": 256}, False)


def test_host_and_client_kwargs_build_a_client() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=generated("ok"))

    model = OllamaModel("llama-test", host="http://gpu-box:11434", transport=httpx.MockTransport(handler))
    assert model.complete("hi") == "ok"
    assert seen == ["http://gpu-box:11434/api/generate"]


def test_an_unpulled_model_says_how_to_pull_it() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": "model 'llama-test' not found"})

    with pytest.raises(ModelError, match="ollama pull llama-test"):
        model_with(handler).complete("hi")


@pytest.mark.parametrize(("status", "words"), [(400, "rejected the request"), (500, "failed on its side")])
def test_http_errors_become_model_errors(status: int, words: str) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json={"error": "boom"})

    with pytest.raises(ModelError, match=words) as caught:
        model_with(handler).complete("hi")
    assert f"HTTP {status}: boom" in str(caught.value)


def test_a_long_error_body_is_quoted_up_to_a_whole_word() -> None:
    # It was cut at 300 characters mid-word ("... replica025 replica026 rep").
    words = [f"replica{i:03d}" for i in range(40)]

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"error": " ".join(words)})

    with pytest.raises(ModelError) as caught:
        model_with(handler).complete("hi")
    quoted = re.search(r"HTTP 500: (.*?)\); nothing was changed", str(caught.value)).group(1)
    assert quoted.endswith("…") and len(quoted) <= 300
    assert quoted[:-1].split(" ") == words[:len(quoted[:-1].split(" "))], quoted


def test_a_server_that_is_not_running_is_a_model_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    with pytest.raises(ModelError, match="could not reach Ollama at http://ollama.test:11434"):
        model_with(handler).complete("hi")


def test_a_timeout_is_a_model_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("too slow")

    with pytest.raises(ModelError, match="Ollama model .* did not answer in time.*ReadTimeout"):
        model_with(handler).complete("hi")


def test_empty_and_truncated_outputs_are_errors() -> None:
    with pytest.raises(ModelError, match="returned no text"):
        model_with(lambda request: httpx.Response(200, json=generated(""))).complete("hi")
    with pytest.raises(ModelError, match=r"output limit \(max_tokens=10\)"):
        model_with(lambda request: httpx.Response(200, json=generated("[{", done_reason="length"))).complete(
            "hi", max_tokens=10)


def test_an_answer_not_done_is_not_taken_for_the_whole_answer() -> None:
    # A body with done false (a stream's first chunk, from a proxy or a server that streams anyway)
    # was returned as the answer: "[" of a lesson list, or half a lesson.
    part = {**generated("[{"), "done": False}
    del part["done_reason"]
    with pytest.raises(ModelError, match=r"returned part of an answer \(done is false\).*check host"):
        model_with(lambda request: httpx.Response(200, json=part)).complete("hi")


def test_client_and_host_together_are_refused() -> None:
    with pytest.raises(TypeError, match="either client="):
        OllamaModel("llama-test", client=ollama.Client(host=HOST), host=HOST)


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ollama", None)
    with pytest.raises(ImportError, match=re.escape(f"the ollama extra: {install_command('ollama')}")):
        OllamaModel("llama-test")


def test_reasoning_before_the_answer_is_not_part_of_it() -> None:
    """A reasoning model writes <think>...</think> before its answer; the answer alone is returned,
    so sleep parses the lesson list instead of dropping the batch as invalid JSON."""
    reply = '<think>\nThe traces show [t0, t2] failing; maybe {"x": 1}?\n</think>\n\n[{"precondition": "p"}]'
    assert model_with(lambda request: httpx.Response(200, json=generated(reply))).complete("hi").strip() == (
        '[{"precondition": "p"}]')
    plain = "[] <think>not a prefix</think>"
    assert model_with(lambda request: httpx.Response(200, json=generated(plain))).complete("hi") == plain
    with pytest.raises(ModelError, match=r"returned no text \(only its reasoning\)"):
        model_with(lambda request: httpx.Response(200, json=generated("<think>and then it stopped"))).complete("hi")


def test_sleep_mines_the_answer_after_the_reasoning() -> None:
    from lamar import Lamar, Trace

    traces = [Trace(f"t{i}", {"project": "p"}, time=1000.0 + i, input="fix the build", attempted=["swift build"],
                    tool_errors=["error: module map is stale"], output="", outcome="reverted") for i in range(3)]
    lesson = [{"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
               "scope": {"project": "p"}, "trace_ids": ["t0", "t2"]}]
    reply = "<think>Two traces share the stale map.</think>\n" + json.dumps(lesson)
    report = Lamar(":memory:").sleep(traces=traces, model=model_with(
        lambda request: httpx.Response(200, json=generated(reply))))
    assert report.mining_error == "" and len(report.of_kind("candidate")) == 1


def test_a_404_from_a_wrong_host_path_is_not_an_unpulled_model() -> None:
    """A host with a path (http://box:11434/api) sends to /api/api/generate: pulling the model
    would not help, so the message names the address."""
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, text="404 page not found")

    model = OllamaModel("llama-test", host="http://box:11434/api", transport=httpx.MockTransport(handler))
    with pytest.raises(ModelError, match=r"nothing answers as the Ollama API at "
                                         r"http://box:11434/api/api/generate .*host is the server alone") as caught:
        model.complete("hi")
    assert "ollama pull" not in str(caught.value)


@pytest.mark.parametrize("reply", [
    httpx.Response(200, text="<html><body>Sign in to the proxy</body></html>", headers={"content-type": "text/html"}),
    httpx.Response(200, content='{"response": "caf\xe9"}'.encode("latin-1")),
    httpx.Response(200, json={"response": ["not", "text"], "done": True}),
], ids=["html", "not-utf8", "another-shape"])
def test_a_reply_that_is_not_the_api_names_the_address_to_check(reply: httpx.Response) -> None:
    """A proxy's page (or broken bytes) answered 200: the message names the address and the
    setting to check, as the other adapters' do, not a JSON decoder's complaint alone."""
    said = ("is a body that is not UTF-8" if reply.content.startswith(b'{"response": "caf')
            else "is not a reply of the Ollama API")
    with pytest.raises(ModelError, match=f"the answer from {HOST} {said}.*check host") as caught:
        model_with(lambda request: reply).complete("hi")
    if "html" in reply.headers.get("content-type", ""):  # the page itself, not where the JSON decoder stopped
        assert "Sign in to the proxy" in str(caught.value)


def test_json_that_is_not_ollamas_is_not_an_empty_answer() -> None:
    """A proxy's error JSON under HTTP 200 (the SDK drops its fields): not an empty answer to try
    again with another model, but a reply of another server, and the host to check."""
    body = {"error": {"message": "upstream unavailable"}}
    with pytest.raises(ModelError, match="not a reply of the Ollama API.*check host"):
        model_with(lambda request: httpx.Response(200, json=body)).complete("hi")


def test_a_redirect_says_to_set_host() -> None:
    """A redirect the client does not follow, or one followed as a GET (refused with a 405): the
    host to set, not an empty message or the model name to check."""
    def moved(request: httpx.Request) -> httpx.Response:
        return httpx.Response(301, headers={"location": "https://ollama.test/api/generate"})

    client = ollama.Client(host=HOST, transport=httpx.MockTransport(moved), follow_redirects=False)
    with pytest.raises(ModelError, match="redirected the request.*set host"):
        OllamaModel("llama-test", client=client).complete("hi")
    with pytest.raises(ModelError, match="HTTP 405.*redirect.*set host"):
        model_with(lambda request: httpx.Response(405, json={"error": "method not allowed"})).complete("hi")


def test_an_async_client_is_refused_when_the_model_is_built() -> None:
    with pytest.raises(InvalidArgument, match="async Ollama client.*ollama.Client"):
        OllamaModel("llama-test", client=ollama.AsyncClient(host=HOST))
