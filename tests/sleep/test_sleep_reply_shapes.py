"""Replies in the shapes real APIs give, through the real SDKs (HTTP mocked at the transport): a
JSON object mode's `{"lessons": [...]}` is mined, and keys a lesson does not read are set aside."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from lamar import Lamar, Trace
from lamar.models import Model

pytest.importorskip("openai", reason="the openai extra is not installed")
pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
from lamar.models.anthropic import AnthropicModel
from lamar.models.openai import OpenAIModel

TRACES = [Trace(f"t{i}", {"project": "demo"}, time=float(i), input="the build broke",
                tool_errors=["module map is stale"], outcome="reverted") for i in range(3)]
LESSON = {"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
          "rationale": "the map survives a resolve", "scope": {"project": "demo"}, "trace_ids": ["t0", "t1", "t2"]}


def openai_chat(text: str) -> Model:
    body = {"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-test",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}]}
    client = httpx2.Client(transport=httpx2.MockTransport(lambda request: httpx2.Response(200, json=body)))
    return OpenAIModel("gpt-test", api="chat", api_key="sk-test", http_client=client, max_retries=0)


def anthropic(text: str) -> Model:
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 3}}
    client = httpx2.Client(transport=httpx2.MockTransport(lambda request: httpx2.Response(200, json=body)))
    return AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client, max_retries=0)


MODELS: list[Callable[[str], Model]] = [openai_chat, anthropic]


def mined(model: Model) -> tuple[list[dict[str, Any]], list[str], str]:
    report = Lamar(":memory:").sleep(traces=TRACES, model=model)
    return ([p.payload["experience"] for p in report.of_kind("candidate")], [d.reason for d in report.dropped],
            report.mining_error)


@pytest.mark.parametrize("make", MODELS)
def test_an_object_holding_the_lesson_list_is_mined(make: Callable[[str], Model]) -> None:
    (exp,), dropped, error = mined(make(json.dumps({"lessons": [LESSON]})))
    assert (exp["action"], dropped, error) == (LESSON["action"], [], "")


@pytest.mark.parametrize("make", MODELS)
def test_a_key_the_lesson_does_not_read_is_set_aside_not_the_lesson(make: Callable[[str], Model]) -> None:
    reply = json.dumps({"lessons": [{**LESSON, "confidence": 0.9, "title": "stale module map"}]})
    (exp,), dropped, _ = mined(make(reply))
    assert dropped == [] and exp["action"] == LESSON["action"]
    assert "confidence" not in json.dumps(exp) and "stale module map" not in json.dumps(exp)


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(LESSON),  # a bare lesson holds one list (trace_ids): it is not a wrapper
        json.dumps({"lessons": [LESSON], "rejected": [LESSON]}),  # two lists: which is the answer is a guess
    ],
)
def test_an_object_that_is_no_one_list_of_lessons_is_refused(reply: str) -> None:
    lessons, dropped, error = mined(openai_chat(reply))
    refused = "model output is a JSON dict, not a list of lessons (nor an object holding one such list)"
    assert lessons == [] and dropped == [refused]
    assert error.startswith("no reply of the model held a lesson list")


@pytest.mark.parametrize("make", MODELS)
@pytest.mark.parametrize("wrap", [
    lambda listed: f"Here are the lessons: {json.dumps({'lessons': listed})} Hope this helps!",
    lambda listed: f"Here are the lessons: {json.dumps(listed)} Each cites three traces.",
    lambda listed: f"I found one:\n```json\n{json.dumps({'lessons': listed}, indent=2)}\n```\nThat is all.",
])
def test_a_lesson_list_inline_in_prose_is_mined(make: Callable[[str], Model], wrap: Callable[[Any], str]) -> None:
    (exp,), dropped, error = mined(make(wrap([LESSON])))
    assert (exp["action"], dropped, error) == (LESSON["action"], [], "")


@pytest.mark.parametrize("reply", [
    "I found no lesson worth keeping in these traces.",
    "See [1] and {2}: nothing recurred.",  # brackets of prose, no lesson list
    f"Either {json.dumps([LESSON])} or {json.dumps({'lessons': [LESSON]})}.",  # two answers: which is a guess
    f"The lesson is {json.dumps(LESSON)}.",  # a bare lesson, as a whole reply, is refused
    "Here it is: [" + json.dumps(LESSON),  # never closed
])
def test_prose_without_one_lesson_list_is_still_refused(reply: str) -> None:
    lessons, (dropped,), error = mined(openai_chat(reply))
    assert lessons == [] and dropped.startswith("model output is not valid JSON")
    assert error.startswith("no reply of the model held a lesson list")


def openai_replies(*texts: str) -> Model:
    """An OpenAI chat model that answers each call with the next of `texts`."""
    left = list(texts)

    def answer(request: httpx2.Request) -> httpx2.Response:
        body = {"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-test", "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": left.pop(0)}}]}
        return httpx2.Response(200, json=body)

    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    return OpenAIModel("gpt-test", api="chat", api_key="sk-test", http_client=client, max_retries=0)


def test_lessons_of_a_reply_that_cannot_be_read_are_said_lost_beside_those_mined(
        caplog: pytest.LogCaptureFixture) -> None:
    reply = json.dumps([LESSON, {"precondition": "the build broke", "action": "rebuild"}, "rerun the build"])
    report = Lamar(":memory:").sleep(traces=TRACES, model=openai_chat(reply))
    assert [p.payload["experience"]["action"] for p in report.of_kind("candidate")] == [LESSON["action"]]
    assert report.mining_error == ""  # a lesson was mined: mining did not fail
    assert report.mining_lost.startswith("2 of the 3 lessons the model wrote could not be read as lessons "
                                         "(the first: malformed lesson: missing keys ['scope', 'trace_ids'])")
    mining = report.to_dict()["summary"]["mining"]
    assert (mining["unreadable_lessons"], mining["unreadable_replies"], mining["lost"]) == (2, 0, report.mining_lost)
    warned = f"sleep: mining lost part of the model's output: {report.mining_lost}"
    assert [r.getMessage() for r in caplog.records] == [warned]


def test_a_batch_whose_reply_cannot_be_read_beside_one_that_can_is_said_lost() -> None:
    traces = [Trace(f"t{i}", {"project": "demo"}, time=float(i), input="the build broke " + "x" * 1_400,
                    tool_errors=["module map is stale"], outcome="reverted") for i in range(6)]
    second = {**LESSON, "trace_ids": ["t3", "t4", "t5"]}  # the traces of the second batch
    model = openai_replies("Sorry, I could not find a pattern.", json.dumps({"lessons": [second]}))
    report = Lamar(":memory:").sleep(traces=traces, model=model, max_prompt_tokens=1_600)  # 3 traces a batch
    assert report.summary["mining"]["model_calls"] == 2
    assert len(report.of_kind("candidate")) == 1 and report.mining_error == ""
    lost = report.mining_lost
    assert lost.startswith("1 of 2 model replies held no lesson list, so 3 traces were not mined (t0, t1, t2; "
                           "the last reply: model output is not valid JSON"), lost
    assert lost.endswith("run sleep again on those traces, or check the model")
    assert report.summary["mining"]["unreadable_replies"] == 1


def test_a_reply_read_whole_loses_nothing() -> None:
    report = Lamar(":memory:").sleep(traces=TRACES, model=openai_chat(json.dumps([LESSON])))
    assert report.mining_lost == "" and "lost" not in report.summary["mining"]


def test_lost_lessons_name_the_traces_to_mine_again() -> None:
    # The message ends "run sleep again on those traces": with only lessons lost, it must name them too.
    traces = [Trace(f"t{i}", {"project": "demo"}, time=float(i), input="the build broke " + "x" * 1_400,
                    tool_errors=["module map is stale"], outcome="reverted") for i in range(6)]
    second = {**LESSON, "trace_ids": ["t3", "t4", "t5"]}
    broken = {"precondition": "the build broke", "action": "rebuild", "scope": "demo", "trace_ids": ["t4"]}
    model = openai_replies(json.dumps([{**LESSON, "trace_ids": ["t0", "t1"]}]), json.dumps([second, broken]))
    report = Lamar(":memory:").sleep(traces=traces, model=model, max_prompt_tokens=1_600)  # 3 traces a batch
    lost = report.mining_lost
    assert lost.startswith("1 of the 3 lessons the model wrote could not be read as lessons (the first: "
                           "malformed lesson: 'scope' must be an object of strings), in the replies about traces "
                           "t3, t4, t5"), lost
    assert lost.endswith("run sleep again on those traces, or check the model")
