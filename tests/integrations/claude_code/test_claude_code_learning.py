"""The loop closes through nothing but hook events (the hook's own `run`, in process, for speed, with
one seeded engine so the holdout coins repeat): a
developer who corrects Claude whenever a lesson was missing makes it proven helpful, and one who
corrects Claude whenever a lesson was shown makes the bandit stop showing it."""

from __future__ import annotations

import io
import json
from pathlib import Path

from lamar import Experience, Lamar, Scope, Verdict
from lamar_claude_code.hook import run

from .conftest import payload

PROMPTS = ["the tests fail in test_cart.py", "the tests fail again in checkout", "the tests fail on CI now"]


def _sessions(repo: Path, lam: Lamar, action: str, correct_when_shown: bool, n: int) -> list[bool]:
    """n sessions of two prompts; the second corrects the first depending on what was injected.

    Returns whether the lesson was shown, per session.
    """
    shown_log = []
    for i in range(n):
        out = io.StringIO()
        first = payload("UserPromptSubmit", f"s{i}", repo, prompt=PROMPTS[i % 3])
        run(io.BytesIO(json.dumps(first).encode()), out, lam.store.location, budget=30.0, engine=lambda: lam)
        shown = action in out.getvalue()
        shown_log.append(shown)
        corrected = shown if correct_when_shown else not shown
        follow = "no, that's wrong, try again" if corrected else "thanks, now add a changelog line"
        run(io.BytesIO(json.dumps(payload("UserPromptSubmit", f"s{i}", repo, prompt=follow)).encode()),
            io.StringIO(), lam.store.location, budget=30.0, engine=lambda: lam)
    return shown_log


def test_a_lesson_the_developer_needs_is_proven_helpful(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "learn.db"
    # a coin of 0.3 proves it within these 200 sessions (the default, 0.04, needs thousands)
    with Lamar(str(store), seed=11, holdout=0.3) as lam:
        good = lam.add(Experience("the tests fail", "run the failing test alone first", scope=Scope(project="shop")))
        shown = _sessions(repo, lam, "run the failing test alone first", correct_when_shown=False, n=200)
    with Lamar(str(store)) as lam:  # a fresh process's view of the same store
        ev = lam.evidence(good)
        assert ev.verdict is Verdict.HELPS, ev
        assert ev.lower > 0 and ev.held_out == shown.count(False) and ev.injected == shown.count(True)


def test_a_lesson_that_gets_corrected_stops_being_shown(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "learn.db"
    with Lamar(str(store), seed=11) as lam:
        bad = lam.add(Experience("the tests fail", "delete the failing test", scope=Scope(project="shop")))
        shown = _sessions(repo, lam, "delete the failing test", correct_when_shown=True, n=150)
    with Lamar(str(store)) as lam:
        ev = lam.evidence(bad)
        assert ev.lift < 0 and ev.eligible == 150
    assert sum(shown[:20]) > 4 * sum(shown[-50:])  # tried while cold, then mostly left out
