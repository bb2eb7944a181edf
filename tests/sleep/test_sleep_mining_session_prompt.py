"""The mining prompt tells the model which session each trace is a run of, and asks for lessons seen in two
sessions: a model that follows it cites traces that mint a candidate (anthropic SDK, HTTP mocked)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar, Trace
from lamar.safety.secrets import scrub

pytest.importorskip("anthropic", reason="the anthropic extra is not installed")
from tests.sleep.test_sleep_mining_request import recording

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
DEMO = {"project": "demo"}


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
    assert candidate.reason.startswith("mined from 3 sessions (5 traces): When a module map is stale")
    assert candidate.reason.endswith("outcomes decide. Traces: run-1, run-2 of episode ep_a; run-3, run-4 of "
                                     "episode ep_b; run-5.")
    evidence = candidate.evidence[candidate.experience_ids[0]]
    assert evidence["sessions"] == 3 and evidence["traces"] == 5
    one_each = Lamar(":memory:").sleep(traces=[run("t1", None, 1.0), run("t2", "ep_b", 2.0)],
                                       model=recording(two_sessions, []))
    assert one_each.of_kind("candidate")[0].reason.startswith("mined from 2 sessions: When ")
    assert one_each.of_kind("candidate")[0].reason.endswith(". Traces: t1, t2.")


def langgraph_week() -> list[dict[str, Any]]:
    """Traces as LamarCallbackHandler writes them for reviewed LangGraph threads: a run stopped at the review
    (the tool error, no outcome yet) and its resume (no tool call), both naming the episode, ids UUIDs."""
    rows = []
    for n in range(12):
        episode, corrected = f"ep_{n:016x}", n < 8
        stopped = f"01a250b0-0884-71bf-8b54-{n:012x}"
        resumed = f"01a250b0-08d9-77a2-9d43-{n:012x}"
        context = {"project": "billing-api"} if corrected else {"project": "storefront"}
        asked = "add the requests dependency" if corrected else "rename the checkout button"
        rows.append({"id": stopped, "time": 1000.0 + 10 * n, "context": context, "input": asked,
                     "attempted": ["shell({'command': 'pip install requests'})" if corrected else "npm test"],
                     "tool_errors": ["shell: ToolException: error: externally-managed-environment"] if corrected
                     else [], "output": "pip refuses.", "outcome": None, "episode_id": episode,
                     "metadata": {"run_id": stopped, "resumes": None}})
        rows.append({"id": resumed, "time": 1001.0 + 10 * n, "context": context, "input": asked, "output": "",
                     "outcome": "corrected" if corrected else "shipped", "episode_id": episode,
                     "metadata": {"run_id": resumed, "resumes": stopped}})
    return rows


def careful(prompt: str) -> str:
    """A lesson for the tool error, citing every run of each session that shows it."""
    shown = records(prompt)
    sessions = {r["session"] for r in shown if r["tool_errors"]}
    return json.dumps([{"precondition": "pip install fails with externally-managed-environment",
                        "action": "create a virtualenv with python -m venv .venv and install into it",
                        "rationale": "the system Python refuses pip installs", "scope": {"project": "billing-api"},
                        "trace_ids": [r["id"] for r in shown if r["session"] in sessions]}])


def test_lamar_sleep_and_review_show_the_lesson_its_sessions_and_their_outcomes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import lamar.models
    from lamar.cli import main

    traces, report, store = tmp_path / "traces.jsonl", tmp_path / "report.json", tmp_path / "lamar.db"
    traces.write_text("".join(json.dumps(row) + "\n" for row in langgraph_week()))
    Lamar(str(store)).close()  # a store of its own: the outcomes are the traces' own
    monkeypatch.setattr(lamar.models, "from_spec", lambda spec: recording(careful, []))
    assert main(["sleep", "--store", str(store), "--traces", str(traces), "--model", "anthropic:claude-test",
                 "--out", str(report)]) == 0
    listed = capsys.readouterr().out
    # The listing's one line per proposal shows the lesson, not the start of a list of trace ids.
    assert "mined from 8 sessions (16 traces): When pip install fails with externally-managed" in listed
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert main(["review", str(report), "--store", str(store)]) == 0
    reviewed = capsys.readouterr().out
    # Counted by session: the stopped run and its resume are one correction, not two.
    assert "support when proposed: 8 sessions (corrected 8), 8 with tool errors; 16 traces" in reviewed
    assert "; and 3 more sessions (every trace is in the lesson's provenance)." in reviewed
    (candidate,) = json.loads(report.read_text())["proposals"]
    assert len(candidate["payload"]["experience"]["provenance"]["traces"]) == 16


def one_session(prompt: str) -> str:
    """The lesson of `careful`, citing the two runs of one session only."""
    shown = records(prompt)
    first = next(r["session"] for r in shown if r["tool_errors"])
    lesson = json.loads(careful(prompt))[0]
    return json.dumps([{**lesson, "trace_ids": [r["id"] for r in shown if r["session"] == first]}])


def test_lamar_sleep_shows_which_lesson_it_dropped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import lamar.models
    from lamar.cli import main

    traces, store = tmp_path / "traces.jsonl", tmp_path / "lamar.db"
    traces.write_text("".join(json.dumps(row) + "\n" for row in langgraph_week()))
    Lamar(str(store)).close()
    monkeypatch.setattr(lamar.models, "from_spec", lambda spec: recording(one_session, []))
    assert main(["sleep", "--store", str(store), "--traces", str(traces), "--model", "anthropic:claude-test"]) == 0
    listed = capsys.readouterr().out.splitlines()
    at = next(n for n, line in enumerate(listed) if line.startswith("  dropped: supported by 2 traces of 1 session"))
    # The reason names two UUIDs and an episode; the line under it says which lesson that was.
    assert listed[at + 1] == ("    lesson: when pip install fails with externally-managed-environment, create a "
                              "virtualenv with python...")
