"""The gym's coverage check: the world's truth for an alternative, and the estimators' intervals
against it on a small fixed-seed run (the full run is `python -m lamar.whatif.check`)."""

from __future__ import annotations

import pytest

from lamar.gym.world import reward_gap
from lamar.signals import Signal
from lamar.whatif.alternatives import Holdout, Logged, NoMemory
from lamar.whatif.check import coverage_rows, main, run_world, summarize, truth

FAIL = (Signal.REVERTED.reward + Signal.CORRECTED.reward + Signal.REASKED.reward) / 3.0


@pytest.fixture(scope="module")
def run():  # type: ignore[no-untyped-def]
    return run_world(seed=7, episodes=1500, k=2)


def test_no_memory_is_worth_the_worlds_base_rate(run) -> None:  # type: ignore[no-untyped-def]
    true = truth(run, NoMemory())
    assert true is not None
    assert true["success"] == pytest.approx(run.world.base)
    assert true["reward"] == pytest.approx(FAIL + reward_gap() * run.world.base)


def test_the_logged_policy_is_worth_its_slates_success_probabilities(run) -> None:  # type: ignore[no-untyped-def]
    index, world = run.policy.index, run.world
    expected = []
    for episode in run.episodes:
        t = run.times[episode.id]
        # The logged coins, weighed exactly: each randomized lesson in or out with its p.
        certain = [index[i] for i, p in episode.slate.p.items() if p >= 1.0]
        coins = [(index[i], p) for i, p in episode.slate.p.items() if 0.0 < p < 1.0]
        total = 0.0
        for mask in range(1 << len(coins)):
            chance, injected = 1.0, list(certain)
            for bit, (lesson, p) in enumerate(coins):
                chance *= p if mask >> bit & 1 else 1.0 - p
                if mask >> bit & 1:
                    injected.append(lesson)
            total += chance * world.success_probability(t, injected)
        expected.append(total)
    true = truth(run, Logged())
    assert true is not None and true["success"] == pytest.approx(sum(expected) / len(expected))
    # Without the coins every wanted lesson is in: each episode's success at its wanted set.
    wanted = [world.success_probability(run.times[e.id], [index[i] for i, p in e.slate.p.items() if p > 0.0])
              for e in run.episodes]
    assert truth(run, Holdout(0.0))["success"] == pytest.approx(sum(wanted) / len(wanted))  # type: ignore[index]


def test_intervals_cover_the_truth_on_a_small_fixed_seed_run() -> None:
    rows = coverage_rows([0, 1, 2], episodes=2500, k=2)
    by_estimator = {row.key: row for row in summarize(rows, ("interval", "estimator"))}
    assert set(by_estimator) == {(interval, name) for interval in ("95%", "anytime")
                                 for name in ("ips", "snips", "dr", "pi", "pi-dr")}
    assert all(row.n == 3 * 2 * 8 for row in by_estimator.values())  # seeds x outcomes x alternatives
    # An alternative far from the logged coins (no memory, or only proven lessons, when the engine
    # holds out a few percent) leaves few effective episodes: the report flags it thin, and its
    # interval is wide and may miss. The bars below are for what the report does not flag.
    solid = [row for row in rows if row["thin"] == "not thin"]
    assert len(solid) >= len(rows) // 2
    for row in summarize(solid, ("interval", "estimator")):
        # Small runs, so the bar is below 95%; a wrong weight misses most intervals. The full
        # check (python -m lamar.whatif.check) measures the rate.
        assert row.covered >= 0.8 * row.n, row
        assert abs(row.bias) < 0.05, row
    thin = summarize([row for row in rows if row["thin"] == "thin"], ("interval", "estimator"))
    assert all(row.width > 0.5 for row in thin), thin  # what is flagged is also visibly uncertain


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--seeds", "-1"], ["--episodes", "0"], ["--k", "0"],
                                  ["--first-seed", "-3"]])
def test_arguments_that_check_nothing_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and "--seeds is at least 1" in capsys.readouterr().err
