"""tools/glr_sweep.py: a bank of CUSUMs over fall sizes in place of the engine's pair, one level at a time."""

from __future__ import annotations

import random

from lamar.policy import change, lesson
from tests.tools import load_tool


def _feed(detector: object, fall_at: int, episodes: int, drop: float, seed: int = 1) -> int | None:
    """A lesson injected 80% of the time at 0.6 success (0.5 absent) whose injected success falls by
    `drop` after `fall_at` injected episodes: the injected episodes after the fall until it fires."""
    rng, seen = random.Random(seed), 0
    for _ in range(episodes):
        injected = rng.random() < 0.8
        seen += injected
        success = (0.6 - (drop if seen > fall_at else 0.0)) if injected else 0.5
        if detector.update(1.0 if rng.random() < success else 0.0, injected, 0.5) is not None:  # type: ignore[attr-defined]
            return seen - fall_at
    return None


def test_the_bank_sees_a_small_fall_and_a_large_one_and_keeps_quiet_on_a_steady_lesson() -> None:
    tool = load_tool("glr_sweep")
    with tool.installed(10.0, False):
        # young lessons' references are short, so some false alarms are expected (about a third here)
        assert sum(_feed(lesson.ChangeDetector(), 10**6, 3000, 0.0, seed) is not None for seed in range(20)) <= 12
        large = sorted(_feed(lesson.ChangeDetector(), 600, 3000, 0.4, seed) or 10**6 for seed in range(9))
        small = sorted(_feed(lesson.ChangeDetector(), 600, 6000, 0.1, seed) or 10**6 for seed in range(9))
    assert 0 < large[4] < 60  # the median of nine lessons (a false alarm before the fall counts below 0)
    assert 60 < small[4] < 1500
    detector = tool.BankDetector()
    _feed(detector, 10**6, 500, 0.0)
    assert tool.BankDetector.from_dict(detector.to_dict()).to_dict() == detector.to_dict()
    assert tool.BankDetector.from_dict(change.ChangeDetector().to_dict()).to_dict() == tool.BankDetector().to_dict()


def test_the_contrast_follows_the_absent_episodes_and_the_restart_hands_over_the_excursion() -> None:
    tool = load_tool("glr_sweep")
    with tool.installed(14.0, True):
        detector = lesson.ChangeDetector()
        assert _feed(detector, 400, 4000, 0.3) is not None
        assert detector.stat0 == 0.0 and detector.ref_w > 0.0  # restarted from the excursion
        assert tool.null_alarms(lesson.ChangeDetector, 2000, step=0.2) >= 0.0


def test_settings_parse_and_the_engine_comes_back_after_each() -> None:
    tool = load_tool("glr_sweep")
    assert tool.setting("8.25") == (8.25, False) and tool.setting("c14") == (14.0, True)
    assert tool.name_of(14.0, True) == "c14" and tool.name_of(0.0, False) == "default"
    with tool.installed(10.0, False):
        assert lesson.ChangeDetector is tool.BankDetector
    assert lesson.ChangeDetector is change.ChangeDetector
