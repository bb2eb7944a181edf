"""Evaluating alternatives over a log: the support check, every estimator, and the report rows."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

from lamar.whatif.alternatives import Alternative
from lamar.whatif.estimators import Accumulator, Estimate, pseudo_inverse, slate_weight
from lamar.whatif.log import Log, LoggedEpisode
from lamar.whatif.model import FOLDS, AdditiveModel, Pattern, fit
from lamar.whatif.slate import Slate

OUTCOMES = ("reward", "success")
RANGES = {"reward": (-1.0, 1.0), "success": (0.0, 1.0)}
THIN = 30.0  # effective episodes below which an exact estimate's normal interval is not to be trusted
HEADLINE = "dr"  # the estimator a one-line answer quotes (the CLI by default, the UI)
EXACT = ("ips", "snips", "dr")  # the estimators on the exact slate weights, which `thin` is about


@dataclasses.dataclass(frozen=True)
class AlternativeReport:
    """One alternative over the logged episodes.

    `episodes` reported episodes were considered, `supported` of them are inside the support
    (the rest would need a lesson the log never randomized there). `reward` and `success` map
    "logged" (the logged policy on the supported episodes) and each estimator to its estimate.
    """

    policy: str
    description: str
    episodes: int
    supported: int
    reward: Mapping[str, Estimate]
    success: Mapping[str, Estimate]
    effective: float = 0.0  # Kish's effective number of episodes under the exact slate weights

    @property
    def outside(self) -> float:
        """The share of episodes outside the support."""
        return 1.0 - self.supported / self.episodes if self.episodes else 1.0

    @property
    def evaluable(self) -> bool:
        return self.supported > 1

    @property
    def thin(self) -> bool:
        """Too few effective episodes for the exact estimators' (IPS, SNIPS, DR) normal intervals:
        the log rarely flipped the coins this policy changes the way it would have."""
        return self.effective < THIN

    def to_dict(self) -> dict[str, object]:
        return {"policy": self.policy, "description": self.description, "episodes": self.episodes,
                "supported": self.supported, "outside": self.outside,
                "effective": self.effective, "thin": self.thin,
                "reward": {name: _finite(e) for name, e in self.reward.items()},
                "success": {name: _finite(e) for name, e in self.success.items()}}


@dataclasses.dataclass(frozen=True)
class WhatIfReport:
    """What `Lamar.whatif` returns: the log it read and one row per alternative."""

    store: str
    logged: int  # episodes in the selection, reported or not
    reported: int
    randomized: int  # reported episodes with at least one coin
    alternatives: tuple[AlternativeReport, ...]

    def __getitem__(self, policy: str) -> AlternativeReport:
        for row in self.alternatives:
            if row.policy == policy:
                return row
        raise KeyError(policy)

    def to_dict(self) -> dict[str, object]:
        return {"store": self.store, "logged": self.logged, "reported": self.reported,
                "randomized": self.randomized, "alternatives": [row.to_dict() for row in self.alternatives]}


def _finite(estimate: Estimate) -> dict[str, float | int | None]:
    """JSON-safe: an undefined value or an unbounded interval becomes None."""
    return {key: (None if isinstance(value, float) and not math.isfinite(value) else value)
            for key, value in estimate.to_dict().items()}


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


@dataclasses.dataclass(frozen=True)
class _Cell:
    """One slate's episodes in one fold, for one outcome: their count and sums, and the fold's
    model: its expectation under the logged coins and its prediction for the injected set (both
    the same for every alternative, so computed once)."""

    n: int
    y: float
    yy: float
    model: AdditiveModel
    under_logged: float
    for_injected: float


def evaluate(log: Log | Sequence[LoggedEpisode], alternatives: Iterable[Alternative]) -> list[AlternativeReport]:
    """Every alternative's estimates over the log's reported episodes."""
    if not isinstance(log, Log):
        log = Log.of(log)
    patterns = patterns_of(log)
    models = {outcome: [fit(patterns, fold, outcome) for fold in range(FOLDS)] for outcome in OUTCOMES}
    grouped = []
    for slate, pattern in zip(log.slates, patterns, strict=True):
        if not sum(pattern.n):
            continue
        injected = dict.fromkeys(pattern.injected, 1.0)
        cells = {outcome: [_Cell(pattern.n[fold], *pattern.sums(fold, outcome), model,
                                 model.predict(pattern.group, pattern.p), model.predict(pattern.group, injected))
                           for fold, model in enumerate(models[outcome]) if pattern.n[fold]]
                 for outcome in OUTCOMES}
        grouped.append((slate, pattern, cells))
    return [_evaluate(alternative, grouped, len(log.slate)) for alternative in alternatives]


def _evaluate(alternative: Alternative, grouped: list[tuple[Slate, Pattern, dict[str, list[_Cell]]]],
              total: int) -> AlternativeReport:
    sums = {outcome: Accumulator() for outcome in OUTCOMES}
    supported = 0
    for slate, pattern, cells in grouped:
        changes = alternative.changes(slate)
        weight = slate_weight(slate.p, slate.injected, changes)
        if weight is None:
            continue
        n = sum(pattern.n)
        supported += n
        g = pseudo_inverse(slate.p, slate.injected, changes)
        moved = [(i, q - slate.p[i]) for i, q in changes.items() if q != slate.p[i]]
        for outcome in OUTCOMES:
            accumulator = sums[outcome]
            y = sum(cell.y for cell in cells[outcome])
            yy = sum(cell.yy for cell in cells[outcome])
            accumulator.add(n, y, yy, weight, g)
            accumulator.add_model(weight, g, [
                (cell.n, cell.y, cell.yy, cell.under_logged + sum(shift * cell.model.effect.get(i, 0.0)
                                                                  for i, shift in moved), cell.for_injected)
                for cell in cells[outcome]])
    estimates = {outcome: accumulator.estimates(*RANGES[outcome]) for outcome, accumulator in sums.items()}
    return AlternativeReport(alternative.name, alternative.description, total, supported,
                             estimates["reward"], estimates["success"], sums["reward"].effective)
