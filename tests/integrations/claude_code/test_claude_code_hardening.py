"""Hardening of the hook's own files (issue 38): traces written once, no prompt text kept, 0600 files,
and a transcript line nested past Python's recursion limit costing nothing but itself."""

from __future__ import annotations

import io
import json
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar
from lamar.sleep.traces import load_traces
from lamar_claude_code.hook import paths_for, run

from .conftest import Hook, payload
from .test_claude_code_transcript import FIRST, SECOND, _transcript

SECRET = "AKIAIOSFODNN7EXAMPLE"


def _session(hook: Hook, repo: Path, transcript: Path, session: str, prompts: list[str]) -> None:
    for prompt in prompts:
        event = payload("UserPromptSubmit", session, repo, prompt=prompt)
        event["transcript_path"] = str(transcript)
        assert hook(event).returncode == 0
    end = payload("SessionEnd", session, repo, reason="other")
    end["transcript_path"] = str(transcript)
    _end(hook, end)


def _end(hook: Hook, end: dict[str, Any]) -> None:
    """Send the session's end until the state says it was saved and traced the session to its end.

    On a busy machine an end can reach its tracing past half its budget (it leaves the turns to the
    next event) or be stopped over its budget before it saves the state; either is sent again.
    """
    session = end["session_id"]
    for _ in range(20):
        assert hook(end).returncode == 0
        state = hook.state()
        progress = state["sessions"][session].get("transcript") or {}
        if state["last"].get("event") == "SessionEnd" and not progress.get("left"):
            return
    raise AssertionError(f"20 ends did not trace session {session}: {progress}")


def test_a_session_end_whose_bookkeeping_was_lost_writes_no_trace_twice(hook: Hook, repo: Path,
                                                                         tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "sess-a")
    for prompt in (FIRST, SECOND):
        event = payload("UserPromptSubmit", "sess-a", repo, prompt=prompt)
        event["transcript_path"] = str(transcript)
        assert hook(event).returncode == 0
    before = hook.state_file.read_bytes()
    end = payload("SessionEnd", "sess-a", repo, reason="other")
    end["transcript_path"] = str(transcript)
    _end(hook, end)
    traces = hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl")
    first = traces.read_bytes()
    # As an event killed over its budget leaves it: the traces appended, the state not saved.
    hook.state_file.write_bytes(before)
    _end(hook, end)  # until it has gone through every turn, skipping those written
    assert traces.read_bytes() == first  # nothing appended again
    ids = [json.loads(line)["id"] for line in first.splitlines()]
    assert ids == ["cc-sess-a-1", "cc-sess-a-2"] and [t.id for t in load_traces(traces)] == ids


def test_the_state_keeps_no_prompt_text_and_every_file_is_the_users_only(hook: Hook, repo: Path,
                                                                         tmp_path: Path) -> None:
    asked = f"the tests fail, my key is {SECRET} and the password is hunter2-correct-horse"
    transcript = tmp_path / "none.jsonl"
    _session(hook, repo, transcript, "s1", [asked, asked])  # the same prompt twice: a re-ask
    state = hook.state_file.read_text()
    assert SECRET not in state and "hunter2" not in state and "the tests fail" not in state
    record = next(r for r in hook.state()["episodes"].values() if r["signal"] == "reasked")
    assert record["context"]["task"] == "tests_fail"  # the re-ask was still told from the hashed words
    written = [p for p in hook.store.parent.iterdir() if p.name.startswith(hook.store.name + ".claude-code")]
    assert {p.name.rsplit(".", 1)[-1] for p in written} >= {"json", "lock", "log"}
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in written), {p.name: oct(p.stat().st_mode)
                                                                          for p in written}


def test_an_earlier_releases_state_loses_its_prompt_text_at_the_next_event(hook: Hook, repo: Path) -> None:
    old = {"version": 1, "sessions": {"s0": {"episode": "ep_x", "prompt": f"deploy with {SECRET}", "time": 1e12}},
           "episodes": {"ep_x": {"session": "s0", "prompt_head": f"deploy with {SECRET}", "time": 1e12}},
           "repos": {}, "last": {}}
    hook.state_file.write_text(json.dumps(old))
    assert hook(payload("SessionStart", "s1", repo, source="startup")).returncode == 0
    assert SECRET not in hook.state_file.read_text()


