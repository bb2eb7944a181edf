"""A long session's transcript is traced a turn at a time by bounded events, and its end saves the state."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar.sleep.traces import load_traces
from lamar_claude_code import transcript as transcript_module

from .conftest import Hook, payload
from .test_claude_code_transcript import FIRST, SECOND, _transcript


def _turn(session: str, number: int, pad: int = 2000) -> Iterator[dict[str, Any]]:
    """One turn as Claude Code writes it: the prompt, a tool call, its failed result, the answer."""
    def entry(kind: str, message: dict[str, Any], uuid: str, second: int) -> dict[str, Any]:
        return {"parentUuid": None, "isSidechain": False, "type": kind, "message": message, "uuid": uuid,
                "timestamp": f"2026-11-30T{number // 900:02d}:{number // 15 % 60:02d}:{number * 4 % 60 + second:02d}"
                             ".000Z", "sessionId": session, "cwd": "/home/dev/shop"}

    yield entry("user", {"role": "user", "content": f"prompt {number}: the tests fail in module {number}"},
                f"u{number}", 0)
    yield entry("assistant", {"role": "assistant", "content": [
        {"type": "tool_use", "id": f"t{number}", "name": "Bash", "input": {"command": f"pytest -x t{number}.py"}}]},
        f"m{number}", 1)
    yield entry("user", {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{number}", "is_error": True,
         "content": "AssertionError: expected 2, got 3 " + "word " * (pad // 5)}]}, f"r{number}", 2)
    yield entry("assistant", {"role": "assistant", "content": [{"type": "text", "text": f"Fixed {number}."}]},
                f"a{number}", 3)


def _append(path: Path, entries: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> None:
    with path.open("a") as handle:
        handle.writelines(json.dumps(entry) + "\n" for entry in entries)


def _event(name: str, session: str, repo: Path, transcript: Path, **fields: Any) -> dict[str, Any]:
    event = payload(name, session, repo, **fields)
    event["transcript_path"] = str(transcript)
    return event


def _traces(hook: Hook) -> list[str]:
    path = hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl")
    return [t.id for t in load_traces(path)] if path.exists() else []


def test_each_turn_is_traced_once_the_next_has_stopped_and_the_end_has_one_left(hook: Hook, repo: Path,
                                                                                tmp_path: Path) -> None:
    transcript = tmp_path / "live.jsonl"
    transcript.touch()
    for number in range(1, 5):
        prompt = f"prompt {number}: the tests fail in module {number}"
        assert hook(_event("UserPromptSubmit", "live", repo, transcript, prompt=prompt)).returncode == 0
        _append(transcript, _turn("live", number))
        assert hook(_event("Stop", "live", repo, transcript, stop_hook_active=False)).returncode == 0
        # The turn that stopped may not be written whole yet: the next prompt closes it.
        assert _traces(hook) == [f"cc-live-{n}" for n in range(1, number)]
    assert hook(_event("SessionEnd", "live", repo, transcript, reason="other")).returncode == 0
    assert _traces(hook) == [f"cc-live-{n}" for n in range(1, 5)]
    state = hook.state()
    assert state["last"]["event"] == "SessionEnd" and "left" not in state["sessions"]["live"]["transcript"]
    traces = load_traces(hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl"))
    assert [t.input for t in traces] == [f"prompt {n}: the tests fail in module {n}" for n in range(1, 5)]
    assert all(t.episode_id in state["episodes"] for t in traces)
    assert len({t.episode_id for t in traces}) == 4 and traces[-1].outcome == "accepted"
    assert traces[0].attempted == ("Bash: pytest -x t1.py",) and traces[0].output == "Fixed 1."


def test_a_long_sessions_end_saves_the_state_and_later_events_trace_the_rest(hook: Hook, repo: Path,
                                                                             tmp_path: Path) -> None:
    # A session whose turns no Stop traced (hooks installed late, Stops lost), under the shipped
    # budget: scrubbing all its traces at once takes far longer than the budget allows. (A tighter
    # one leaves a loaded machine's hook no time for a first trace once it has started.)
    (Path(hook.env["HOME"]) / ".lamar").mkdir(exist_ok=True)
    (Path(hook.env["HOME"]) / ".lamar" / "claude-code.toml").write_text("[hook]\nbudget_seconds = 2.0\n")
    transcript = tmp_path / "long.jsonl"
    count = 160
    _append(transcript, [entry for number in range(1, count + 1) for entry in _turn("long", number)])
    first = "prompt 1: the tests fail in module 1"
    assert hook(_event("UserPromptSubmit", "long", repo, transcript, prompt=first)).returncode == 0
    assert hook(_event("SessionEnd", "long", repo, transcript, reason="other")).returncode == 0
    state = hook.state()
    assert state["last"]["event"] == "SessionEnd"  # not stopped before its bookkeeping was saved
    done = len(_traces(hook))
    assert 0 < done <= transcript_module.TRACES_AT_ONCE and state["sessions"]["long"]["transcript"]["left"]
    events = 0
    while len(_traces(hook)) < count and events < count:  # any later event goes on, a bounded share each
        assert hook(payload("SessionStart", f"next-{events}", repo, source="startup")).returncode == 0
        events += 1
        assert len(_traces(hook)) - done <= transcript_module.TRACES_AT_ONCE
        done = len(_traces(hook))
    assert _traces(hook) == [f"cc-long-{n}" for n in range(1, count + 1)]
    assert "left" not in hook.state()["sessions"]["long"]["transcript"]


def test_a_session_compacted_between_stops_traces_each_prompt_once(hook: Hook, repo: Path, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "cmp")
    entries = [json.loads(line) for line in transcript.read_text().splitlines()
               if line.startswith("{") and line.endswith("}")]
    for prompt in (FIRST, SECOND):
        assert hook(_event("UserPromptSubmit", "cmp", repo, transcript, prompt=prompt)).returncode == 0
    assert hook(_event("Stop", "cmp", repo, transcript, stop_hook_active=False)).returncode == 0
    assert _traces(hook) == ["cc-cmp-1"]
    # A second /compact in one process: the boundary, the summary, every earlier entry again, a new prompt.
    _append(transcript, [
        {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "c1",
         "timestamp": "2026-11-30T10:05:00.000Z", "sessionId": "cmp"},
        {"type": "user", "isCompactSummary": True, "uuid": "c2", "timestamp": "2026-11-30T10:05:00.100Z",
         "message": {"role": "user", "content": "This session is being continued. Summary: fix the tests."}},
        *entries,
        {"type": "user", "uuid": "u9", "timestamp": "2026-11-30T10:06:00.000Z",
         "message": {"role": "user", "content": "now update the changelog"}}])
    assert hook(_event("UserPromptSubmit", "cmp", repo, transcript, prompt="now update the changelog")).returncode == 0
    assert hook(_event("Stop", "cmp", repo, transcript, stop_hook_active=False)).returncode == 0
    assert hook(_event("SessionEnd", "cmp", repo, transcript, reason="other")).returncode == 0
    traces = load_traces(hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl"))
    assert [t.input for t in traces] == [FIRST, SECOND, "now update the changelog"]
    assert traces[0].attempted == ("Bash: pytest -x", "Edit: /home/dev/shop/app.py")  # not doubled


def test_a_turn_longer_than_one_read_is_traced_and_the_next_read_goes_on(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar_claude_code.transcript import trace_turns

    transcript = tmp_path / "wide.jsonl"
    _append(transcript, [entry for number in range(1, 4) for entry in _turn("wide", number, pad=20000)])
    monkeypatch.setattr(transcript_module, "READ_AT_ONCE", 8000)  # less than one turn
    progress: dict[str, Any] = {"path": str(transcript), "offset": 0, "turns": 0, "mark": None}
    out = tmp_path / "traces.jsonl"
    calls, complete = 0, False
    while not complete and calls < 100:
        complete, _ = trace_turns(progress, "wide", {}, out, set(), final=True, more=lambda: True)
        calls += 1
    traces = load_traces(out)
    assert complete and [t.input for t in traces] == [f"prompt {n}: the tests fail in module {n}" for n in (1, 2, 3)]
    assert traces[1].attempted == ("Bash: pytest -x t2.py",)  # what the first read of the turn held
    assert progress["offset"] == transcript.stat().st_size
