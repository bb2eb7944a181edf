"""OpenAIModel through the real openai SDK (Responses API and chat completions), HTTP mocked."""

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
from lamar.models.openai import OpenAIModel

Handler = Callable[[httpx2.Request], httpx2.Response]


def response(text: str | None, *, status: str = "completed", reason: str | None = None) -> dict[str, Any]:
    content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "id": "resp_1", "object": "response", "created_at": 1, "status": status, "model": "gpt-test",
        "output": [{"type": "message", "id": "m1", "status": status, "role": "assistant", "content": content}],
        "incomplete_details": {"reason": reason} if reason else None,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    }


def chat(text: str | None, *, finish_reason: str = "stop") -> dict[str, Any]:
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": text}}]}


def model_with(handler: Handler, **options: Any) -> OpenAIModel:
    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return OpenAIModel("gpt-test", api_key="sk-test", http_client=client, max_retries=0, **options)


def test_responses_request_shape_and_text() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=response("[]"))

    assert model_with(handler).complete("find lessons", max_tokens=700) == "[]"
    (request,) = seen
    assert request.url.path == "/v1/responses"
    assert json.loads(request.content) == {"model": "gpt-test", "input": "find lessons", "max_output_tokens": 700}
    assert request.headers["authorization"] == "Bearer sk-test"


def test_chat_completions_for_compatible_servers() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=chat("[1]"))

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    model = OpenAIModel("local-model", api="chat", api_key="none", base_url="http://localhost:8000/v1",
                        http_client=client, max_retries=0)
    assert model.complete("hi", max_tokens=64) == "[1]"
    assert str(seen[0].url) == "http://localhost:8000/v1/chat/completions"
    assert json.loads(seen[0].content) == {"model": "local-model", "messages": [{"role": "user", "content": "hi"}],
                                          "max_completion_tokens": 64}
    legacy = model_with(handler, api="chat", token_limit="max_tokens")
    legacy.complete("hi", max_tokens=32)
    assert json.loads(seen[1].content)["max_tokens"] == 32


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize(
    ("status", "words"),
    [(400, "rejected the request"), (401, "OPENAI_API_KEY"), (404, "check the model name"),
     (429, "rate limiting"), (500, "failed on its side"), (503, "failed on its side")],
)
def test_http_errors_become_model_errors(api: str, status: int, words: str) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, json={"error": {"message": "boom", "type": "x", "code": None}})

    with pytest.raises(ModelError, match=words) as caught:
        model_with(handler, api=api).complete("hi")
    # The status once, then the API's words: not the SDK's "Error code: 500 - boom" after it.
    assert f"HTTP {status}: boom" in str(caught.value) and "error code" not in str(caught.value).lower()


def test_connection_error_becomes_a_model_error() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused")

    with pytest.raises(ModelError, match="could not reach OpenAI at https://api.openai.com/v1"):
        model_with(handler).complete("hi")


def test_incomplete_responses_are_errors() -> None:
    cut = response("", status="incomplete", reason="max_output_tokens")
    with pytest.raises(ModelError, match=r"output limit \(max_tokens=20\)"):
        model_with(lambda request: httpx2.Response(200, json=cut)).complete("hi", max_tokens=20)
    filtered = response(None, status="incomplete", reason="content_filter")
    with pytest.raises(ModelError, match="incomplete response.*content_filter"):
        model_with(lambda request: httpx2.Response(200, json=filtered)).complete("hi")
    partial = response('[{"precondition": ', status="incomplete", reason="max_output_tokens")
    with pytest.raises(ModelError, match="cut off"):
        model_with(lambda request: httpx2.Response(200, json=partial)).complete("hi")


@pytest.mark.parametrize("status", ["cancelled", "in_progress", "queued"])
def test_a_response_that_did_not_complete_is_an_error(status: str) -> None:
    """A background response, cancelled or not done yet, holds at most part of an answer: it is
    not mined, even when that part parses."""
    unfinished = response('[{"precondition": "p", "action": "a"}]', status=status)
    with pytest.raises(ModelError, match=f"did not complete \\(status '{status}'\\)"):
        model_with(lambda request: httpx2.Response(200, json=unfinished)).complete("hi")


def test_empty_outputs_are_errors() -> None:
    with pytest.raises(ModelError, match="returned no text"):
        model_with(lambda request: httpx2.Response(200, json=response(None))).complete("hi")
    with pytest.raises(ModelError, match="returned no text"):
        model_with(lambda request: httpx2.Response(200, json=chat(None)), api="chat").complete("hi")
    with pytest.raises(ModelError, match="cut off"):
        model_with(lambda request: httpx2.Response(200, json=chat("[", finish_reason="length")),
                   api="chat").complete("hi")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="api must be one of"):
        OpenAIModel("gpt-test", api="completions", api_key="k")
    with pytest.raises(ValueError, match="max_tokens"):
        model_with(lambda request: httpx2.Response(200, json=response("x"))).complete("hi", max_tokens=0)


