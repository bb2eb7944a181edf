"""`lessons_given`, which the hook tests read a prompt's answer with: an empty answer passes only when the
prompt's own episode held out every lesson it wanted, never when the hook skipped the prompt another way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Lamar, Recall
from tests.hook_answers import lessons_given

from .conftest import Hook, payload


def _point_session_at(hook: Hook, *, held_out: bool) -> Recall:
    """Log an episode of the session's own context, every wanted lesson held out or all injected as chosen, and
    point the session's state at it as the hook would have: the coin's two outcomes, whatever it drew."""
    state = hook.state()
    mine = state["sessions"]["s1"]["episode"]
    with Lamar(str(hook.store), holdout=0.99 if held_out else 0.0, seed=5) as lam:
        rec = next(r for r in (lam.recall(state["episodes"][mine]["context"]) for _ in range(200))
                   if ((r.held_out and not r.ids) if held_out else r.ids))
    state["episodes"][rec.episode_id] = {**state["episodes"].pop(mine), "injected": list(rec.ids)}
    state["sessions"]["s1"]["episode"] = state["last"]["episode"] = rec.episode_id
    state["last"]["injected"] = len(rec.ids)
    hook.state_file.write_text(json.dumps(state))
    return rec


def test_a_prompt_the_hook_skipped_is_no_held_out_answer(hook: Hook, repo: Path) -> None:
    first = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert first.returncode == 0, first.stderr
    lessons_given(hook.store, "s1", first.stdout, "the tests fail")
    # The first prompt's episode, as the coin may make it: every lesson held out, and the answer empty.
    _point_session_at(hook, held_out=True)
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
    _point_session_at(hook, held_out=False)
    with pytest.raises(AssertionError, match="injected lessons, but the answer"):
        lessons_given(hook.store, "s1", b"", "the tests fail")
