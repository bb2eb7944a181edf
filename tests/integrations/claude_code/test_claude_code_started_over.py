"""Starting over: the episodes the hooks' state tracks for a store deleted (or replaced) since are let go of."""

from __future__ import annotations

import json
import os
from pathlib import Path

from lamar import Experience, Lamar, Scope
from tests.hook_answers import lessons_given

from .conftest import Hook, payload
from .test_claude_code_install import lamar


def _prompt(hook: Hook, session: str, repo: Path) -> None:
    done = hook(payload("UserPromptSubmit", session, repo, prompt="the tests fail again"))
    assert done.returncode == 0, done.stderr
    lessons_given(hook.store, session, done.stdout, "the tests fail again")  # the lessons, or all held out


def _start_over(store: Path) -> None:
    """The store deleted by hand and made again (as `lamar import-rules --apply` makes it), its sidecars kept."""
    for name in (store, store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")):
        if name.exists():
            name.unlink()
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests fail", "read the first failure", scope=Scope(project="shop")))


def test_a_deleted_stores_episodes_are_let_go_of(hook: Hook, repo: Path, env: dict[str, str]) -> None:
    """After starting over, status said "episodes tracked: 2" for episodes of a store that was gone, and the hooks
    kept watching them for days: no report can reach them now."""
    for session in ("s1", "s2"):
        _prompt(hook, session, repo)
    old = set(hook.state()["episodes"])
    assert len(old) == 2
    status = lamar(env, repo, "status", "--store", str(hook.store))
    assert "episodes tracked: 2," in status.stdout, status.stdout

    _start_over(hook.store)
    status = lamar(env, repo, "status", "--store", str(hook.store))
    assert ("episodes tracked: 0, watched by git: 0 (2 more of a store since deleted or replaced, which the hooks "
            "let go of at the next prompt)") in status.stdout.splitlines(), status.stdout
    assert set(hook.state()["episodes"]) == old  # status changes nothing

    _prompt(hook, "s3", repo)
    kept = hook.state()["episodes"]
    assert len(kept) == 1 and not set(kept) & old
    assert "let go of 2 episodes the store does not hold (deleted or replaced since)" in hook.log_file.read_text()
    status = lamar(env, repo, "status", "--store", str(hook.store))
    assert "episodes tracked: 1, watched by git: 0" in status.stdout.splitlines(), status.stdout

    gone = dict(env, LAMAR_STORE=str(hook.store))
    for name in (hook.store, hook.store.with_name(hook.store.name + "-wal")):
        if name.exists():
            os.unlink(name)
    status = lamar(gone, repo, "status", "--store", str(hook.store))
    assert "episodes tracked: 0, watched by git: 0 (1 more of a store since deleted or replaced" in status.stdout


def test_a_compacted_episode_alone_leaves_the_rest_tracked(hook: Hook, repo: Path) -> None:
    """Only a store that lacks the newest tracked episode is taken as replaced: an older episode a sleep
    compacted away is forgotten when its outcome is reported, as before, and nothing else is let go of."""
    _prompt(hook, "s1", repo)
    state = hook.state()
    (newest,) = state["episodes"]
    compacted = dict(state["episodes"][newest], time=state["episodes"][newest]["time"] - 60, session="s0")
    state["episodes"]["ep_compacted"] = compacted
    hook.state_file.write_text(json.dumps(state))
    _prompt(hook, "s2", repo)
    assert {newest, "ep_compacted"} < set(hook.state()["episodes"])
    assert "let go of" not in (hook.log_file.read_text() if hook.log_file.exists() else "")
