"""`lessons_given`, which the hook tests read a prompt's answer with: an empty answer passes only when the
prompt's own episode held out every lesson it wanted, never when the hook skipped the prompt another way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Lamar, Recall
from tests.hook_answers import lessons_given

from .conftest import Hook, payload


def _held_out(store: Path, context: dict[str, str]) -> str:
    """An episode of `context` whose wanted lessons the evidence coin all held out."""
    with Lamar(str(store), holdout=0.99, seed=5) as lam:
        for _ in range(200):
            rec = lam.recall(context)
            if rec.held_out and not rec.ids:
                return rec.episode_id
    raise AssertionError("the coin held nothing out")


def _injected(store: Path, context: dict[str, str]) -> Recall:
    """An episode of `context` that injected its wanted lessons (no coin)."""
    with Lamar(str(store), holdout=0.0, seed=5) as lam:
        rec = lam.recall(context)
    assert rec.ids and not rec.held_out, rec
    return rec


def test_a_prompt_the_hook_skipped_is_no_held_out_answer(hook: Hook, repo: Path) -> None:
    first = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert first.returncode == 0, first.stderr
    lessons_given(hook.store, "s1", first.stdout, "the tests fail")
    # The first prompt's episode, as the coin may make it: every lesson held out, and the answer empty.
    state = hook.state()
    mine = state["sessions"]["s1"]["episode"]
    held = _held_out(hook.store, state["episodes"][mine]["context"])
    state["episodes"][held] = {**state["episodes"].pop(mine), "injected": []}
    state["sessions"]["s1"]["episode"] = state["last"]["episode"] = held
    state["last"]["injected"] = 0
    hook.state_file.write_text(json.dumps(state))
    assert lessons_given(hook.store, "s1", b"", "the tests fail") is None
    # The next prompt runs out of its budget before its recall: no episode of its own, an empty answer. The
    # session's episode is still the first prompt's, which says "held out", but this answer is a skipped prompt.
    (Path(hook.env["HOME"]) / ".lamar" / "claude-code.toml").write_text("[hook]\nbudget_seconds = 0.001\n")
    second = hook(payload("UserPromptSubmit", "s1", repo, prompt="the build fails on main"))
    assert (second.returncode, second.stdout) == (0, b"")
    with pytest.raises(AssertionError, match="an earlier prompt's"):
        lessons_given(hook.store, "s1", second.stdout, "the build fails on main")


def test_an_empty_answer_to_an_episode_that_injected_lessons_fails_with_why(hook: Hook, repo: Path) -> None:
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert done.returncode == 0, done.stderr
    lessons_given(hook.store, "s1", done.stdout, "the tests fail")
    # Whatever the coin did to this prompt, point its session at an episode of the same context that injected.
    state = hook.state()
    mine = state["sessions"]["s1"]["episode"]
    given = _injected(hook.store, state["episodes"][mine]["context"])
    state["episodes"][given.episode_id] = {**state["episodes"].pop(mine), "injected": list(given.ids)}
    state["sessions"]["s1"]["episode"] = state["last"]["episode"] = given.episode_id
    state["last"]["injected"] = len(given.ids)
    hook.state_file.write_text(json.dumps(state))
    with pytest.raises(AssertionError, match="injected lessons, but the answer"):
        lessons_given(hook.store, "s1", b"", "the tests fail")
