"""tools/fading_draw.py: a fading mean beside the selection's arms that only ever lowers a lesson's draw."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from lamar.policy import features, lesson, selection
from tests.tools import load_tool


def _feed(arms: Any, rng: random.Random, injected_episodes: int, success_in: float, success_out: float) -> None:
    """Episodes injecting the lesson 80% of the time, until `injected_episodes` of them, rewards 1 or 0."""
    seen = 0
    while seen < injected_episodes:
        injected = rng.random() < 0.8
        seen += injected
        arms.record(1.0 if rng.random() < (success_in if injected else success_out) else 0.0, injected, 1.0)


def test_a_lesson_that_turns_young_draws_below_zero_while_its_undiscounted_estimate_is_still_above() -> None:
    tool = load_tool("fading_draw")
    with tool.installed(tool.setting("m10-z2")):
        lowered = above = 0
        for seed in range(40):
            # helps by 0.3 for 25 injected episodes, then hurts by 0.3 for 12: too young for the fall detector
            arms, rng = lesson.ArmStats(), random.Random(seed)
            _feed(arms, rng, 25, 0.8, 0.5)
            _feed(arms, rng, 12, 0.2, 0.5)
            fall = arms.fall(0.5, 2.0)
            above += arms.estimate > 0.0
            lowered += arms.estimate > 0.0 > arms.estimate - fall
        assert (above, lowered) == (31, 18)  # of 40: the draw of 18 of the 31 still drawn above zero is centred below
        steady, checks = 0, 0
        for seed in range(40):
            arms, rng = lesson.ArmStats(), random.Random(seed)
            for i in range(40):  # a lesson that keeps helping by 0.2 is seldom lowered, at z = 2
                _feed(arms, rng, 1, 0.7, 0.5)
                if i >= 5:
                    checks += 1
                    steady += arms.fall(0.5, 2.0) > 0.0
        assert steady / checks < 0.05


def test_the_draw_is_the_engines_until_the_fall_and_then_centred_lower_on_the_same_random_numbers() -> None:
    tool = load_tool("fading_draw")
    slices = features.Slices()
    with tool.installed(tool.setting("m10-z2-n0.5")):
        arms, rng = lesson.ArmStats(), random.Random(3)
        _feed(arms, rng, 25, 0.8, 0.5)
        assert arms.fall(0.5, 2.0) == 0.0
        engine = selection.ArmStats.filled(selection.ArmStats.values(arms))
        draw = slices.sample(arms, {}, 0.5, 0.65, 3, random.Random(7))
        assert draw == engine.sample(0.5, 0.65, 3, random.Random(7).gauss(0.0, 1.0))
        _feed(arms, rng, 15, 0.1, 0.5)
        fall = arms.fall(0.5, 2.0)
        assert fall > 0.0
        engine = selection.ArmStats.filled(selection.ArmStats.values(arms))
        z = random.Random(7).gauss(0.0, 1.0)
        noise = engine.sample(0.5, 0.65, 3, z) - engine.estimate
        assert slices.sample(arms, {}, 0.5, 0.65, 3, random.Random(7)) == pytest.approx(
            engine.estimate - fall + 0.5 * noise)
        assert math.isinf(slices.sample(lesson.ArmStats(), {}, 0.5, 0.65, 3, random.Random(7)))  # cold
        # once the detector would be armed, a young-only setting leaves the draw to the engine
        arms.tries = 50
        assert slices.sample(arms, {}, 0.5, 0.65, 3, random.Random(7)) == engine.sample(0.5, 0.65, 3, z)


def test_a_restart_starts_the_fading_mean_from_the_excursion_and_the_state_round_trips() -> None:
    tool = load_tool("fading_draw")
    with tool.installed(tool.setting("m10-z2")):
        arms = lesson.ArmStats()
        _feed(arms, random.Random(0), 30, 0.8, 0.5)
        arms.restart_both(8.0, 2.0, 12.0, 6.0)
        assert (arms.f_w, arms.f_s, arms.f_q) == (8.0, 2.0, 8.0) and arms.fall(0.5, 0.0) == 0.0
        copy = arms.copy()
        assert copy.to_dict() == arms.to_dict() and copy.to_dict()["f_s"] == 2.0
        assert tool.FadingArms.from_dict(arms.to_dict()).to_dict() == arms.to_dict()
        assert tool.FadingArms.from_dict(selection.ArmStats().to_dict()).to_dict() == tool.FadingArms().to_dict()


def test_settings_parse_and_the_engine_is_restored() -> None:
    tool = load_tool("fading_draw")
    assert tool.setting("m20-z1-always-n0.5") == tool.Setting(20.0, 1.0, "always", 0.5)
    assert tool.setting("z1").name == "m10-z1" and tool.Setting(noise=0.5).name == "m10-z2-n0.5"
    with pytest.raises(ValueError, match="m10-z2"):
        tool.setting("m1")
    sample = features.Slices.sample
    with tool.installed(tool.setting("m10-z2-always")):
        assert lesson.ArmStats is tool.FadingArms and features.Slices.sample is not sample
    assert lesson.ArmStats is selection.ArmStats and features.Slices.sample is sample


def test_left_out_a_lowered_lesson_stays_lowered_unless_its_fading_evidence_ages_with_idle() -> None:
    tool = load_tool("fading_draw")
    for text, lowered_after in (("m10-z2", True), ("m10-z2-idle", False)):
        with tool.installed(tool.setting(text)):
            arms, rng = lesson.ArmStats(), random.Random(3)
            _feed(arms, rng, 25, 0.8, 0.5)
            _feed(arms, rng, 15, 0.1, 0.5)
            assert arms.fall(0.5, 2.0) > 0.0
            for _ in range(30):  # left out: no injected reward comes to correct it
                arms.record(0.0, False, 1.0)
            assert (arms.fall(0.5, 2.0) > 0.0) is lowered_after, text
            for _ in range(10_000):  # evidence aged to nothing reads as no fall, not a division by zero
                arms.record(0.0, False, 1.0)
            assert (arms.fall(0.5, 2.0) > 0.0) is lowered_after, text
    assert tool.setting("m10-z1-always-idle") == tool.Setting(10.0, 1.0, "always", 1.0, True)


def test_spread_sets_the_slices_prior_spread_for_every_settings_line_but_the_defaults(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    tool = load_tool("fading_draw")
    default = features.SLICE_SPREAD
    seen: list[tuple[str, float, bool]] = []

    def against_peer(subject: str, label: str, width: int, settings: list[tuple[str, Any]], notes: list[str],
                     **kwargs: Any) -> list[str]:
        for name, patch in settings:
            with patch():
                seen.append((name, features.SLICE_SPREAD, lesson.ArmStats is tool.FadingArms))
        rows = [{"world": w, "policy": name, "fossil_drop": drop}
                for w, (base, low) in enumerate(((90, 70), (80, 75))) for name, drop in
                (("default", base), ("engine tau 0.05", low), ("m10-z1-idle tau 0.05", base))]
        return [*notes, *kwargs["after"](rows)]

    monkeypatch.setattr(tool.sweep_frame, "against_peer", against_peer)
    tool.main(["3", "--tuning-seeds", "--spread", "0.05", "--settings", "engine,m10-z1-idle"])
    assert seen == [("default", default, False), ("engine tau 0.05", 0.05, False),
                    ("m10-z1-idle tau 0.05", 0.05, True)]
    assert features.SLICE_SPREAD == default and lesson.ArmStats is selection.ArmStats
    out = capsys.readouterr().out
    assert "tau T: the slices' prior spread set to T (the engine's 0.25)" in out
    assert "dropped minus default (task episodes, paired by world): engine tau 0.05 -12 ±" in out
    assert "m10-z1-idle tau 0.05 +0 ±0" in out or "m10-z1-idle tau 0.05 0 ±0" in out
    with pytest.raises(SystemExit):
        tool.main(["3", "--spread", "-1"])
