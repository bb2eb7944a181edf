"""A reward written as text reads the same at every entry point: the engine, to_reward, the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import InvalidReward, Lamar, Signal
from lamar.signals import to_reward


@pytest.mark.parametrize(("text", "reward"), [("0.5", 0.5), (" -0.5 ", -0.5), ("1", 1.0), ("-1e0", -1.0),
                                              (".25", 0.25), ("+0", 0.0)])
def test_a_reward_written_as_a_number_is_that_reward(tmp_path: Path, text: str, reward: float) -> None:
    """`lamar report EP -0.5` took it and `lam.report(ep, "-0.5")` refused it as an unknown signal."""
    assert to_reward(text) == (reward, None)
    lam = Lamar(str(tmp_path / "lessons.db"), seed=0)
    rec = lam.recall({})
    lam.report(rec.episode_id, text)
    lam.close()
    logged = Lamar(str(tmp_path / "lessons.db")).episode(rec.episode_id)
    assert logged.reward == reward and logged.signal is None


@pytest.mark.parametrize(("text", "said"), [
    ("1.5", "reward '1.5' is outside [-1, 1]"), ("-2", "reward '-2' is outside [-1, 1]"),
    ("nan", "reward 'nan' is outside [-1, 1]"), ("inf", "reward 'inf' is outside [-1, 1]"),
    ("1e400", "reward '1e400' is outside [-1, 1]"),
    # float() reads these as 10 and 1: a reward is read as typed, in ASCII digits
    ("1_0", "unknown signal '1_0': use one of shipped, accepted, reasked, corrected, reverted or a number in [-1, 1]"),
    ("\u0661", "unknown signal '\u0661'"), ("0.5!", "unknown signal '0.5!'"),
    ("revert", "unknown signal 'revert' (did you mean 'reverted'?)"),
])
def test_text_that_is_neither_a_signal_nor_a_reward_is_refused_and_nothing_is_stored(text: str, said: str) -> None:
    lam = Lamar(":memory:", seed=0)
    rec = lam.recall({})
    with pytest.raises(InvalidReward) as info:
        lam.report(rec.episode_id, text)
    assert said in str(info.value)
    assert lam.stats()["reports"] == 0


def test_a_long_unknown_signal_is_quoted_by_its_ends() -> None:
    with pytest.raises(InvalidReward) as info:
        to_reward("x" * 100_000)
    assert "(100000 characters)" in str(info.value) and len(str(info.value)) < 400


def test_a_signal_name_still_wins_over_a_number() -> None:
    assert to_reward(" Re-asked ") == (Signal.REASKED.reward, Signal.REASKED)
    assert to_reward(Signal.SHIPPED) == (1.0, Signal.SHIPPED)
