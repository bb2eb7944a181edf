"""A run killed mid-turn (SIGTERM, Ctrl+C) or whose turn failed is no accepted answer: Claude Code
ends it with the SessionEnd of any session but sends no Stop, so its episode is expired, not accepted.

The payloads are those the bundled Claude Code CLI sent (fixtures/killed_runs.json); the last tests
run that CLI itself and kill it while the Messages API stand-in holds its answer.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest

from lamar import Lamar
from lamar_claude_code.settings import EVENTS

from .conftest import Hook, git, payload
from .fake_anthropic import serve

RUNS = json.loads((Path(__file__).parent / "fixtures" / "killed_runs.json").read_text())
CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
WHY = "the session ended before its turn finished (no Stop came)"


def _replay(hook: Hook, repo: Path, run: str) -> str:
    """Feed the run's events that Lamar's installed hooks receive; returns the run's session id."""
    for event in RUNS[run]["events"]:
        if event["hook_event_name"] in EVENTS:
            text = json.dumps(event).replace("{repo}", str(repo)).replace("{transcript}", str(repo / ".none.jsonl"))
            done = hook(json.loads(text))
            assert (done.returncode, done.stderr) == (0, b"")
    return str(RUNS[run]["events"][0]["session_id"])


def _record(hook: Hook) -> tuple[str, dict[str, Any]]:
    (episode, record), = hook.state()["episodes"].items()
    return episode, record


@pytest.mark.parametrize("run", ["sigterm_mid_answer", "sigint_mid_answer", "api_error"])
def test_a_turn_that_never_finished_is_expired_not_accepted(hook: Hook, repo: Path, run: str) -> None:
    session = _replay(hook, repo, run)
    episode, record = _record(hook)
    with Lamar(str(hook.store)) as lam:
        found = lam.episode(episode)
        assert (found.settled, found.signal, found.reward) == ("expired", None, None)
        assert lam.pending() == []  # nothing waits on it either
    assert record["signal"] is None and record["turn"] == "cut"
    assert [a[1:] for a in record["audit"]] == [["expired", WHY]]
    assert f"expired {episode}: {WHY}" in hook.log_file.read_text()

    # A second end of the same session (the SDK's end() after Claude Code's, say) still accepts nothing.
    assert hook(payload("SessionEnd", session, repo, reason="other")).returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(episode).settled == "expired"
    assert [a[1] for a in _record(hook)[1]["audit"]] == ["expired"]


def test_a_finished_turn_is_still_accepted_at_the_sessions_end(hook: Hook, repo: Path) -> None:
    (repo / "version.py").write_text("VALUE = 1\n")
    _replay(hook, repo, "finished")
    episode, record = _record(hook)
    assert (record["signal"], record["turn"], record["files"]) == ("accepted", "done", ["version.py"])
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(episode).signal == "accepted"


@pytest.mark.parametrize("stop", [True, False], ids=["accepted", "expired"])
def test_an_episode_the_store_no_longer_holds_is_forgotten_at_the_sessions_end(hook: Hook, repo: Path,
                                                                                 stop: bool) -> None:
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="split app.py into modules")).returncode == 0
    (episode,) = hook.state()["episodes"]
    if stop:  # a finished turn: the end reports it accepted; without a Stop, the end expires it
        assert hook(payload("Stop", "s1", repo, stop_hook_active=False)).returncode == 0
    for suffix in ("", "-wal", "-shm"):  # the store replaced by an empty one, as if a sleep had compacted it away
        Path(f"{hook.store}{suffix}").unlink(missing_ok=True)
    Lamar(str(hook.store)).close()
    done = hook(payload("SessionEnd", "s1", repo, reason="other"))
    assert (done.returncode, done.stderr) == (0, b"")
    assert hook.state()["episodes"] == {}
    assert f"forgot {episode}: the store no longer holds it" in hook.log_file.read_text()


def test_a_killed_turns_edits_still_settle_by_git(hook: Hook, repo: Path) -> None:
    (repo / "version.py").write_text("VALUE = 1\n")  # what Claude's Write did before the run was killed
    _replay(hook, repo, "sigterm_after_edit")
    episode, record = _record(hook)
    assert record["files"] == ["version.py"] and record["signal"] is None
    git(repo, "add", "version.py")
    git(repo, "commit", "-q", "-m", "version")
    assert hook(payload("SessionStart", "later", repo, source="startup")).returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(episode).signal == "shipped"  # the commit is evidence; the kill was not
    assert [a[1] for a in _record(hook)[1]["audit"]] == ["expired", "shipped"]


