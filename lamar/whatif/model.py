"""The outcome model of the doubly robust estimators: additive (a baseline per set of eligible
lessons plus one effect per lesson), fitted on the other folds of the log (cross-fitting)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from lamar.whatif.log import Log

FOLDS = 5
# Shrinkage, in episodes: an effect measured on few randomized episodes is pulled towards 0, a
# group's baseline seen in few episodes towards the log's mean. The model only lowers variance
# (the weighted residual corrects its errors), so these need no tuning for validity.
EFFECT_PRIOR = 10.0
BASELINE_PRIOR = 10.0


@dataclasses.dataclass
class Pattern:
    """Episodes that logged the same probabilities, injected set and held-out set: an
    alternative treats them alike. Per fold: how many, and the sums of reward, squared reward
    and success."""

    p: dict[str, float]
    injected: frozenset[str]
    held_out: frozenset[str]
    group: tuple[str, ...]  # the eligible lessons: the baseline's key
    n: list[int] = dataclasses.field(default_factory=lambda: [0] * FOLDS)
    reward: list[float] = dataclasses.field(default_factory=lambda: [0.0] * FOLDS)
    reward2: list[float] = dataclasses.field(default_factory=lambda: [0.0] * FOLDS)
    success: list[float] = dataclasses.field(default_factory=lambda: [0.0] * FOLDS)

    def sums(self, fold: int, outcome: str) -> tuple[float, float]:
        """(sum of y, sum of y squared) in `fold` for outcome "reward" or "success" (0/1)."""
        if outcome == "reward":
            return self.reward[fold], self.reward2[fold]
        return self.success[fold], self.success[fold]


@dataclasses.dataclass(frozen=True)
class AdditiveModel:
    """mu(S) = baseline[group] + sum of effect[i] over i in S; mu(pi) the same with probabilities."""

    effect: Mapping[str, float]
    baseline: Mapping[tuple[str, ...], float]
    mean: float

    def predict(self, group: tuple[str, ...], inclusion: Mapping[str, float]) -> float:
        effect = self.effect
        return self.baseline.get(group, self.mean) + sum(q * effect.get(i, 0.0) for i, q in inclusion.items())


def fit(patterns: Iterable[Pattern], fold: int, outcome: str) -> AdditiveModel:
    """The model for `fold`'s episodes, from every other fold's (so no episode predicts itself)."""
    patterns = list(patterns)
    with_sum: dict[str, list[float]] = {}  # lesson -> [n injected, sum, n not injected, sum], randomized only
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
    effect: dict[str, float] = {}
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
    """Episodes of `pattern` outside `fold`, and the sum of their outcomes."""
    values = pattern.reward if outcome == "reward" else pattern.success
    return sum(pattern.n) - pattern.n[fold], sum(values) - values[fold]


def patterns_of(log: Log) -> list[Pattern]:
    """Sum the outcomes of the episodes that logged each slate, per fold. Episode j falls in fold
    j mod FOLDS, so every fold spans the whole period."""
    patterns = [Pattern(dict(slate.p), slate.injected, slate.held_out, tuple(sorted(slate.p)))
                for slate in log.slates]
    for j, (index, reward, success) in enumerate(zip(log.slate, log.reward, log.success, strict=True)):
        pattern, fold = patterns[index], j % FOLDS
        pattern.n[fold] += 1
        pattern.reward[fold] += reward
        pattern.reward2[fold] += reward * reward
        if success:
            pattern.success[fold] += 1.0
    return patterns


def fold_lifts(log: Log) -> tuple[Mapping[str, float], ...]:
    """Per fold, each lesson's lift on reward measured on the other folds (the model's effects):
    a ranking that no episode's own outcome helped to make."""
    patterns = patterns_of(log)
    return tuple(fit(patterns, fold, "reward").effect for fold in range(FOLDS))

