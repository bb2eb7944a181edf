"""The estimators against exact expectations: a log in which every slate appears exactly as often
as the logging coins make it likely is the estimator's expectation, so an unbiased estimator must
return the alternative's true value on it, to rounding."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from typing import Any

import pytest

from lamar.audit.summary import clopper_pearson
from lamar.whatif import report
from lamar.whatif.alternatives import Holdout, Logged, NoMemory, Without
from lamar.whatif.estimators import (
    PLAN_SHARE,
    Z95,
    Accumulator,
    Estimate,
    Sums,
    narrowest,
    pseudo_inverse,
    sequence_z,
    slate_weight,
)
from lamar.whatif.log import LoggedEpisode
from lamar.whatif.model import FOLDS
from lamar.whatif.report import evaluate
from lamar.whatif.slate import Slate

# Coins whose slate probabilities are multiples of 1/32, so an exact log has whole episodes.
P = {"a": 0.75, "b": 0.5, "c": 0.75, "d": 0.0}
COINS = ("a", "b", "c")


def additive(slate: frozenset[str]) -> float:
    return 0.1 + 0.3 * ("a" in slate) - 0.2 * ("b" in slate) + 0.15 * ("c" in slate)


def interacting(slate: frozenset[str]) -> float:
    # a and c together undo each other: not a sum of per-lesson effects.
    return additive(slate) - 0.4 * ("a" in slate and "c" in slate)


def slates() -> list[tuple[frozenset[str], float]]:
    out = []
    for draws in itertools.product((False, True), repeat=len(COINS)):
        chance = 1.0
        for lesson, drawn in zip(COINS, draws, strict=True):
            chance *= P[lesson] if drawn else 1.0 - P[lesson]
        out.append((frozenset(i for i, d in zip(COINS, draws, strict=True) if d), chance))
    return out


def exact_log(reward: Callable[[frozenset[str]], float]) -> list[LoggedEpisode]:
    """Each slate 32 * P(slate) times, each copy FOLDS times in a row: every fold holds the
    exact distribution, so even the cross-fitted estimators see their expectation."""
    episodes = []
    for slate, chance in slates():
        for copy in range(round(32 * chance) * FOLDS):
            r = reward(slate)
            episodes.append(LoggedEpisode(f"ep{len(episodes)}", float(copy), Slate(dict(P), slate), r, r > 0.0))
    return episodes


def true_value(reward: Callable[[frozenset[str]], float], inclusion: dict[str, float]) -> float:
    total = 0.0
    for draws in itertools.product((False, True), repeat=len(COINS)):
        chance = 1.0
        for lesson, drawn in zip(COINS, draws, strict=True):
            q = inclusion[lesson]
            chance *= q if drawn else 1.0 - q
        total += chance * reward(frozenset(i for i, d in zip(COINS, draws, strict=True) if d))
    return total


ALTERNATIVES = [
    (NoMemory(), {"a": 0.0, "b": 0.0, "c": 0.0}),
    (Holdout(0.3), {"a": 0.7, "b": 0.7, "c": 0.7}),  # every wanted lesson's coin, b's 0.5 too
    (Without("a"), {"a": 0.0, "b": 0.5, "c": 0.75}),
    (Logged(), {"a": 0.75, "b": 0.5, "c": 0.75}),
]


@pytest.mark.parametrize(("alternative", "inclusion"), ALTERNATIVES, ids=lambda x: getattr(x, "name", ""))
def test_slate_estimators_are_unbiased_whatever_the_reward(alternative: object, inclusion: dict[str, float]) -> None:
    episodes = exact_log(interacting)
    (report,) = evaluate(episodes, [alternative])  # type: ignore[list-item]
    truth = true_value(interacting, inclusion)
    for name in ("ips", "snips", "dr"):
        assert report.reward[name].value == pytest.approx(truth, abs=1e-12), name
    assert report.supported == len(episodes)


@pytest.mark.parametrize(("alternative", "inclusion"), ALTERNATIVES, ids=lambda x: getattr(x, "name", ""))
def test_pseudo_inverse_is_unbiased_when_lessons_add_up(alternative: object, inclusion: dict[str, float]) -> None:
    (report,) = evaluate(exact_log(additive), [alternative])  # type: ignore[list-item]
    truth = true_value(additive, inclusion)
    assert report.reward["pi"].value == pytest.approx(truth, abs=1e-12)
    assert report.reward["pi-dr"].value == pytest.approx(truth, abs=1e-12)


def test_pseudo_inverse_is_biased_when_lessons_interact() -> None:
    # The assumption it adds is real: no memory, with a and c undoing each other, is misjudged.
    (report,) = evaluate(exact_log(interacting), [NoMemory()])
    truth = true_value(interacting, {"a": 0.0, "b": 0.0, "c": 0.0})
    assert abs(report.reward["pi"].value - truth) > 0.1
    assert report.reward["ips"].value == pytest.approx(truth, abs=1e-12)


def test_the_weight_is_the_ratio_of_the_two_policies_slate_probabilities() -> None:
    p = {"a": 0.75, "b": 0.5, "c": 0.25}
    changes = {"a": 0.2, "c": 0.9}
    # injected {a, b}: a's ratio 0.2/0.75, b unchanged, c left out: (1 - 0.9)/(1 - 0.25).
    assert slate_weight(p, frozenset({"a", "b"}), changes) == pytest.approx((0.2 / 0.75) * (0.1 / 0.75))
    assert pseudo_inverse(p, frozenset({"a", "b"}), changes) == pytest.approx(
        1 + (0.2 - 0.75) * (1 - 0.75) / (0.75 * 0.25) + (0.9 - 0.25) * (0 - 0.25) / (0.25 * 0.75))


@pytest.mark.parametrize(("p", "injected", "changes"), [
    ({"a": 0.0}, frozenset(), {"a": 0.5}),       # would inject what the log never tried
    ({"a": 1.0}, frozenset({"a"}), {"a": 0.0}),  # would drop what the log always injected
    ({"a": 1.0}, frozenset({"a"}), {"a": 0.9}),
])
def test_changing_a_certain_inclusion_is_outside_the_support(p: dict[str, float], injected: frozenset[str],
                                                            changes: dict[str, float]) -> None:
    assert slate_weight(p, injected, changes) is None


def test_an_unchanged_certain_inclusion_stays_inside() -> None:
    assert slate_weight({"a": 1.0, "b": 0.0, "c": 0.8}, frozenset({"a", "c"}), {"a": 1.0, "b": 0.0}) == 1.0


def test_episodes_outside_the_support_are_left_out_and_counted() -> None:
    inside = [LoggedEpisode(f"in{j}", 0.0, Slate({"a": 0.5}, frozenset({"a"} if j % 2 else ())),
                            1.0 if j % 2 else 0.0, bool(j % 2)) for j in range(40)]
    outside = [LoggedEpisode(f"out{j}", 0.0, Slate({"a": 1.0}, frozenset({"a"})), 1.0, True) for j in range(10)]
    (report,) = evaluate(inside + outside, [NoMemory()])
    assert (report.episodes, report.supported) == (50, 40)
    assert report.outside == pytest.approx(0.2)
    # The 40 supported: no memory gives 0 (a held out gave 0), and the logged value is theirs only.
    assert report.reward["ips"].value == pytest.approx(0.0)
    assert report.reward["logged"].value == pytest.approx(0.5)


def test_the_interval_is_the_mean_plus_or_minus_the_sequences_standard_errors() -> None:
    sums = Sums()
    values = [0.0, 1.0, 1.0, 0.0, 1.0]
    for y in values:
        sums.add(1, y, y * y, 0.0, 1.0)
    mean = sum(values) / 5
    se = math.sqrt(sum((y - mean) ** 2 for y in values) / 4) / math.sqrt(5)
    z = sequence_z(5, 20)
    assert sums.estimate(20) == Estimate(mean, mean - z * se, mean + z * se, 5, se)


def test_each_estimate_quotes_its_interval_for_one_reading_and_carries_its_sequence() -> None:
    # 200 episodes, 150 successes, every weight 1: the 95% interval is 1.96 standard errors, the
    # sequence (planned for a quarter of the 400 episodes asked about) is wider and holds it.
    sums = Accumulator()
    sums.add(150, 150.0, 150.0, 1.0, 1.0)
    sums.add(50, 0.0, 0.0, 1.0, 1.0)
    found = sums.estimates(0.0, 1.0, 400)
    for name in ("logged", "ips", "snips", "pi"):
        e = found[name]
        se = e.se  # the sample spread's (SNIPS: the delta method's, without the n - 1)
        assert e.value == pytest.approx(0.75) and se == pytest.approx(math.sqrt(0.75 * 0.25 / 200), rel=0.01), name
        assert (e.lower, e.upper) == (pytest.approx(0.75 - Z95 * se), pytest.approx(0.75 + Z95 * se)), name
        z = sequence_z(200, PLAN_SHARE * 400)
        assert (e.anytime_lower, e.anytime_upper) == (pytest.approx(0.75 - z * se), pytest.approx(0.75 + z * se)), name
        assert e.anytime() == Estimate(e.value, e.anytime_lower, e.anytime_upper, e.n, e.se,
                                       anytime_lower=e.anytime_lower, anytime_upper=e.anytime_upper)
        assert e.anytime_lower < e.lower < e.upper < e.anytime_upper, name


def test_the_sequence_is_the_normal_mixture_boundary_and_tightest_where_planned() -> None:
    # Waudby-Smith et al. (2024): sqrt(2 (t rho^2 + 1) / (t^2 rho^2) log(sqrt(t rho^2 + 1) / alpha))
    # for unit spread, with rho^2 = (-2 log alpha + log(1 - 2 log alpha)) / planned.
    rho2 = (-2 * math.log(0.05) + math.log(1 - 2 * math.log(0.05))) / 400
    margin = math.sqrt(2 * (100 * rho2 + 1) / (100 ** 2 * rho2) * math.log(math.sqrt(100 * rho2 + 1) / 0.05))
    assert sequence_z(100, 400) == pytest.approx(margin * math.sqrt(100))
    widths = {n: sequence_z(n, 400) for n in (50, 100, 200, 400, 800, 1600, 3200)}
    assert min(widths, key=widths.__getitem__) == 400
    assert all(Z95 < w < 3.7 for w in widths.values())  # wider than one n's interval, not much


def _running_means(rng: random.Random, stop: Callable[[int, float, float], bool],
                   most: int) -> list[tuple[int, float, float]]:
    """(n, mean, standard error) of fair coin flips (mean 0.5), after every flip until `stop`."""
    total = squares = 0.0
    out = []
    for n in range(1, most + 1):
        y = float(rng.random() < 0.5)
        total, squares = total + y, squares + y
        mean = total / n
        se = math.sqrt(max(squares - n * mean * mean, 0.0) / max(n - 1, 1) / n)
        out.append((n, mean, se))
        if n >= 10 and stop(n, mean, se):
            break
    return out


def test_the_sequence_holds_where_sampling_stops_on_its_own_outcomes_and_one_n_interval_does_not() -> None:
    # A log that stops flipping a coin once its mean looks high (as a coin kept only while a
    # verdict seems within reach can): the interval for one n under-covers at the stop, the
    # sequence holds there, and holds at every n of an unstopped run 95% of the time.
    rng = random.Random(7)
    runs, fixed, sequence, everywhere = 2000, 0, 0, 0
    for _ in range(runs):
        path = _running_means(rng, lambda n, mean, se: mean - 0.5 > se, 400)
        n, mean, se = path[-1]
        fixed += abs(mean - 0.5) <= Z95 * se
        sequence += abs(mean - 0.5) <= sequence_z(n, 100) * se
    for _ in range(400):
        path = _running_means(rng, lambda n, mean, se: False, 400)
        everywhere += all(abs(mean - 0.5) <= sequence_z(n, 100) * se for n, mean, se in path[9:] if se > 0.0)
    print(f"at the stop: one n's interval covers {fixed}/{runs}, the sequence {sequence}/{runs}; "
          f"the sequence at every n of 400 unstopped runs: {everywhere}/400")
    assert fixed / runs < 0.93
    assert sequence / runs >= 0.95
    assert everywhere / 400 >= 0.93


def test_n_equal_outcomes_give_the_clopper_pearson_interval_not_a_point() -> None:
    # Three episodes that all failed: the sample spread is 0, but a success rate up to
    # 1 - 0.025^(1/3) = 0.708 gives three failures in a row more than 2.5% of the time.
    sums = Sums()
    sums.add(3, 0.0, 0.0, 0.0, 1.0)
    assert sums.estimate(3) == Estimate(0.0, 0.0, 0.0, 3, 0.0)
    honest = sums.estimate(3).honest(0.0, 1.0, 3)
    assert (honest.value, honest.lower) == (0.0, 0.0)
    assert honest.upper == pytest.approx(1.0 - 0.025 ** (1 / 3))
    assert (1.0 - honest.upper) ** 3 == pytest.approx(0.025)
    # Rewards in [-1, 1] have twice the span; all at the top end, the interval hangs below it.
    top = Estimate(1.0, 1.0, 1.0, 3).honest(-1.0, 1.0, 3)
    assert (top.lower, top.upper) == (pytest.approx(1.0 - 2 * narrowest(3, 1.0)), 1.0)


def test_a_wide_enough_interval_is_only_cut_to_the_range() -> None:
    wide = Estimate(0.5, 0.2, 0.8, 400)
    assert wide.honest(0.0, 1.0, 400) == wide
    assert Estimate(0.9, 0.7, 1.1, 400).honest(0.0, 1.0, 400) == Estimate(0.9, 0.7, 1.0, 400)
    # Narrower than the floor: widened about the value, and it still holds the old interval.
    narrow = Estimate(0.5, 0.49, 0.51, 10).honest(0.0, 1.0, 10)
    assert narrow.upper - narrow.lower == pytest.approx(narrowest(10, 1.0))
    assert narrow.lower < 0.49 and narrow.upper > 0.51
    assert narrow.upper - 0.5 == pytest.approx(0.5 - narrow.lower)


def test_no_effective_episode_gives_the_whole_range() -> None:
    assert Estimate(0.3, 0.3, 0.3, 50).honest(-1.0, 1.0, 0.0) == Estimate(0.3, -1.0, 1.0, 50)
    assert math.isnan(Estimate(math.nan, math.nan, math.nan, 0).honest(0.0, 1.0, 0.0).value)


def test_estimates_on_a_few_episodes_with_equal_outcomes_have_honest_intervals() -> None:
    # A coin on "a" at 0.5 in 40 episodes, every outcome the same: no memory rests on the
    # episodes where a was held out, each at weight 2.
    episodes = [LoggedEpisode(f"ep{j}", float(j), Slate({"a": 0.5}, frozenset({"a"} if j % 8 else ())), 1.0, True)
                for j in range(40)]
    (report,) = evaluate(episodes, [NoMemory()])
    held_out = sum(1 for j in range(40) if j % 8 == 0)
    assert report.effective == pytest.approx(held_out)
    for name, estimate in report.success.items():
        floor = narrowest(40 if name == "logged" else held_out, 1.0)
        assert estimate.upper - estimate.lower >= floor - 1e-12, name
    logged, snips = report.success["logged"], report.success["snips"]
    assert (logged.lower, logged.upper) == (pytest.approx(1.0 - narrowest(40, 1.0)), 1.0)
    assert (snips.value, snips.upper) == (1.0, 1.0) and snips.lower == pytest.approx(1.0 - narrowest(5, 1.0))


def _rarely_held_out_log(rng: random.Random, n: int = 2000, p: float = 0.95) -> list[LoggedEpisode]:
    """Half the episodes want nothing; the other half want a and b, each kept with probability p,
    so both are held out together in about n (1 - p)^2 / 2 = 2.5 of them. The two lessons
    interact (together they add 0.3, not 0.5), which the additive model cannot see."""
    episodes = []
    for j in range(n):
        inclusion = 0.0 if j % 2 == 0 else p
        slate = frozenset(i for i in "ab" if rng.random() < inclusion)
        rate = 0.3 + 0.25 * len(slate) - (0.2 if len(slate) == 2 else 0.0)
        success = rng.random() < rate
        episodes.append(LoggedEpisode(f"ep{j}", float(j), Slate({"a": inclusion, "b": inclusion}, slate),
                                      1.0 if success else -1.0, success))
    return episodes


def test_a_slate_the_log_rarely_saw_is_not_estimated_as_if_it_were_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    # No memory (true success 0.3) rests on the few episodes where both coins fell out; where
    # they seldom did, the doubly robust estimate is the model's extrapolation and its sample
    # spread is small. The spread the coins predict (E[w^2] times the outcome's noise) is not.
    # Both spreads are judged on the same 200 logs, drawn once: drawing them is most of the cost.
    rng = random.Random(11)
    logs = [_rarely_held_out_log(rng) for _ in range(200)]

    def coverage() -> int:
        hits = 0
        for log in logs:
            (report,) = evaluate(log, [NoMemory()])
            hits += report.success["dr"].covers(0.3)
        return hits

    predicted = coverage()
    monkeypatch.setattr("lamar.whatif.report._noise", lambda patterns, outcome: 0.0)  # the sample spread alone
    sampled = coverage()
    print(f"no memory, 95% sequence: covers {predicted}/200 with the predicted spread, {sampled}/200 with the sample's")
    assert predicted >= 190
    assert sampled < 190


def _extreme_coins_log(rng: random.Random, coins: dict[str, float], n: int = 1000) -> list[LoggedEpisode]:
    """Every episode wants a and b, each kept with its coin; a adds 0.4 to the success rate and b
    takes 0.2 from it, so holding each out half the time is worth 0.3 + 0.2 - 0.1 = 0.4."""
    episodes = []
    for j in range(n):
        slate = frozenset(i for i in "ab" if rng.random() < coins[i])
        success = rng.random() < 0.3 + 0.4 * ("a" in slate) - 0.2 * ("b" in slate)
        episodes.append(LoggedEpisode(f"ep{j}", float(j), Slate(dict(coins), slate), 1.0 if success else -1.0, success))
    return episodes


def _sample_spread_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The weights' second moments over the coins read as 0: the intervals rest on the sample spread alone."""
    weights = report._weights

    def without_moments(*args: Any) -> Any:
        found = weights(*args)
        return None if found is None else (found[0], found[1], 0.0, 0.0, found[4])

    monkeypatch.setattr(report, "_weights", without_moments)


