"""The outcome model of the doubly robust estimators: additive (a baseline per set of eligible
lessons plus one effect per lesson), fitted on the other folds of the log (cross-fitting)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import NamedTuple, cast

from lamar.store.decode import no_cycle_collection
from lamar.whatif.log import Log

FOLDS = 5
OUTCOMES = ("reward", "success")
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
        effects = map(self.effect.get, inclusion, itertools.repeat(0.0))
        terms: Iterator[float] = map(operator.mul, inclusion.values(), effects)
        return self.baseline.get(group, self.mean) + sum(terms)  # q * effect[i], in the same order


def fit(patterns: Iterable[Pattern], fold: int, outcome: str) -> AdditiveModel:
    """The model for `fold`'s episodes, from every other fold's (so no episode predicts itself)."""
    return fit_folds(patterns, (outcome,))[outcome][fold]


def fit_folds(patterns: Iterable[Pattern], outcomes: Iterable[str]) -> dict[str, list[AdditiveModel]]:
    """Every fold's model (`fit`) for each outcome, each lesson's patterns found once for all of
    them. Each sum adds the same numbers in the same order as a pattern-by-pattern pass would (a
    pattern with no training episode in a fold adds exactly 0), so the models do not depend on it."""
    patterns = list(patterns)
    sides: dict[str, tuple[list[int], list[int]]] = {}  # lesson -> patterns with its coin: injected, not
    groups: dict[tuple[str, ...], list[int]] = {}
    for k, pattern in enumerate(patterns):
        groups.setdefault(pattern.group, []).append(k)
        for lesson, p in pattern.p.items():
            if 0.0 < p < 1.0:
                pair = sides.get(lesson) or sides.setdefault(lesson, ([], []))
                pair[0 if lesson in pattern.injected else 1].append(k)
    all_n = [sum(pattern.n) for pattern in patterns]
    columns = {outcome: [pattern.reward if outcome == "reward" else pattern.success for pattern in patterns]
               for outcome in outcomes}
    all_y = {outcome: [sum(values) for values in column] for outcome, column in columns.items()}
    models: dict[str, list[AdditiveModel]] = {outcome: [] for outcome in columns}
    for fold in range(FOLDS):
        n = [total - pattern.n[fold] for total, pattern in zip(all_n, patterns)]  # training episodes
        both = {lesson: (float(sum(map(n.__getitem__, injected))), float(sum(map(n.__getitem__, left_out))))
                for lesson, (injected, left_out) in sides.items()}
        for outcome, column in columns.items():
            y = [total - values[fold] for total, values in zip(all_y[outcome], column)]
            effect: dict[str, float] = {}
            for lesson, (n1, n0) in both.items():
                if n1 and n0:
                    injected, left_out = sides[lesson]
                    y1, y0 = _added(map(y.__getitem__, injected)), _added(map(y.__getitem__, left_out))
                    balance = n1 * n0 / (n1 + n0)
                    effect[lesson] = (y1 / n1 - y0 / n0) * balance / (balance + EFFECT_PRIOR)
            models[outcome].append(_baselines(patterns, groups, n, y, effect))
    return models


def _added(values: Iterable[float]) -> float:
    """The values added one by one from 0.0, as `+=` adds them (Python 3.12's `sum` compensates)."""
    return functools.reduce(operator.add, values, 0.0)


def _baselines(patterns: list[Pattern], groups: dict[tuple[str, ...], list[int]], n: list[int], y: list[float],
               effect: dict[str, float]) -> AdditiveModel:
    """The model with these effects, each group's baseline fitted to what they leave unexplained
    (`groups`: each group's patterns, in log order)."""
    get, zero = effect.get, itertools.repeat(0.0)
    rest = [outcomes - count * sum(map(get, pattern.injected, zero))
            for pattern, count, outcomes in zip(patterns, n, y)]
    residual = {}
    for group, members in groups.items():
        count = sum(map(n.__getitem__, members))
        if count:
            residual[group] = (float(count), _added(map(rest.__getitem__, members)))
    total_n, total = float(sum(n)), _added(rest)
    mean = total / total_n if total_n else 0.0
    baseline = {group: (rest + BASELINE_PRIOR * mean) / (n + BASELINE_PRIOR) for group, (n, rest) in residual.items()}
    return AdditiveModel(effect, baseline, mean)


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


class Fitted(NamedTuple):
    """A log's patterns and, per outcome, each fold's model."""

    patterns: list[Pattern]
    models: dict[str, list[AdditiveModel]]


def fitted(log: Log) -> Fitted:
    """The log's patterns and models, made on first use and kept with the log: ranking by lift
    (`k:K`) and the doubly robust estimates read the same ones."""
    found = log.derived.get("fitted")
    if found is None:
        with no_cycle_collection():  # a pattern per slate, lists of them per lesson: none in a cycle
            patterns = patterns_of(log)
            found = log.derived["fitted"] = Fitted(patterns, fit_folds(patterns, OUTCOMES))
    return cast("Fitted", found)


def fold_lifts(log: Log) -> tuple[Mapping[str, float], ...]:
    """Per fold, each lesson's lift on reward measured on the other folds (the model's effects):
    a ranking that no episode's own outcome helped to make."""
    return tuple(model.effect for model in fitted(log).models["reward"])

