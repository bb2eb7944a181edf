"""tools/window_test.py: a change test inside the fall detector's watch window, when it arms."""

from __future__ import annotations

import random
from typing import Any

import pytest

from lamar.policy import change, features, lesson
from tests.tools import load_tool


def _feed(detector: Any, fall_at: int, injected_episodes: int, drop: float, seed: int) -> int | None:
    """A lesson injected 80% of the time at 0.6 success (0.5 absent) whose injected success falls by `drop`
    after `fall_at` injected episodes: the injected episodes seen when the detector first fires."""
    rng, seen = random.Random(seed), 0
    while seen < injected_episodes:
        injected = rng.random() < 0.8
        seen += injected
        success = (0.6 - (drop if seen > fall_at else 0.0)) if injected else 0.5
        if detector.update(1.0 if rng.random() < success else 0.0, injected, 0.5) is not None:
            return seen
    return None


def test_the_window_test_fires_on_a_fall_inside_the_window_and_keeps_quiet_on_a_steady_lesson() -> None:
    tool = load_tool("window_test")
    assert change.WATCH_AFTER == 50
    # a fall of 0.5 in success halfway through the window's 50 injected episodes: the engine's detector
    # takes it into its reference and fires after a median 112 injected episodes (over ten lessons)
    engine = sorted(_feed(change.ChangeDetector(), 25, 200, 0.5, seed) or 10**6 for seed in range(10))
    assert engine[0] > 50 and engine[5] > 100
    with tool.installed("fire"):
        # the window's test fires as the detector arms (seed 0's fall is among the six in ten it sees)
        assert _feed(lesson.ChangeDetector(), 25, 50, 0.5, seed=0) == 50
        # the same lessons without the fall: none fires by its arming, at the window test's level
        assert [_feed(lesson.ChangeDetector(), 10**6, 50, 0.0, seed) for seed in range(40)] == [None] * 40
    with tool.installed("arm"):
        # re-armed on the early half, the statistic starts at the late half's evidence and fires soon after
        armed = sorted(_feed(lesson.ChangeDetector(), 25, 200, 0.5, seed) or 10**6 for seed in range(10))
        assert armed[0] == 50 and armed[5] < 62
    assert lesson.ChangeDetector is change.ChangeDetector


def test_the_restart_hands_over_the_late_half_and_the_state_round_trips() -> None:
    tool = load_tool("window_test")
    with tool.installed("fire"):
        detector = lesson.ChangeDetector()
        rng, excursion = random.Random(0), None
        while excursion is None and detector.watched < 50:
            injected = rng.random() < 0.8
            success = (0.1 if detector.watched >= 25 else 0.6) if injected else 0.5
            excursion = detector.update(1.0 if rng.random() < success else 0.0, injected, 0.5)
        assert excursion is not None and excursion[0] == 25.0 and excursion[1] == detector.late
        assert excursion[2] == detector.late_w_out > 0  # the absent episodes of the late half
        assert (detector.ref_w, detector.ref_s) == (25.0, detector.late) and detector.stat == 0.0
        copy = detector.copy()
        assert copy.to_dict() == detector.to_dict() and copy.to_dict()["watched"] == 50
        assert tool.WindowDetector.from_dict(detector.to_dict()).to_dict() == detector.to_dict()
        assert tool.WindowDetector.from_dict(change.ChangeDetector().to_dict()).to_dict() == \
            tool.WindowDetector().to_dict()


def test_settings_parse_and_the_null_rates_read() -> None:
    tool = load_tool("window_test")
    assert tool.setting("fire") == ("fire", None) and tool.setting("arm@0.02") == ("arm", 0.02)
    assert tool.name_of("fire", 0.01) == "fire@0.01"
    with pytest.raises(ValueError, match="fire, arm"):
        tool.setting("fir")
    assert tool.alpha() == pytest.approx(50 * 0.041e-3)
    with tool.installed("arm", tool.alpha()):
        window, early = tool.new_alarms(lesson.ChangeDetector, 200)
        assert window <= early < 0.2
    assert tool.WindowDetector.gate == float("-inf")


def test_the_unarmed_line_counts_what_the_window_can_reach() -> None:
    tool, anatomy = load_tool("window_test"), load_tool("drop_anatomy")

    def fossil(at_flip: int, seen: int, alarm: int | None = None) -> dict[str, Any]:
        return {"seen_at_flip": at_flip, "seen": seen, "armed": at_flip >= 50, "alarm": alarm, "drop": 100}

    fossils = [fossil(10, 30), fossil(25, 60), fossil(45, 70), fossil(60, 200), fossil(20, 80, alarm=40)]
    line = tool._unarmed_line(anatomy, [{"policy": "lamar", "fossils": fossils}])
    assert line == ("  (c'): reported injected episodes at the flip, median 25; 1 of 3 never reach 50 in the run; "
                    "of the 2 others, 1 turned in the window's middle half, and a median 15 more come after it")


def test_the_anatomy_runs_the_engine_then_the_setting_under_the_spread_and_restores_both(
        monkeypatch: pytest.MonkeyPatch) -> None:
    tool, drop_anatomy = load_tool("window_test"), load_tool("drop_anatomy")
    default = features.SLICE_SPREAD
    seen: list[tuple[object, float]] = []

    def anatomy(seeds: range, **kwargs: Any) -> list[dict[str, Any]]:
        seen.append((lesson.ChangeDetector, features.SLICE_SPREAD))
        return []

    monkeypatch.setattr(drop_anatomy, "anatomy", anatomy)
    lines = tool.anatomy(2, ("arm", None), tuning=True, workers=1, spread=0.05)
    assert seen == [(change.ChangeDetector, 0.05), (tool.WindowDetector, 0.05)]
    assert lines[0].endswith("detector default, the slices' prior spread 0.05")
    assert features.SLICE_SPREAD == default and lesson.ChangeDetector is change.ChangeDetector
