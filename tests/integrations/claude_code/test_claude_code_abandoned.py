"""A prompt the warm hook (the daemon) gave up on while another process held the store: its episode,
stored once that writer is done, was never delivered, so it is expired and never reported."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar
from lamar_claude_code.hook import paths_for, run

from .conftest import payload


def _sdk_prompt(store: Path, repo: Path, state: Path, budget: float) -> tuple[Lamar, Any, Any]:
    """A warm engine on `store`, its UserPromptSubmit callback for the Agent SDK (bookkeeping in `state`, a
    `budget` in seconds), and a prompt event for that callback."""
    from claude_agent_sdk import UserPromptSubmitHookInput

    import lamar_claude_code

    lam = Lamar(str(store))
    (matcher,) = lamar_claude_code.hooks(lam, state_dir=state, budget=budget)["UserPromptSubmit"]
    event = UserPromptSubmitHookInput(session_id="s1", transcript_path=str(state.parent / "t.jsonl"), cwd=str(repo),
                                      hook_event_name="UserPromptSubmit", prompt="the tests fail")
    return lam, matcher, event


def _expired_alone(lam: Lamar) -> str:
    """The one episode the store holds, once it is expired and nothing is pending."""
    (episode,) = [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]
    assert lam.episode(episode).settled == "expired" and lam.pending() == []
    return episode


def test_an_episode_stored_after_the_hook_gave_up_is_expired_not_tracked(
        store: Path, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    lam = Lamar(str(store))  # warm, as the daemon holds it
    writer = sqlite3.connect(store, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
    gave_up: list[bool] = []
    out = io.StringIO()
    event = json.dumps(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail")).encode()
    run(io.BytesIO(event), out, str(store), budget=0.2, engine=lambda: lam, overran=lambda: gave_up.append(True))
    assert gave_up and out.getvalue() == ""  # nothing reached Claude Code
    writer.execute("COMMIT")
    writer.close()
    for worker in [t for t in threading.enumerate() if t.name == "lamar-hook"]:
        worker.join(60)  # the recall goes on once the writer is done

    episode = _expired_alone(lam)
    state = json.loads(paths_for(str(store)).state.read_text())
    assert state["episodes"].get(episode, {}).get("delivered", False) is False  # never reported as injected
    lam.close()


def test_the_sdk_callback_that_gave_up_leaves_no_pending_episode(store: Path, repo: Path, tmp_path: Path) -> None:
    import asyncio

    from claude_agent_sdk import HookContext

    lam, matcher, event = _sdk_prompt(store, repo, tmp_path / "state", budget=0.2)
    writer = sqlite3.connect(store, isolation_level=None)

    async def prompt() -> object:
        writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
        try:
            return await matcher.hooks[0](event, None, HookContext(signal=None))
        finally:
            writer.execute("COMMIT")  # the recall goes on in its thread; asyncio.run waits for it

    assert asyncio.run(prompt()) == {}  # nothing injected
    writer.close()
    _expired_alone(lam)
    lam.close()


def test_an_sdk_callback_cancelled_by_the_client_leaves_no_pending_episode(store: Path, repo: Path,
                                                                           tmp_path: Path) -> None:
    """The SDK cancels a hook callback (a control_cancel_request from the CLI, the client closing)
    while its recall waits for the store: the recall's lessons never reach Claude either."""
    import asyncio

    from claude_agent_sdk import HookContext

    state = tmp_path / "state"
    lam, matcher, event = _sdk_prompt(store, repo, state, budget=60.0)
    writer = sqlite3.connect(store, isolation_level=None)

    async def prompt() -> None:
        writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
        try:
            call = asyncio.ensure_future(matcher.hooks[0](event, None, HookContext(signal=None)))
            for _ in range(6000):  # a bound on a hang: until the hook notes its recall, about to start
                if (state / "claude-code.state.json.recalling").exists():
                    break
                await asyncio.sleep(0.01)
            call.cancel()  # what the SDK's Query does on a control_cancel_request, or on close
            with pytest.raises(asyncio.CancelledError):
                await call
        finally:
            writer.execute("COMMIT")  # the recall goes on in its thread; asyncio.run waits for it

    asyncio.run(prompt())
    writer.close()
    _expired_alone(lam)
    lam.close()