def test_a_resumed_killed_session_is_read_from_its_next_prompt(hook: Hook, repo: Path) -> None:
    session = _replay(hook, repo, "sigterm_mid_answer")
    episode, _ = _record(hook)
    assert hook(payload("UserPromptSubmit", session, repo, prompt="no, that's not what I asked")).returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(episode).signal == "corrected"
    assert [a[1] for a in hook.state()["episodes"][episode]["audit"]] == ["expired", "corrected"]


async def test_the_sdk_hooks_end_a_turn_with_no_stop_as_expired(repo: Path, tmp_path: Path) -> None:
    """An Agent SDK client closed mid-turn (its query cancelled, its program stopped): `end()` accepts nothing."""
    from claude_agent_sdk import HookContext
    from claude_agent_sdk.types import StopHookInput, UserPromptSubmitHookInput

    import lamar_claude_code

    lam = Lamar(str(tmp_path / "sdk.db"))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state")
    common = {"transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(repo)}
    for session in ("cut", "done"):
        prompt = UserPromptSubmitHookInput(session_id=session, **common, hook_event_name="UserPromptSubmit",
                                           prompt="fix the build")
        await hooks["UserPromptSubmit"][0].hooks[0](prompt, None, HookContext(signal=None))
    stop = StopHookInput(session_id="done", **common, hook_event_name="Stop", stop_hook_active=False)
    await hooks["Stop"][0].hooks[0](stop, None, HookContext(signal=None))
    await hooks.end()
    state = json.loads((tmp_path / "state" / "claude-code.state.json").read_text())
    outcome = {r["session"]: (lam.episode(e).settled, lam.episode(e).signal) for e, r in state["episodes"].items()}
    assert outcome == {"cut": ("expired", None), "done": (None, "accepted")}

    # A session ended for idling while its turn ran: that turn's Stop, once it comes, lets the next end accept it.
    late = StopHookInput(session_id="cut", **common, hook_event_name="Stop", stop_hook_active=False)
    await hooks["Stop"][0].hooks[0](late, None, HookContext(signal=None))
    await hooks.end()
    (cut,) = [e for e, r in state["episodes"].items() if r["session"] == "cut"]
    assert lam.episode(cut).signal == "accepted"
    lam.close()


def _claude(repo: Path, env: dict[str, str], url: str, prompt: str) -> subprocess.Popen[str]:
    run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    return subprocess.Popen([str(CLAUDE), "-p", prompt, "--permission-mode", "acceptEdits", "--output-format", "json"],
                            cwd=repo, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda sig: sig.name)
def test_the_real_cli_killed_mid_answer_leaves_its_episode_expired(repo: Path, env: dict[str, str], store: Path,
                                                                   sig: signal.Signals) -> None:
    assert CLAUDE.exists(), "claude-agent-sdk ships the Claude Code binary; reinstall lamar[claude-code]"
    subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install", "--store", str(store)],
                   cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=True)
    server, url = serve(str(repo))
    try:
        run = _claude(repo, env, url, "please create version.py, then hang-forever")
        try:
            assert server.hanging.wait(120), "Claude Code never asked for the turn's second answer"
            run.send_signal(sig)  # Claude wrote the file and waits on an answer that never comes
            run.communicate(timeout=60)
        finally:
            run.kill()
    finally:
        server.shutdown()
    assert (repo / "version.py").exists()
    state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    (episode, record), = state["episodes"].items()
    assert (record["files"], record["signal"], record["turn"]) == (["version.py"], None, "cut")
    assert state["last"]["event"] == "SessionEnd"  # Claude Code ran the end's hook before it exited
    with Lamar(str(store)) as lam:
        assert (lam.episode(episode).settled, lam.episode(episode).signal) == ("expired", None)

    # Ctrl+C leaves a note in the transcript as a user entry: the session's traces hold the one prompt typed.
    end = payload("SessionEnd", record["session"], repo, reason="other")
    projects = Path(env["HOME"]) / ".claude" / "projects"
    end["transcript_path"] = str(next(projects.glob(f"*/{record['session']}.jsonl")))
    for _ in range(20):  # on a busy machine an end may leave turns to the next event: sent again until none is left
        assert Hook(store, env)(end).returncode == 0
        if not json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())[
                "sessions"][record["session"]]["transcript"].get("left"):
            break
    traces = store.with_name(store.name + ".claude-code.traces.jsonl").read_text().splitlines()
    assert [json.loads(line)["input"] for line in traces] == ["please create version.py, then hang-forever"]
