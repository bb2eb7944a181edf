"""tools/slot_margin.py: the fall detector's level scaled by a lesson's margin over the best left-out lesson."""

from __future__ import annotations

import random

import pytest

from lamar.experience import Experience, Scope
from lamar.policy import change, fold
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from tests.tools import load_tool


def _restart_at(runner_up: float, chosen: object) -> int | None:
    """Lesson a, injected in 90% of episodes, lifts success by 0.3 over its absence for 300 of its
    injected episodes and then by 0.1; lesson b, never injected, is read at `runner_up` (its arms set
    so). Returns the injected episode after the fall at which a's detector restarts it, or None."""
    tool = load_tool("slot_margin")
    a = LessonState(Experience(precondition="p", action="a", scope=Scope(task="t"), id="a"))
    b = LessonState(Experience(precondition="p", action="b", scope=Scope(task="t"), id="b"))
    b.arms.w_in, b.arms.s_in, b.arms.w_out, b.arms.s_out, b.arms.tries = 1e6, 1e6 * runner_up, 1e6, 0.0, 10
    rng, policy, states = random.Random(5), Policy(), {"a": a, "b": b}
    seen = 0
    with tool.installed(chosen):
        while seen < 1000:
            injected = rng.random() < 0.9
            seen += injected
            lift = (0.3 if seen <= 300 else 0.1) if injected else 0.0
            reward = 1.0 if rng.random() < 0.4 + lift else -1.0
            fold.fold_outcome(
                states.get,
                ["a", "b"],
                ["a"] if injected else [],
                {"a": 1.0},
                {"task": "t"},
                reward,
                1.0,
                policy,
                2,
            )
            if a.restarts:
                return seen - 300
    return None


def test_a_lesson_barely_ahead_of_its_runner_up_is_restarted_sooner_one_far_ahead_as_by_the_engine() -> None:
    tool = load_tool("slot_margin")
    engine = _restart_at(0.0, None)
    assert engine is not None and engine > 0
    # far ahead of an inert runner-up (margin about 0.6 in reward, REF 0.3): the engine's level, the same episode
    assert _restart_at(0.0, tool.setting("5@0.3")) == engine
    # barely ahead of a runner-up at +0.5: the level falls towards 5 and the fall is seen sooner
    soon = _restart_at(0.5, tool.setting("5@0.3"))
    assert soon is not None and soon < engine
    assert (change.LEVEL, change.SLOW_LEVEL) == (16.5, 52.0)  # the fold leaves the constants as they were


def test_settings_are_parsed_and_refused_with_what_to_write() -> None:
    tool = load_tool("slot_margin")
    assert tool.setting("8@0.3") == (8.0, 0.3, 0.0)
    assert tool.name_of(tool.setting("8@0.15~1")) == "8@0.15~1"
    for bad in ("8", "0@0.3", "20@0.3", "8@0", "8@0.3~-1", "8@x"):
        with pytest.raises(ValueError, match="LOW@REF"):
            tool.setting(bad)
    original = fold.fold_outcome
    with tool.installed(tool.setting("8@0.3")):
        assert fold.fold_outcome is not original
    assert fold.fold_outcome is original
