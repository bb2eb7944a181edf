"""The mining prompt tells the model which session each trace is a run of, and asks for lessons seen in two
sessions: a model that follows it cites traces that mint a candidate (anthropic SDK, HTTP mocked)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from lamar import Lamar, Trace
from lamar.safety.secrets import scrub

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
from lamar.models.anthropic import AnthropicModel

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
DEMO = {"project": "demo"}


def recording(reply: Callable[[str], str], prompts: list[str]) -> AnthropicModel:
    def handler(request: httpx2.Request) -> httpx2.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        prompts.append(prompt)
        return httpx2.Response(200, json={
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": reply(prompt)}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 3}})

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicModel("claude-test", api_key="sk-ant-test", http_client=client, max_retries=0)


def records(prompt: str) -> list[dict[str, Any]]:
    body = prompt.split("<traces>\n", 1)[1].rsplit("</traces>", 1)[0]
    return [json.loads(line) for line in body.splitlines()]


def run(trace_id: str, episode: str | None, when: float) -> Trace:
    return Trace(trace_id, DEMO, time=when, input="the build broke", tool_errors=["module map is stale"],
                 outcome="reverted", episode_id=episode)


def two_sessions(prompt: str) -> str:
    """A model that does as the prompt asks: one lesson citing the first two sessions it shows, every run of each."""
    shown = records(prompt)
    sessions = list(dict.fromkeys(r["session"] for r in shown))[:2]
    return json.dumps([{"precondition": "a module map is stale", "action": "delete DerivedData, then rebuild",
                        "rationale": "the map survives a resolve", "scope": DEMO,
                        "trace_ids": [r["id"] for r in shown if r["session"] in sessions]}])


def test_the_prompt_shows_the_session_of_each_trace_and_asks_for_two_sessions() -> None:
    # run-1 stopped for a review and run-2 resumed it: both name ep_a.
    traces = [run("run-1", "ep_a", 1.0), run("run-2", "ep_a", 2.0), run("run-3", "ep_b", 3.0),
              run("run-4", None, 4.0)]
    prompts: list[str] = []
    report = Lamar(":memory:").sleep(traces=traces, model=recording(two_sessions, prompts))
    (prompt,) = prompts
    assert {r["id"]: r["session"] for r in records(prompt)} == {
        "run-1": "ep_a", "run-2": "ep_a", "run-3": "ep_b", "run-4": "run-4"}
    instructions = prompt.split("<traces>", 1)[0]
    assert "at least two different sessions" in instructions and "two different traces" not in instructions
    assert "same session" in instructions
    (candidate,) = report.of_kind("candidate")
    assert candidate.payload["experience"]["provenance"]["traces"] == ["run-1", "run-2", "run-3"]
    assert report.dropped == []


def test_a_session_is_shown_so_that_no_two_sessions_look_like_one() -> None:
    # An episode id holding a credential is shown under a stand-in, the same for each of its runs; an
    # episode named like another trace's id is not shown as that trace's session.
    traces = [run("a-1", f"ep-{TOKEN}", 1.0), run("a-2", f"ep-{TOKEN}", 2.0), run("b-1", "run-9", 3.0),
              run("run-9", None, 4.0)]
    prompts: list[str] = []
    Lamar(":memory:").sleep(traces=traces, model=recording(lambda prompt: "[]", prompts))
    (prompt,) = prompts
    assert TOKEN not in prompt and scrub(prompt)[1] == []
    sessions = {r["id"]: r["session"] for r in records(prompt)}
    assert sessions["a-1"] == sessions["a-2"]
    assert len({sessions["a-1"], sessions["b-1"], sessions["run-9"]}) == 3
    assert sessions["run-9"] == "run-9" and sessions["b-1"] not in {"run-9", "a-1", "a-2", "b-1"}


def test_a_candidate_says_how_many_sessions_and_traces_it_was_mined_from() -> None:
    traces = [run("run-1", "ep_a", 1.0), run("run-2", "ep_a", 2.0), run("run-3", "ep_b", 3.0),
              run("run-4", "ep_b", 4.0), run("run-5", None, 5.0)]
    report = Lamar(":memory:").sleep(traces=traces, model=recording(
        lambda prompt: two_sessions(prompt).replace('"run-4"]', '"run-4", "run-5"]'), []))
    (candidate,) = report.of_kind("candidate")
    assert candidate.reason.startswith("mined from 3 sessions (5 traces: run-1, run-2 of episode ep_a; "
                                       "run-3, run-4 of episode ep_b; run-5): When a module map is stale")
    evidence = candidate.evidence[candidate.experience_ids[0]]
    assert evidence["sessions"] == 3 and evidence["traces"] == 5
    one_each = Lamar(":memory:").sleep(traces=[run("t1", None, 1.0), run("t2", "ep_b", 2.0)],
                                       model=recording(two_sessions, []))
    assert one_each.of_kind("candidate")[0].reason.startswith("mined from 2 sessions (traces t1, t2): ")
