"""The hooks' lock files held by a stopped or stuck process: a hook still ends within its budget,
says why in a log, and changes nothing; `settle` and the Agent SDK's session ends give up in time."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lamar import Lamar, StoreError
from tests.locks import bounded, held

from .conftest import Hook, payload

_HANG = 30.0  # seconds: a bound on a hang, not a measured time


def _run(hook: Hook, data: bytes) -> subprocess.CompletedProcess[bytes]:
    """The hook process, ended by the test past _HANG: Claude Code would end it at 10 s, a failure."""
    return subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(hook.store)],
                          input=data, capture_output=True, env=hook.env, timeout=_HANG, check=False)


def test_a_prompt_whose_state_is_locked_injects_nothing_within_its_budget_and_says_why(
        hook: Hook, repo: Path) -> None:
    (Path(hook.env["HOME"]) / ".lamar" / "claude-code.toml").write_text("[hook]\nbudget_seconds = 2.0\n")
    with held(Path(f"{hook.state_file}.lock")):
        done = _run(hook, json.dumps(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail")).encode())
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = hook.log_file.read_text().splitlines()
    lock = f"{hook.state_file}.lock"
    assert re.fullmatch(
        r"UserPromptSubmit: StoreError: the hooks' state stayed locked by another process past the [0-9.]+ s wait, "
        r"so this was skipped and nothing changed; if that keeps happening, `lsof (.+)` names the stopped or "
        "stuck process that holds it", line.split(" ", 1)[1]).group(1) == lock  # type: ignore[union-attr]
    assert not hook.state_file.exists()
    with Lamar(str(hook.store)) as lam:
        assert lam.stats()["episodes"] == 0  # no recall: no episode that nothing tracks


def test_a_hook_whose_log_is_locked_ends_and_logs_in_the_home_folder(hook: Hook) -> None:
    with held(Path(f"{hook.log_file}.lock")):
        done = _run(hook, b"not json")
    assert (done.returncode, done.stdout) == (0, b"")
    assert not hook.log_file.exists() or hook.log_file.read_text() == ""
    (line,) = (Path(hook.env["HOME"]) / ".lamar" / "claude-code.log").read_text().splitlines()
    assert line.split(" ", 1)[1].startswith(
        f"{hook.log_file} could not be written (another process held its lock past 1 s): event: JSONDecodeError")


def test_quick_py_logs_in_the_home_folder_when_the_log_is_locked(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # quick.py's own writer, for the line it logs when the hook's modules cannot load.
    from lamar_claude_code import quick

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    store = tmp_path / "experience.db"
    log = f"{store}.claude-code.log"
    with held(Path(f"{log}.lock")):
        bounded(lambda: quick._note(str(store), "the hook could not start"), _HANG)
    (line,) = (tmp_path / "home" / ".lamar" / "claude-code.log").read_text().splitlines()
    assert line.split(" ", 1)[1] == (f"{log} could not be written (another process held its lock past 1 s): "
                                     "the hook could not start")
    assert quick._LOG_WAIT == __import__("lamar_claude_code.state").state.LOG_WAIT  # one rule, written twice


def test_settle_gives_up_on_a_locked_state_and_says_what_to_do(hook: Hook, monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar_claude_code import state
    from lamar_claude_code.episodes import settle_all
    from lamar_claude_code.hook import paths_for

    monkeypatch.setattr(state, "STATE_WAIT", 0.5)
    with held(Path(f"{hook.state_file}.lock")), pytest.raises(StoreError, match=r"past the 0\.5 s wait.*`lsof "):
        bounded(lambda: settle_all(lambda: Lamar(str(hook.store)), paths_for(str(hook.store))), _HANG)
    assert not hook.state_file.exists()


def test_a_locked_trace_file_costs_the_events_traces_not_the_event(hook: Hook, repo: Path, tmp_path: Path) -> None:
    from lamar.sleep.traces import load_traces

    from .test_claude_code_transcript import FIRST, SECOND, _transcript

    transcript = str(_transcript(tmp_path, "s1"))
    events = [payload("UserPromptSubmit", "s1", repo, prompt=FIRST),
              payload("UserPromptSubmit", "s1", repo, prompt=SECOND),
              payload("Stop", "s1", repo, stop_hook_active=False), payload("SessionEnd", "s1", repo, reason="other")]
    for event in events:
        event["transcript_path"] = transcript
    traces = hook.store.with_name(hook.store.name + ".claude-code.traces.jsonl")
    assert _run(hook, json.dumps(events[0]).encode()).returncode == 0
    traces.touch()
    with held(traces):
        for event in events[1:]:
            done = _run(hook, json.dumps(event).encode())
            assert (done.returncode, done.stderr) == (0, b"")
        assert traces.read_bytes() == b""
    lines = [line.split(" ", 1)[1] for line in hook.log_file.read_text().splitlines() if " settled " not in line]
    assert lines == 2 * [(f"no traces for session s1: StoreError: cannot append a trace to {traces}: another process "
                          "holds its lock past the 0.5 s wait; nothing was written: try again once that writer "
                          "is done")]  # the Stop's and the end's
    state = hook.state()
    assert state["last"]["event"] == "SessionEnd"  # the events themselves went on
    assert len(state["episodes"]) == 2
    _run(hook, json.dumps(events[3]).encode())  # a later event writes what they could not
    assert [t.id for t in load_traces(traces)] == ["cc-s1-1", "cc-s1-2"]


async def test_the_sdk_callbacks_and_session_ends_give_up_on_a_locked_state(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from claude_agent_sdk import HookContext
    from claude_agent_sdk.types import UserPromptSubmitHookInput

    import lamar_claude_code
    from lamar_claude_code import state

    monkeypatch.setattr(state, "STATE_WAIT", 0.5)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the failure is kept in ~/.lamar, not the user's
    lam = Lamar(str(tmp_path / "sdk.db"))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state", budget=0.5)
    prompt = UserPromptSubmitHookInput(session_id="s", transcript_path=str(tmp_path / "t.jsonl"), cwd=str(repo),
                                       hook_event_name="UserPromptSubmit", prompt="fix the build")
    (tmp_path / "state").mkdir()
    with held(tmp_path / "state" / "claude-code.state.json.lock"):
        started = time.monotonic()
        assert await hooks["UserPromptSubmit"][0].hooks[0](prompt, None, HookContext(signal=None)) == {}
        await asyncio.wait_for(hooks.end(), _HANG)  # its thread gave up on the lock: the session's end is not stuck
        assert time.monotonic() - started < _HANG
    lines = (tmp_path / "state" / "claude-code.log").read_text().splitlines()
    assert [line.split(": ", 1)[0].split(" ", 1)[1] for line in lines] == ["sdk UserPromptSubmit", "sdk SessionEnd"]
    assert "stayed locked by another process past the 0.5 s wait" in lines[1]  # the prompt's may say timed out
    assert lam.stats()["episodes"] == 0
    assert list((tmp_path / "home" / ".lamar").glob("claude-code.failed-*.json"))  # kept for `status`
    lam.close()