def test_missing_key_is_a_model_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(ModelError) as raised:
        OpenAIModel("gpt-test")
    # Said as the Anthropic adapter says it, not in the SDK's words, which list options of its own
    # (`workload_identity`, `admin_api_key`, OPENAI_ADMIN_KEY) that do not call a model.
    assert str(raised.value) == "no OpenAI credentials for model 'gpt-test': set OPENAI_API_KEY or pass api_key=..."


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError, match=re.escape(f"the openai extra: {install_command('openai')}")):
        OpenAIModel("gpt-test")


def test_a_refusal_says_the_model_refused() -> None:
    """A refusal has no output text; the error says the model refused and quotes it, instead of
    reporting an empty answer."""
    refused = response(None)
    refused["output"][0]["content"] = [{"type": "refusal", "refusal": "I can't help with that."}]
    chat_refused = chat(None)
    chat_refused["choices"][0]["message"]["refusal"] = "I can't help with that."
    _both_refuse(refused, chat_refused)


def test_a_refusal_beside_text_is_not_mined() -> None:
    """A refusal part next to text (a lesson list, say) is still a refusal: the text is no
    answer, as with the other adapters."""
    lessons = '[{"precondition": "p", "action": "a"}]'
    refused = response(lessons)
    refused["output"][0]["content"].append({"type": "refusal", "refusal": "I can't help with that."})
    chat_refused = chat(lessons)
    chat_refused["choices"][0]["message"]["refusal"] = "I can't help with that."
    _both_refuse(refused, chat_refused)


def _both_refuse(responses_body: dict[str, Any], chat_body: dict[str, Any]) -> None:
    """Each API's body is a ModelError that says the model refused and quotes it."""
    for body, api in ((responses_body, "responses"), (chat_body, "chat")):
        with pytest.raises(ModelError, match="refused to answer.*I can't help with that"):
            model_with(lambda request, body=body: httpx2.Response(200, json=body), api=api).complete("hi")


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize(("body", "kind"), [("<html><body>Sign in to the proxy</body></html>", "text/html"),
                                            ("{not json", "application/json")], ids=["html", "broken-json"])
def test_a_reply_that_is_not_the_api_is_a_model_error(api: str, body: str, kind: str) -> None:
    """A proxy's login page or a broken body answered 200: complete() keeps its contract (a
    ModelError) and names the address to check."""
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, text=body, headers={"content-type": kind})

    with pytest.raises(ModelError, match="not a reply of the OpenAI API.*base_url") as caught:
        model_with(handler, api=api).complete("hi")
    assert body[:9] in str(caught.value)  # the body itself, not where a JSON decoder stopped in it


@pytest.mark.parametrize(("api", "body"), [
    ("responses", chat("[]")),  # a chat completion where a response was asked for
    ("responses", {**response("[]"), "output": [None]}),
    ("chat", {**chat("[]"), "choices": [None]}),
    ("chat", {**chat("[]"), "choices": "[]"}),
    ("chat", {**chat("[]"), "choices": [{"index": 0, "finish_reason": "stop", "message": None}]}),
    ("chat", {**chat("[]"), "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": ["[]"]}}]}),
    ("chat", {**chat("[]"), "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": [{"type": "text", "text": 1}]}}]}),
], ids=["chat-for-responses", "null-output", "null-choice", "choices-text", "null-message", "content-strings",
        "content-part-number"])
def test_json_of_another_shape_is_a_model_error_not_a_type_error(api: str, body: dict[str, Any]) -> None:
    """A server that answers 200 with JSON of another shape (another API's, or an imitation of
    this one) gets the same ModelError as a login page, not a TypeError from reading the text."""
    with pytest.raises(ModelError, match="not a reply of the OpenAI API.*base_url"):
        model_with(lambda request: httpx2.Response(200, json=body), api=api).complete("hi")


@pytest.mark.parametrize(("options", "read"), [({}, 300.0), ({"timeout": 12.5}, 12.5)])
def test_a_new_client_gives_up_when_sleep_does(options: dict[str, Any], read: float) -> None:
    # The SDK's own ten minutes per attempt would keep a call sleep abandoned running long after.
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json=response("[]"))

    assert model_with(handler, **options).complete("find lessons") == "[]"
    assert seen[0].extensions["timeout"]["read"] == read


def test_a_chat_answer_in_parts_is_their_text() -> None:
    """Mistral's reasoning models (Magistral) send the content as parts, a "thinking" one first; it
    was refused as JSON of another shape, so no lesson could be mined with them."""
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "the traces show [t0]"}]},
             {"type": "text", "text": '[{"precondition": '}, {"type": "text", "text": '"p"}]'}]
    body = chat(None)
    body["choices"][0]["message"]["content"] = parts
    assert model_with(lambda request: httpx2.Response(200, json=body), api="chat").complete("hi") == (
        '[{"precondition": "p"}]')
    body["choices"][0]["message"]["content"] = parts[:1]
    with pytest.raises(ModelError, match="returned no text"):
        model_with(lambda request: httpx2.Response(200, json=body), api="chat").complete("hi")


