"""A prompt the warm hook (the daemon) gave up on while another process held the store: its episode,
stored once that writer is done, was never delivered, so it is expired and never reported."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from lamar import Lamar
from lamar_claude_code.hook import paths_for, run

from .conftest import payload


def test_an_episode_stored_after_the_hook_gave_up_is_expired_not_tracked(store: Path, repo: Path,
                                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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

    (episode,) = [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]
    assert lam.episode(episode).settled == "expired" and lam.pending() == []
    state = json.loads(paths_for(str(store)).state.read_text())
    assert state["episodes"].get(episode, {}).get("delivered", False) is False  # never reported as injected
    lam.close()


def test_the_sdk_callback_that_gave_up_leaves_no_pending_episode(store: Path, repo: Path, tmp_path: Path) -> None:
    import asyncio

    from claude_agent_sdk import HookContext, UserPromptSubmitHookInput

    import lamar_claude_code

    lam = Lamar(str(store))
    (matcher,) = lamar_claude_code.hooks(lam, state_dir=tmp_path / "state", budget=0.2)["UserPromptSubmit"]
    event = UserPromptSubmitHookInput(session_id="s1", transcript_path=str(tmp_path / "t.jsonl"), cwd=str(repo),
                                      hook_event_name="UserPromptSubmit", prompt="the tests fail")
    writer = sqlite3.connect(store, isolation_level=None)

    async def prompt() -> object:
        writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
        try:
            return await matcher.hooks[0](event, None, HookContext(signal=None))
        finally:
            writer.execute("COMMIT")  # the recall goes on in its thread; asyncio.run waits for it

    assert asyncio.run(prompt()) == {}  # nothing injected
    writer.close()
    (episode,) = [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]
    assert lam.episode(episode).settled == "expired" and lam.pending() == []
    lam.close()
