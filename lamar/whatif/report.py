"""Evaluating alternatives over a log: the support check, every estimator, and the report rows."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

from lamar.whatif.alternatives import Alternative
from lamar.whatif.estimators import Accumulator, Estimate, pseudo_inverse, slate_weight
from lamar.whatif.log import LoggedEpisode
from lamar.whatif.model import FOLDS, AdditiveModel, Pattern, fit

OUTCOMES = ("reward", "success")
RANGES = {"reward": (-1.0, 1.0), "success": (0.0, 1.0)}
THIN = 30.0  # effective episodes below which an exact estimate's normal interval is not to be trusted
HEADLINE = "dr"  # the estimator a one-line answer quotes


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


def patterns_of(episodes: Sequence[LoggedEpisode]) -> list[tuple[LoggedEpisode, Pattern]]:
    """Group the episodes by what they logged, each with one episode that stands for its group.
    Episode j falls in fold j mod FOLDS, so every fold spans the whole period."""
    groups: dict[tuple[object, ...], tuple[LoggedEpisode, Pattern]] = {}
    for j, episode in enumerate(episodes):
        key = (tuple(sorted(episode.p.items())), episode.injected, episode.held_out)
        found = groups.get(key)
        if found is None:
            found = groups[key] = (episode, Pattern(dict(episode.p), episode.injected, episode.held_out,
                                                    tuple(sorted(episode.p))))
        pattern, fold = found[1], j % FOLDS
        pattern.n[fold] += 1
        pattern.reward[fold] += episode.reward
        pattern.reward2[fold] += episode.reward * episode.reward
        pattern.success[fold] += 1.0 if episode.success else 0.0
    return list(groups.values())


def evaluate(episodes: Sequence[LoggedEpisode], alternatives: Iterable[Alternative]) -> list[AlternativeReport]:
    """Every alternative's estimates over `episodes` (reported, oldest first)."""
    grouped = patterns_of(episodes)
    patterns = [pattern for _, pattern in grouped]
    models = {outcome: [fit(patterns, fold, outcome) for fold in range(FOLDS)] for outcome in OUTCOMES}
    return [_evaluate(alternative, grouped, models, len(episodes)) for alternative in alternatives]


def _evaluate(alternative: Alternative, grouped: list[tuple[LoggedEpisode, Pattern]],
              models: Mapping[str, list[AdditiveModel]], total: int) -> AlternativeReport:
    sums = {outcome: Accumulator() for outcome in OUTCOMES}
    supported = 0
    for episode, pattern in grouped:
        changes = alternative.changes(episode)
        weight = slate_weight(pattern.p, pattern.injected, changes)
        if weight is None:
            continue
        supported += sum(pattern.n)
        g = pseudo_inverse(pattern.p, pattern.injected, changes)
        inclusion = {i: changes.get(i, p) for i, p in pattern.p.items()}
        injected = {i: 1.0 for i in pattern.injected}
        for outcome in OUTCOMES:
            accumulator = sums[outcome]
            for fold in range(FOLDS):
                n = pattern.n[fold]
                if not n:
                    continue
                model = models[outcome][fold]
                y, yy = pattern.sums(fold, outcome)
                accumulator.add(n, y, yy, weight, g, model.predict(pattern.group, inclusion),
                                model.predict(pattern.group, injected))
    estimates = {outcome: accumulator.estimates(*RANGES[outcome]) for outcome, accumulator in sums.items()}
    return AlternativeReport(alternative.name, alternative.description, total, supported,
                             estimates["reward"], estimates["success"], sums["reward"].effective)