def test_a_transcript_line_nested_1000_deep_costs_only_that_line(hook: Hook, repo: Path, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path, "deep")
    lines = transcript.read_text().splitlines()
    nested = '{"type": "user", "message": {"content": ' + "[" * 1000 + "]" * 1000 + "}}"
    transcript.write_text("\n".join([lines[0], nested, *lines[1:]]) + "\n")
    _session(hook, repo, transcript, "deep", [FIRST, SECOND])
    traces = load_traces(hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl"))
    assert [t.id for t in traces] == ["cc-deep-1", "cc-deep-2"]
    assert "RecursionError" not in hook.log_file.read_text()


def test_no_secret_format_of_issue_38_reaches_the_trace_file(hook: Hook, repo: Path, tmp_path: Path) -> None:
    # The attack's surface: what a session's tools printed and the agent said, written by SessionEnd.
    from tests.safety.test_secrets_missed import SAMPLES

    leaked = "\n".join(text for _, _, text in SAMPLES)
    lines = []
    for line in _transcript(tmp_path, "leaky").read_text().splitlines():
        row = json.loads(line) if line.startswith("{") and line.endswith("}") else None
        for part in (row or {}).get("message", {}).get("content", []) if row else []:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                part["content"] = f"{part['content']}\n{leaked}"
            elif isinstance(part, dict) and part.get("type") == "text":
                part["text"] = f"{part['text']} {leaked}"
        lines.append(json.dumps(row) if row else line)
    transcript = tmp_path / "leaky.jsonl"
    transcript.write_text("\n".join(lines) + "\n")
    _session(hook, repo, transcript, "leaky", [FIRST, SECOND])
    written = hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl")
    traces = load_traces(written)
    assert len(traces) == 2 and any("[REDACTED:" in e for e in traces[0].tool_errors)
    text = written.read_text()
    assert "Private-Lines" in text and "registry.npmjs.org" in text  # the samples' text was traced
    assert [name for name, secret, _ in SAMPLES if secret in text] == []


def test_a_state_record_of_the_wrong_shape_is_dropped_and_the_state_heals(hook: Hook, repo: Path) -> None:
    # A hand edit or a bad merge: kept, each record failed every event and was written back by it.
    bad = {"version": 1, "sessions": {"s0": {"episode": 7}, "s9": {"time": 1e12, "count": 1}},
           "episodes": {"ep_old": 5, "ep_files": {"session": "s0", "time": 1e12, "files": "app.py"}},
           "repos": {"/somewhere": {"language": "python", "time": "yesterday"}}, "last": {"time": "noon"}}
    hook.state_file.write_text(json.dumps(bad))
    for i in range(2):
        done = hook(payload("UserPromptSubmit", f"s{i + 1}", repo, prompt=f"refactor module {i}"))
        assert (done.returncode, done.stderr) == (0, b"")
    state = hook.state()
    assert set(state["sessions"]) == {"s1", "s2", "s9"} and "/somewhere" not in state["repos"]
    assert sorted(state["episodes"]) == sorted(s["episode"] for s in (state["sessions"]["s1"], state["sessions"]["s2"]))
    (line,) = hook.log_file.read_text().splitlines()  # once: the healed state is written back
    assert ("dropped episode 'ep_old', episode 'ep_files', session 's0', repository entry '/somewhere', "
            "the last event") in line


def test_an_event_late_to_its_tracing_keeps_the_traces_of_lost_bookkeeping_held(
        store: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A session's end killed after it wrote its traces, then its replay reached its tracing past
    # half its budget (a busy machine): it saved the offset past those traces without passing them.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    lam = Lamar(str(store))
    paths = paths_for(str(store))
    transcript = _transcript(tmp_path, "sess-a")

    def send(event: dict[str, Any], late: bool = False) -> None:
        event["transcript_path"] = str(transcript)
        start = time.monotonic() - (31.0 if late else 0.0)  # of a 60 s budget: past its half
        run(io.BytesIO(json.dumps(event).encode()), io.StringIO(), str(store), budget=60.0, engine=lambda: lam,
            start=start)

    for prompt in (FIRST, SECOND):
        send(payload("UserPromptSubmit", "sess-a", repo, prompt=prompt))
    before = paths.state.read_bytes()
    end = payload("SessionEnd", "sess-a", repo, reason="other")
    send(end)
    first = paths.traces.read_bytes()
    paths.state.write_bytes(before)  # killed before its state was saved
    send(end, late=True)
    assert paths.traces.read_bytes() == first and json.loads(paths.state.read_bytes())["sessions"]["sess-a"][
        "transcript"]["left"]
    send(payload("SessionStart", "later", repo, source="startup"))  # any later event goes on with the session
    assert paths.traces.read_bytes() == first  # not written again
    state = json.loads(paths.state.read_bytes())
    assert "left" not in state["sessions"]["sess-a"]["transcript"] and state["held"] == []
    assert [t.id for t in load_traces(paths.traces)] == ["cc-sess-a-1", "cc-sess-a-2"]
    lam.close()
