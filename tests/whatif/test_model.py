"""The outcome models and the weights, computed in one pass for every fold and alternative, are
bit for bit those of the pattern-by-pattern formulas they stand for, and the estimate pauses the
cycle collector (lamar/whatif/model.py, lamar/whatif/report.py)."""

from __future__ import annotations

import gc
import random

import pytest

from lamar.whatif.estimators import pseudo_inverse, second_moments, slate_weight
from lamar.whatif.log import Log, LoggedEpisode
from lamar.whatif.model import (
    BASELINE_PRIOR,
    EFFECT_PRIOR,
    FOLDS,
    OUTCOMES,
    AdditiveModel,
    Pattern,
    fit_folds,
    fitted,
    fold_lifts,
    patterns_of,
)
from lamar.whatif.report import _weights, evaluate
from lamar.whatif.slate import Slate


def _fit_one(patterns: list[Pattern], fold: int, outcome: str) -> AdditiveModel:
    """One fold's model, a pattern at a time, each sum added with `+=` in the log's order."""
    with_sum: dict[str, list[float]] = {}
    for pattern in patterns:
        n, y = _training(pattern, fold, outcome)
        if not n:
            continue
        for lesson, p in pattern.p.items():
            if 0.0 < p < 1.0:
                row = with_sum.setdefault(lesson, [0.0, 0.0, 0.0, 0.0])
                side = 0 if lesson in pattern.injected else 2
                row[side] += n
                row[side + 1] += y
    effect = {}
    for lesson, (n1, y1, n0, y0) in with_sum.items():
        if n1 and n0:
            balance = n1 * n0 / (n1 + n0)
            effect[lesson] = (y1 / n1 - y0 / n0) * balance / (balance + EFFECT_PRIOR)
    residual: dict[tuple[str, ...], list[float]] = {}
    total_n = total = 0.0
    for pattern in patterns:
        n, y = _training(pattern, fold, outcome)
        if not n:
            continue
        rest = y - n * sum(effect.get(i, 0.0) for i in pattern.injected)
        row = residual.setdefault(pattern.group, [0.0, 0.0])
        row[0] += n
        row[1] += rest
        total_n += n
        total += rest
    mean = total / total_n if total_n else 0.0
    baseline = {group: (rest + BASELINE_PRIOR * mean) / (n + BASELINE_PRIOR) for group, (n, rest) in residual.items()}
    return AdditiveModel(effect, baseline, mean)


def _training(pattern: Pattern, fold: int, outcome: str) -> tuple[int, float]:
    values = pattern.reward if outcome == "reward" else pattern.success
    return sum(pattern.n) - pattern.n[fold], sum(values) - values[fold]


def _bits(model: AdditiveModel) -> tuple[object, ...]:
    """The model's numbers as their exact reprs, so that 0.1 + 0.2 and 0.3 differ."""
    return (sorted((i, repr(v)) for i, v in model.effect.items()),
            sorted((g, repr(v)) for g, v in model.baseline.items()), repr(model.mean))


def _random_log(rng: random.Random) -> Log:
    """Rewards that do not add up exactly in floating point (0.6, any number), coins of every kind."""
    lessons = [f"l{i}" for i in range(rng.randrange(1, 12))]
    episodes = []
    for j in range(rng.randrange(1, 300)):
        eligible = rng.sample(lessons, rng.randrange(0, len(lessons) + 1))
        p = {i: rng.choice((0.0, 1.0, 0.5, 0.95, rng.random())) for i in eligible}
        injected = frozenset(i for i, v in p.items() if rng.random() < v)
        reward = rng.choice((1.0, 0.6, -1.0, rng.uniform(-1.0, 1.0)))
        episodes.append(LoggedEpisode(f"e{j}", float(j), Slate(p, injected), reward, rng.random() < 0.5))
    return Log.of(episodes)


@pytest.mark.parametrize("seed", range(40))
def test_every_folds_model_is_the_one_fitted_a_pattern_at_a_time(seed: int) -> None:
    log = _random_log(random.Random(seed))
    patterns = patterns_of(log)
    models = fit_folds(patterns, OUTCOMES)
    for outcome in OUTCOMES:
        assert [_bits(m) for m in models[outcome]] == [_bits(_fit_one(patterns, f, outcome)) for f in range(FOLDS)]
    assert fitted(log) is fitted(log)  # fitted once per log
    assert [dict(lifts) for lifts in fold_lifts(log)] == [m.effect for m in models["reward"]]


@pytest.mark.parametrize("seed", range(20))
def test_the_weights_of_one_pass_are_those_of_each_formula(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        lessons = [f"l{i}" for i in range(rng.randrange(0, 8))]
        p = {i: rng.choice((0.0, 1.0, 0.5, rng.random())) for i in lessons}
        injected = frozenset(i for i, v in p.items() if rng.random() < v)
        changes = {i: rng.choice((0.0, 1.0, p[i], rng.random())) for i in lessons if rng.random() < 0.6}
        found = _weights(p, injected, changes)
        weight = slate_weight(p, injected, changes)
        if weight is None:
            assert found is None
            continue
        assert found is not None
        moved = [(i, q - p[i]) for i, q in changes.items() if q != p[i]]
        assert repr(found) == repr((weight, pseudo_inverse(p, injected, changes), *second_moments(p, changes), moved))


def test_the_estimate_runs_with_the_cycle_collector_paused_and_leaves_it_as_it_was() -> None:
    seen: list[bool] = []

    class Probe:
        name, description = "probe", "asks whether the cycle collector runs"

        def changes(self, episode: Slate, fold: int = 0) -> dict[str, float]:
            seen.append(gc.isenabled())
            return {}

    log = _random_log(random.Random(1))
    assert gc.isenabled()
    evaluate(log, [Probe()])
    assert seen and not any(seen) and gc.isenabled()
