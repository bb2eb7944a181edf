"""The Agent SDK callbacks, called with the SDK's own types the way its Query dispatches them."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_agent_sdk import ClaudeAgentOptions, HookContext, HookMatcher
from claude_agent_sdk.types import PostToolUseHookInput, StopHookInput, UserPromptSubmitHookInput

import lamar_claude_code
from lamar import Experience, Lamar, Scope
from lamar.recall import render_prompt

from .conftest import git


async def test_sdk_hooks_recall_note_edits_and_settle(repo: Path, tmp_path: Path) -> None:
    lam = Lamar(str(tmp_path / "sdk.db"), k=2, seed=5)
    lesson = lam.add(Experience("the tests fail", "run the failing test alone first",
                                scope=Scope(project="shop", task="tests_fail")))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state")
    options = ClaudeAgentOptions(hooks=hooks, cwd=str(repo))  # the mapping the SDK takes
    assert set(options.hooks or {}) == {"UserPromptSubmit", "PostToolUse", "Stop"}
    assert all(isinstance(m, HookMatcher) for ms in hooks.values() for m in ms)
    context = HookContext(signal=None)
    base = {"session_id": "sdk-1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(repo)}

    (prompt_matcher,) = hooks["UserPromptSubmit"]
    first = UserPromptSubmitHookInput(**base, hook_event_name="UserPromptSubmit",
                                      prompt="the tests fail with KeyError in test_app.py")
    answer = await prompt_matcher.hooks[0](first, None, context)
    (episode,) = _episodes(tmp_path)
    assert lam.episode(episode).eligible == [lesson]
    injected = [lam.get(i) for i in lam.episode(episode).injected]  # or none: the holdout coin
    assert answer == ({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                              "additionalContext": render_prompt(injected)}} if injected else {})

    (edit_matcher,) = hooks["PostToolUse"]
    assert edit_matcher.matcher == "Edit|Write|MultiEdit|NotebookEdit|Read"
    (repo / "app.py").write_text("def main():\n    return 1\n")
    edit = PostToolUseHookInput(**base, hook_event_name="PostToolUse", tool_name="Edit",
                                tool_input={"file_path": str(repo / "app.py"), "old_string": "x", "new_string": "y"},
                                tool_response={"success": True}, tool_use_id="toolu_9")
    assert await edit_matcher.hooks[0](edit, "toolu_9", context) == {}
    git(repo, "commit", "-q", "-am", "fix")
    stop = StopHookInput(**base, hook_event_name="Stop", stop_hook_active=False)
    assert await hooks["Stop"][0].hooks[0](stop, None, context) == {}

    assert lam.episode(episode).signal == "shipped"
    assert lam.episode(episode).context["error_class"] == "KeyError"


async def test_sdk_hooks_fail_open(tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the failure is kept in ~/.lamar
    lam = Lamar(str(tmp_path / "sdk.db"))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state")
    broken = UserPromptSubmitHookInput(session_id="s", transcript_path="", cwd=str(repo),
                                       hook_event_name="UserPromptSubmit", prompt=None)  # type: ignore[typeddict-item]
    assert await hooks["UserPromptSubmit"][0].hooks[0](broken, None, HookContext(signal=None)) == {}
    lam.close()
    closed = UserPromptSubmitHookInput(session_id="s", transcript_path="", cwd=str(repo),
                                       hook_event_name="UserPromptSubmit", prompt="fix the build")
    assert await hooks["UserPromptSubmit"][0].hooks[0](closed, None, HookContext(signal=None)) == {}
    log = (tmp_path / "state" / "claude-code.log").read_text().splitlines()
    assert len(log) == 2 and "no string 'prompt'" in log[0]


def _episodes(tmp_path: Path) -> list[str]:
    import json

    state = json.loads((tmp_path / "state" / "claude-code.state.json").read_text())
    return list(state["episodes"])


async def test_sdk_hooks_run_inside_a_real_agent(repo: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """`query()` starts the real bundled Claude Code, which calls the callbacks over the SDK's protocol."""
    from claude_agent_sdk import ResultMessage, query

    from .fake_anthropic import serve

    lam = Lamar(str(tmp_path / "sdk.db"), k=2, seed=5)
    lam.add(Experience("adding a module", "export its names in __all__", scope=Scope(project="shop")))
    server, url = serve(str(repo))
    options = ClaudeAgentOptions(
        hooks=lamar_claude_code.hooks(lam, state_dir=tmp_path / "state"), cwd=str(repo),
        permission_mode="acceptEdits",
        env={"HOME": env["HOME"], "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url,
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    try:
        results = [m async for m in query(prompt="please create version.py for the release", options=options)
                   if isinstance(m, ResultMessage)]
    finally:
        server.shutdown()
    assert len(results) == 1 and (repo / "version.py").exists()
    (episode,) = _episodes(tmp_path)
    state = (tmp_path / "state" / "claude-code.state.json").read_text()
    assert '"files":["version.py"]' in state  # the SDK's PostToolUse callback saw Claude's Write
    assert lam.episode(episode).context == {"project": "shop", "language": "python", "task": "feature"}
    expected = render_prompt([lam.get(i) for i in lam.episode(episode).injected])
    transcript = next((Path(env["HOME"]) / ".claude" / "projects").glob(f"*/{results[0].session_id}.jsonl"))
    attached = [line for line in transcript.read_text().splitlines() if '"hook_additional_context"' in line]
    assert len(attached) == (1 if expected else 0)
    if expected:
        import json

        assert json.loads(attached[0])["attachment"]["content"] == [expected]
    lam.close()


async def test_leaving_the_sdk_hooks_traces_the_sessions_last_turn(repo: Path, tmp_path: Path,
                                                                     env: dict[str, str]) -> None:
    """The SDK has no SessionEnd: the turn no next prompt closes is traced as its hooks end, as SessionEnd does."""
    import json

    from claude_agent_sdk import ResultMessage, query

    from .fake_anthropic import serve

    lam = Lamar(str(tmp_path / "sdk.db"), k=2, seed=5)
    server, url = serve(str(repo))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state")
    options = ClaudeAgentOptions(
        hooks=hooks, cwd=str(repo), permission_mode="acceptEdits",
        env={"HOME": env["HOME"], "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url,
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    traces = tmp_path / "state" / "claude-code.traces.jsonl"
    try:
        async with hooks:
            results = [m async for m in query(prompt="please create version.py for the release", options=options)
                       if isinstance(m, ResultMessage)]
            assert not traces.exists()  # the session's Stop leaves its only turn open
    finally:
        server.shutdown()
    (episode,) = _episodes(tmp_path)
    (trace,) = [json.loads(line) for line in traces.read_text().splitlines()]
    assert (trace["id"], trace["episode_id"]) == (f"cc-{results[0].session_id}-1", episode)
    assert trace["input"] == "please create version.py for the release"
    assert any(step.startswith("Write:") for step in trace["attempted"])
    assert trace["outcome"] == lam.episode(episode).signal == "accepted"  # the silence at the end, as SessionEnd
    await hooks.end()  # every session it saw is ended once
    assert len(traces.read_text().splitlines()) == 1
    lam.close()


async def test_ending_the_sdk_hooks_fails_open(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the failure is kept in ~/.lamar
    lam = Lamar(str(tmp_path / "sdk.db"))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state")
    prompt = UserPromptSubmitHookInput(session_id="s", transcript_path=str(tmp_path / "gone.jsonl"), cwd=str(repo),
                                       hook_event_name="UserPromptSubmit", prompt="fix the build")
    await hooks["UserPromptSubmit"][0].hooks[0](prompt, None, HookContext(signal=None))
    lam.close()
    await hooks.end("s")  # a closed engine: logged, not raised
    await hooks.end("never-seen")
    log = (tmp_path / "state" / "claude-code.log").read_text()
    assert "sdk SessionEnd:" in log


async def test_an_end_returns_once_the_sessions_are_ended_even_while_another_end_is_ending_them(
        repo: Path, tmp_path: Path) -> None:
    # Two tasks end the hooks (a client's own end(session) and the async with around them): the
    # second found the sessions taken by the first and returned at once, before any was ended, so a
    # program that then closed the engine lost the session's end (its episode stayed pending).
    import asyncio
    import fcntl
    import os

    lam = Lamar(str(tmp_path / "sdk.db"))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state")
    prompt = UserPromptSubmitHookInput(session_id="s", transcript_path=str(tmp_path / "t.jsonl"), cwd=str(repo),
                                       hook_event_name="UserPromptSubmit", prompt="fix the build")
    await hooks["UserPromptSubmit"][0].hooks[0](prompt, None, HookContext(signal=None))
    stop = StopHookInput(session_id="s", transcript_path=str(tmp_path / "t.jsonl"), cwd=str(repo),
                         hook_event_name="Stop", stop_hook_active=False)
    await hooks["Stop"][0].hooks[0](stop, None, HookContext(signal=None))  # the turn finished
    (episode,) = _episodes(tmp_path)
    lock = os.open(tmp_path / "state" / "claude-code.state.json.lock", os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another hook holds the state: the first end waits on it
        first = asyncio.ensure_future(hooks.end("s"))
        await asyncio.sleep(0)  # the first end has taken the session and waits for the lock
        second = asyncio.ensure_future(hooks.end())
        done, _ = await asyncio.wait({second}, timeout=0.5)
        assert not done  # the session is not ended yet: neither end may say it is
    finally:
        os.close(lock)  # releases the lock
    await second
    assert lam.episode(episode).signal == "accepted"  # ended by the time the second end returns
    await first
    lam.close()


async def test_a_service_that_never_ends_its_sessions_keeps_only_max_sessions_open(repo: Path, tmp_path: Path,
                                                                                    env: dict[str, str]) -> None:
    # Each session's record was kept until end(): a service running query() after query() and never
    # calling it grew one record per session, and no session's last turn was traced until it did.
    import json

    from claude_agent_sdk import ResultMessage, query

    from .fake_anthropic import serve

    lam = Lamar(str(tmp_path / "sdk.db"), k=2, seed=5)
    server, url = serve(str(repo))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state", max_sessions=1)
    options = ClaudeAgentOptions(
        hooks=hooks, cwd=str(repo), permission_mode="acceptEdits",
        env={"HOME": env["HOME"], "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url,
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    traces = tmp_path / "state" / "claude-code.traces.jsonl"
    sessions = []
    try:
        for name in ("version.py", "release.py"):
            sessions += [m.session_id async for m in query(prompt=f"please create {name} for the release",
                                                           options=options) if isinstance(m, ResultMessage)]
        assert len(hooks._open) == 1  # the first session was ended by the second's first event
        await hooks.end(sessions[0])  # returns once that end is done (a no-op beyond waiting)
        (first,) = [json.loads(line) for line in traces.read_text().splitlines()]
        assert first["id"] == f"cc-{sessions[0]}-1" and first["input"] == "please create version.py for the release"
        assert first["outcome"] == "accepted" and any(step.startswith("Write:") for step in first["attempted"])
        await hooks.end()
    finally:
        server.shutdown()
    ids = [json.loads(line)["id"] for line in traces.read_text().splitlines()]
    assert ids == [f"cc-{sessions[0]}-1", f"cc-{sessions[1]}-1"]  # each last turn traced once, none dropped
    lam.close()


async def test_a_session_idle_past_the_limit_is_ended_by_the_next_event(repo: Path, tmp_path: Path) -> None:
    import asyncio
    import json

    lam = Lamar(str(tmp_path / "sdk.db"))
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state", idle=0.05)
    (prompt_hook,) = hooks["UserPromptSubmit"][0].hooks
    transcripts = {}
    for sid in ("old", "new"):
        transcripts[sid] = tmp_path / f"{sid}.jsonl"
        transcripts[sid].write_text(json.dumps({"type": "user", "uuid": f"u-{sid}", "timestamp": "2026-01-01T00:00:00Z",
                                                "message": {"role": "user", "content": "fix the build"}}) + "\n")
    for sid in ("old", "new"):
        await prompt_hook(UserPromptSubmitHookInput(session_id=sid, transcript_path=str(transcripts[sid]),
                                                    cwd=str(repo), hook_event_name="UserPromptSubmit",
                                                    prompt="fix the build"), None, HookContext(signal=None))
        await asyncio.sleep(0.1)
    assert list(hooks._open) == ["new"]
    await hooks.end("old")
    traces = tmp_path / "state" / "claude-code.traces.jsonl"
    assert [json.loads(line)["id"] for line in traces.read_text().splitlines()] == ["cc-old-1"]
    await hooks.end()
    assert len(traces.read_text().splitlines()) == 2
    lam.close()


def test_the_sdk_hooks_bounds_must_be_positive(tmp_path: Path) -> None:
    import pytest

    from lamar import InvalidArgument

    lam = Lamar(str(tmp_path / "sdk.db"))
    for bad in ({"idle": 0}, {"idle": float("nan")}, {"max_sessions": 0}, {"max_sessions": 1.5}):
        with pytest.raises(InvalidArgument, match="must be a positive"):
            lamar_claude_code.hooks(lam, state_dir=tmp_path, **bad)
    lam.close()


async def test_a_session_with_an_event_running_is_not_ended_past_max_sessions(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # With max_sessions=1, a second session's event ended the first while that one's own prompt was
    # still being handled: its SessionEnd then ran beside (or after) the prompt it should have
    # followed, and reported the new turn accepted before the human did anything.
    import asyncio
    import threading

    from lamar_claude_code import sdk

    seen: list[tuple[str, str]] = []
    started, release = threading.Event(), threading.Event()

    def handle_event(payload: dict[str, object], *args: object, **kwargs: object) -> str:
        event, session = str(payload["hook_event_name"]), str(payload["session_id"])
        if (event, session) == ("UserPromptSubmit", "a"):
            started.set()
            release.wait(10)
        seen.append((event, session))
        return ""

    monkeypatch.setattr(sdk, "handle_event", handle_event)
    lam = Lamar(":memory:")
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state", budget=30.0, max_sessions=1)
    (prompt_hook,) = hooks["UserPromptSubmit"][0].hooks

    def prompt(sid: str) -> UserPromptSubmitHookInput:
        return UserPromptSubmitHookInput(session_id=sid, transcript_path=str(tmp_path / f"{sid}.jsonl"),
                                         cwd=str(tmp_path), hook_event_name="UserPromptSubmit", prompt="fix it")

    first = asyncio.ensure_future(prompt_hook(prompt("a"), None, HookContext(signal=None)))
    assert await asyncio.to_thread(started.wait, 10)
    await prompt_hook(prompt("b"), None, HookContext(signal=None))  # a is mid-prompt: b's event leaves it open
    await asyncio.sleep(0.2)
    assert ("SessionEnd", "a") not in seen
    release.set()
    await first
    await prompt_hook(prompt("b"), None, HookContext(signal=None))  # a is idle now: ended as the oldest
    await hooks.end()
    assert seen.index(("UserPromptSubmit", "a")) < seen.index(("SessionEnd", "a"))
    assert seen.count(("SessionEnd", "a")) == 1 and seen.count(("SessionEnd", "b")) == 1
    assert list(hooks._open) == []
    lam.close()


async def test_a_failing_sdk_callback_is_kept_for_status_until_an_event_works(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The command hooks keep their last failure, which `lamar claude-code status` shows as "hooks failing
    # since"; the SDK's callbacks only logged it, so a service whose every prompt failed looked healthy.
    from lamar_claude_code.notice import status_line

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    store = str(tmp_path / "sdk.db")
    lam = Lamar(store)
    hooks = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state")
    lam.close()  # every event now fails inside the engine
    prompt = UserPromptSubmitHookInput(session_id="s", transcript_path="", cwd=str(repo),
                                       hook_event_name="UserPromptSubmit", prompt="fix the build")
    assert await hooks["UserPromptSubmit"][0].hooks[0](prompt, None, HookContext(signal=None)) == {}
    failing = status_line(store)
    assert failing is not None and failing.startswith("hooks failing since ") and "(UserPromptSubmit: " in failing
    with Lamar(store) as again:
        working = lamar_claude_code.hooks(again, state_dir=tmp_path / "state")
        await working["UserPromptSubmit"][0].hooks[0](prompt, None, HookContext(signal=None))
        assert status_line(store) is None  # the store works again: nothing to tell
        await working.end()
