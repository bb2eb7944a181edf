"""tools/changepoint_sweep.py: soft change points in the selection, one hazard at a time."""

from __future__ import annotations

import math
import random

from lamar.policy import features, lesson, selection
from tests.tools import load_tool


def _feed(arms: object, flip_at: int, episodes: int, seed: int = 1) -> None:
    """A lesson injected 70% of the time whose success falls from 0.7 to 0.4 at `flip_at`; 0.5 absent."""
    rng = random.Random(seed)
    for t in range(episodes):
        injected = rng.random() < 0.7
        p = (0.7 if t < flip_at else 0.4) if injected else 0.5
        reward = 1.0 if rng.random() < p else 0.0
        arms.step(reward, injected, 0.5)  # type: ignore[attr-defined]
        arms.record(reward, injected, 1.0)  # type: ignore[attr-defined]


def test_a_fall_moves_the_weight_to_a_short_run_and_a_steady_lesson_keeps_it_on_the_long_one() -> None:
    tool = load_tool("changepoint_sweep")
    tool.SoftArms.hazard = 1.0 / 500
    steady, turned = tool.SoftArms(), tool.SoftArms()
    _feed(steady, 10_000, 800)
    _feed(turned, 400, 800)
    assert math.exp(steady.lead) > 0.9
    assert math.exp(turned.lead) < 0.01
    best = max(turned.runs, key=lambda run: run[0])
    assert best[2] / best[1] - best[4] / best[3] < 0.0 < turned.estimate  # the long run still says it helps
    assert len(turned.runs) <= tool.RUNS - 1
    copy = turned.copy()
    copy.runs[0][1] += 5.0
    assert copy.runs[0][1] != turned.runs[0][1]  # a fold's copy shares no run with its original
    assert tool.SoftArms.from_dict(turned.to_dict()).to_dict() == turned.to_dict()


def test_settings_parse_and_the_engine_comes_back_after_each() -> None:
    tool = load_tool("changepoint_sweep")
    assert tool.setting("500") == (500.0, True) and tool.setting("2000-") == (2000.0, False)
    assert tool.name_of(500.0, False) == "1/500 soft" and tool.name_of(0.0, True) == "default"
    saved = (lesson.ArmStats, features.Slices.sample, lesson.LessonState.observe, lesson.LessonState._restart)
    with tool.patched(500.0, False):
        assert lesson.ArmStats is tool.SoftArms and lesson.LessonState._restart is tool.evidence_restart
    assert (lesson.ArmStats, features.Slices.sample, lesson.LessonState.observe,
            lesson.LessonState._restart) == saved
    assert lesson.ArmStats is selection.ArmStats