@pytest.mark.parametrize("coins", [{"a": 0.999999, "b": 0.999999}, {"a": 0.999, "b": 0.01}], ids=["never", "seldom"])
def test_ips_and_snips_intervals_cover_where_the_coins_were_extreme(coins: dict[str, float],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # holdout:0.5 weighs the slates the coins seldom or never drew by up to 1 / (1 - 0.999999); a
    # log that missed them has a small sample spread, the spread the coins predict is not.
    rng = random.Random(23)
    logs = [_extreme_coins_log(rng, coins) for _ in range(200)]

    def coverage() -> dict[str, int]:
        hits = dict.fromkeys(("ips", "snips"), 0)
        for log in logs:
            (report,) = evaluate(log, [Holdout(0.5)])
            for name in hits:
                hits[name] += report.success[name].covers(0.4)
        return hits

    predicted = coverage()
    _sample_spread_alone(monkeypatch)
    sampled = coverage()
    for name, hits in predicted.items():
        low, high = clopper_pearson(hits, len(logs))
        print(f"{name}, 95% interval: covers {hits}/200 [{low:.3f}, {high:.3f}] with the predicted spread, "
              f"{sampled[name]}/200 with the sample's")
        assert hits >= 180 and high >= 0.95, name
        assert sampled[name] < 180, name


def test_the_pseudo_inverse_interval_covers_where_the_coins_were_extreme(monkeypatch: pytest.MonkeyPatch) -> None:
    # The pseudo-inverse term g y weighs a slate the log seldom drew as IPS's does: its spread is
    # floored by the coins' E[g^2] as IPS's is by E[w^2].
    rng = random.Random(23)
    logs = [_extreme_coins_log(rng, {"a": 0.999999, "b": 0.999999}) for _ in range(200)]

    def coverage() -> int:
        return sum(evaluate(log, [Holdout(0.5)])[0].success["pi"].covers(0.4) for log in logs)

    predicted = coverage()
    _sample_spread_alone(monkeypatch)
    sampled = coverage()
    low, high = clopper_pearson(predicted, len(logs))
    print(f"pi, 95% interval: covers {predicted}/200 [{low:.3f}, {high:.3f}] with the predicted spread, "
          f"{sampled}/200 with the sample's")
    assert predicted >= 180 and high >= 0.95
    assert sampled < 180


def test_a_policy_needing_a_slate_the_log_never_drew_is_thin() -> None:
    # Holding both lessons out half the time needs slates the coins at 0.999999 all but never drew:
    # every logged weight is about 1, so Kish's count of them is the whole log; the coins predict
    # next to no effective episode, and the row is flagged thin.
    rng = random.Random(23)
    (never,) = evaluate(_extreme_coins_log(rng, {"a": 0.999999, "b": 0.999999}), [Holdout(0.5)])
    assert never.effective == pytest.approx(1000, rel=1e-3) and never.predicted < 1.0
    assert never.thin and never.to_dict()["thin"] is True and never.to_dict()["predicted"] < 1.0
    assert never.says_nothing("ips")  # and why the exact intervals span the range is still said
    (common,) = evaluate(_extreme_coins_log(rng, {"a": 0.9, "b": 0.5}), [Holdout(0.5)])
    assert not common.thin and common.predicted > 300
