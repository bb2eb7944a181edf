"""Eight hooks at once over their budget (issue 38 item 8): a prompt's episode is stored or not at all,
and every stored episode is tracked and later reported."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lamar import Lamar
from lamar.store import open_store
from lamar_claude_code.settings import hook_command, invocation

from .conftest import Hook, payload, project_config

HOOKS = 8


def _stored(store: Path) -> set[str]:
    raw = open_store(str(store))
    try:
        return {e.data["id"] for e in raw.read(0) if e.kind == "episode"}
    finally:
        raw.close()


def _tracked(hook: Hook) -> dict[str, dict[str, object]]:
    """The hook's tracked episodes; none when no hook got far enough to write its state file (all
    eight may give up on a loaded machine, which is the "not at all" half of the promise)."""
    return hook.state()["episodes"] if hook.state_file.exists() else {}


@pytest.mark.parametrize("command", ["installed", "in-process"])
def test_eight_hooks_over_budget_store_each_episode_tracked_or_not_at_all(hook: Hook, repo: Path,
                                                                          command: str) -> None:
    argv = (shlex.split(invocation(hook_command(str(hook.store)))) if command == "installed"
            else [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(hook.store)])
    project_config(repo, "[hook]\nbudget_seconds = 0.3\n", hook.env["HOME"])

    def run(session: str, prompt: str, codes: list[int]) -> None:
        event = json.dumps(payload("UserPromptSubmit", session, repo, prompt=prompt)).encode()
        codes.append(subprocess.run(argv, input=event, env=hook.env, capture_output=True, timeout=60,
                                    check=False).returncode)

    blocker = sqlite3.connect(hook.store, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the store past the hooks' budget
    codes: list[int] = []
    threads = [threading.Thread(target=run, args=(f"s{i}", f"add feature number {i}", codes)) for i in range(HOOKS)]
    for thread in threads:
        thread.start()
    time.sleep(0.4)  # past the 0.3 s budget, before its 0.25 s grace ends
    blocker.execute("ROLLBACK")
    blocker.close()
    for thread in threads:
        thread.join()
    first = _stored(hook.store)
    tracked = _tracked(hook)
    assert codes == [0] * HOOKS
    assert first <= set(tracked)  # every stored episode is tracked
    assert all(tracked[e]["delivered"] for e in first)

    codes = []
    follow = [threading.Thread(target=run, args=(f"s{i}", "now write the docs for it", codes)) for i in range(HOOKS)]
    for thread in follow:
        thread.start()
    for thread in follow:
        thread.join()
    assert codes == [0] * HOOKS
    assert first <= set(_tracked(hook))  # still tracked, reported or waiting for its report
    # A follow-up over its budget may stop before it reports; the session's next event does it.
    for i in range(HOOKS):
        run(f"s{i}", "thanks, that is all", codes)
    with Lamar(str(hook.store)) as lam:
        unreported = [e for e in first if lam.episode(e).signal is None]
    assert unreported == []