def test_reasoning_before_a_chat_answer_is_not_part_of_it() -> None:
    """Compatible servers (vLLM, DeepSeek's) pass a reasoning model's <think>...</think> on in
    the content; the answer after it is what is returned."""
    body = chat('<think>the traces show [t0]</think>\n[{"precondition": "p"}]')
    assert model_with(lambda request: httpx2.Response(200, json=body), api="chat").complete("hi").strip() == (
        '[{"precondition": "p"}]')
    with pytest.raises(ModelError, match=r"returned no text \(only its reasoning\)"):
        model_with(lambda request: httpx2.Response(200, json=chat("<think>hmm")), api="chat").complete("hi")


@pytest.mark.parametrize("reply", [
    httpx2.Response(404, text="<html><title>404 Not Found</title></html>", headers={"content-type": "text/html"}),
    httpx2.Response(404, json={"detail": "Not Found"}),
], ids=["html", "framework-json"])
def test_a_404_from_a_wrong_base_url_names_the_address_not_the_model(reply: httpx2.Response) -> None:
    """A compatible server's base_url without /v1: its 404 is the path's, not the model's."""
    client = httpx2.Client(transport=httpx2.MockTransport(lambda request: reply))
    model = OpenAIModel("local", api="chat", api_key="none", base_url="http://localhost:8000", http_client=client,
                        max_retries=0)
    with pytest.raises(ModelError, match=r"nothing answers as the OpenAI API at "
                                         r"http://localhost:8000/chat/completions .*/v1 on most servers"):
        model.complete("hi")


def test_a_404_the_server_wrote_about_the_model_still_names_the_model() -> None:
    vllm = {"object": "error", "message": "The model `gpt-test` does not exist.", "type": "NotFoundError", "code": 404}
    with pytest.raises(ModelError, match="does not know model 'gpt-test'.*check the model name"):
        model_with(lambda request: httpx2.Response(404, json=vllm), api="chat").complete("hi")


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_an_error_body_under_a_success_status_says_the_error(api: str) -> None:
    """A gateway that answers 200 with the API's error JSON: the message says what the server
    said, not only that the reply is not the API's."""
    body = {"error": {"message": "upstream quota exceeded", "type": "insufficient_quota"}}
    with pytest.raises(ModelError, match="answered model 'gpt-test' with an error.*'upstream quota exceeded'"):
        model_with(lambda request: httpx2.Response(200, json=body), api=api).complete("hi")


def test_a_redirect_says_to_set_base_url_to_where_it_leads() -> None:
    """A 301 or 302 is followed as a GET, which the server refuses with a 405: not the model name
    or max_tokens to check, but base_url."""
    def moved(request: httpx2.Request) -> httpx2.Response:
        if request.url.scheme == "http":
            return httpx2.Response(302, headers={"location": "https://llm.test/v1/chat/completions"})
        return httpx2.Response(405 if request.method == "GET" else 200, json=chat("[]"))

    client = httpx2.Client(transport=httpx2.MockTransport(moved), follow_redirects=True)
    model = OpenAIModel("gpt-test", api="chat", api_key="sk-test", base_url="http://llm.test/v1", http_client=client,
                        max_retries=0)
    with pytest.raises(ModelError, match=r"HTTP 405.*redirect.*set base_url") as caught:
        model.complete("hi")
    assert "after a redirect to https://llm.test/v1/chat/completions" in str(caught.value)
    # The base_url to set, not the endpoint's URL: the SDK adds /chat/completions to it.
    assert "set base_url to https://llm.test/v1, where" in str(caught.value)


@pytest.mark.parametrize("api", ["responses", "chat"])
def test_an_async_client_is_refused_when_the_model_is_built(api: str) -> None:
    import openai

    with pytest.raises(InvalidArgument, match="async OpenAI client.*openai.OpenAI"):
        OpenAIModel("gpt-test", api=api, client=openai.AsyncOpenAI(api_key="sk-test"))


def test_a_server_that_refuses_max_completion_tokens_is_asked_with_max_tokens() -> None:
    # Older OpenAI-compatible servers name the parameter they refuse; `lamar sleep --model openai-chat:...`
    # cannot pass token_limit="max_tokens", so every night's mining failed on them.
    sent: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        sent.append(body)
        if "max_completion_tokens" in body:
            return httpx2.Response(400, json={"error": {
                "message": "Unrecognized request argument supplied: max_completion_tokens",
                "type": "invalid_request_error", "param": None, "code": None}})
        return httpx2.Response(200, json=chat("[]"))

    model = model_with(handler, api="chat")
    assert model.complete("find lessons", max_tokens=300) == "[]"
    assert [sorted(set(b) & {"max_tokens", "max_completion_tokens"}) for b in sent] == [
        ["max_completion_tokens"], ["max_tokens"]]
    assert sent[1]["max_tokens"] == 300
    assert model.complete("find lessons", max_tokens=300) == "[]" and len(sent) == 3  # kept to max_tokens
    # Any other 400 is the request's own fault, and is said as before.
    other = model_with(lambda request: httpx2.Response(400, json={"error": {"message": "bad model"}}), api="chat")
    with pytest.raises(ModelError, match="rejected the request"):
        other.complete("find lessons")
