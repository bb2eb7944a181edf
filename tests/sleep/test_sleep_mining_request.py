"""Sleep mining through a real SDK (anthropic, HTTP mocked at the transport): the request body
holds no secret, wherever in a trace it was, and an answer with prose around its list is mined."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest

from lamar import Experience, InvalidArgument, Lamar, Scope, Trace
from lamar.safety.secrets import scrub

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
from lamar.models.anthropic import AnthropicModel

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLQ"


def recording(reply: Callable[[str], str], prompts: list[str]) -> AnthropicModel:
    """A model whose every request body is kept, answering `reply(prompt)`."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        prompts.append(prompt)
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": reply(prompt)}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 3}})

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client, max_retries=0)


def shown_ids(prompt: str) -> list[str]:
    body = prompt.split("<traces>\n", 1)[1].rsplit("</traces>", 1)[0]
    return [json.loads(line)["id"] for line in body.splitlines()]


def test_a_secret_in_a_trace_id_or_a_context_key_never_reaches_the_model() -> None:
    traces = [Trace(f"run-{TOKEN}-{i}", {"project": "demo", f"key_{AWS_KEY}": "on"}, time=float(i),
                    input="the build broke", tool_errors=["module map is stale"], outcome="reverted")
              for i in range(3)] + [Trace("plain-1", {"project": "demo"}, input="lint", outcome="shipped")]
    prompts: list[str] = []

    def cite_all(prompt: str) -> str:
        return json.dumps([{"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
                 "rationale": "the map survives a resolve", "scope": {"project": "demo"},
                 "trace_ids": [i for i in shown_ids(prompt) if i != "plain-1"]}])

    lam = Lamar(":memory:")
    report = lam.sleep(traces=traces, model=recording(cite_all, prompts))
    (prompt,) = prompts
    assert TOKEN not in prompt and AWS_KEY not in prompt
    assert scrub(prompt)[1] == []
    # Each trace is still told apart, and the ordinary id is shown as it is.
    ids = shown_ids(prompt)
    assert len(set(ids)) == 4 and "plain-1" in ids
    # The model cites what it was shown; the candidate cites the traces themselves.
    (candidate,) = report.of_kind("candidate")
    assert candidate.payload["experience"]["provenance"]["traces"] == sorted(t.id for t in traces[:3])
    assert report.summary["mining"]["secrets_scrubbed"] >= 6


LESSON = {"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
          "rationale": "the map survives a resolve", "scope": {"project": "demo"}, "trace_ids": ["t0", "t1"]}
LISTED = json.dumps([LESSON], indent=2)


@pytest.mark.parametrize("reply", [
    f"Here are the lessons I found:\n\n```json\n{LISTED}\n```\n\nLet me know if you need more.",
    f"Here are the lessons I found:\n{LISTED}\nEach cites two traces.",
    f"```\n{LISTED}\n```\nNothing else recurred.",
])
def test_a_list_with_a_line_of_prose_around_it_is_mined(reply: str) -> None:
    traces = [Trace(f"t{i}", {"project": "demo"}, time=float(i), input="the build broke",
                    tool_errors=["module map is stale"], outcome="reverted") for i in range(2)]
    report = Lamar(":memory:").sleep(traces=traces, model=recording(lambda prompt: reply, []))
    (candidate,) = report.of_kind("candidate")
    assert candidate.payload["experience"]["action"] == LESSON["action"]
    assert report.dropped == [] and report.mining_error == ""


def test_traces_that_need_more_calls_than_max_model_calls_make_none() -> None:
    traces = [Trace(f"t{i:03d}", {"project": "demo"}, time=float(i), input="the build broke " + "x" * 1_400,
                    tool_errors=["module map is stale"], outcome="reverted") for i in range(60)]
    prompts: list[str] = []
    model = recording(lambda prompt: "[]", prompts)
    lam = Lamar(":memory:")
    lam.add(Experience("tests are flaky", "rerun the failing test once", scope=Scope(project="demo")))
    lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=Scope(project="demo")))
    before = len(lam.store.read())
    report = lam.sleep(traces=traces, model=model, max_model_calls=3)
    assert prompts == []  # refused before the first call, so nothing was paid for
    assert "takes 4 model calls" in report.mining_error and "max_model_calls=3" in report.mining_error
    assert [p.kind for p in report] == ["merge"]  # what needs no model is proposed all the same
    assert len(lam.store.read()) == before
    lam.sleep(traces=traces, model=model, max_model_calls=4)
    assert len(prompts) == 4


@pytest.mark.parametrize("value", [0, -1, 2.5, "10", True])
def test_a_bad_max_model_calls_is_refused(value: object) -> None:
    with pytest.raises(InvalidArgument, match="max_model_calls must be a whole number >= 1 or None"):
        Lamar(":memory:").sleep(max_model_calls=value)  # type: ignore[arg-type]
