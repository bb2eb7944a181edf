"""Evaluating alternatives over a log: the support check, every estimator, and the report rows."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence

from lamar._errors import InvalidArgument, echoed
from lamar.storable import finite_number
from lamar.store.decode import no_cycle_collection
from lamar.whatif.alternatives import Alternative, name_of
from lamar.whatif.estimators import Accumulator, Estimate
from lamar.whatif.log import Log, LoggedEpisode
from lamar.whatif.model import FOLDS, OUTCOMES, AdditiveModel, Pattern, fitted
from lamar.whatif.slate import Slate

RANGES = {"reward": (-1.0, 1.0), "success": (0.0, 1.0)}
THIN = 30.0  # effective episodes below which an exact estimate's normal interval is not to be trusted
HEADLINE = "dr"  # the estimator a one-line answer quotes (the CLI by default, the UI)
EXACT = ("ips", "snips", "dr")  # the estimators on the exact slate weights, which `thin` is about


@dataclasses.dataclass(frozen=True)
class AlternativeReport:
    """One alternative over the logged episodes.

    `episodes` reported episodes were considered, `supported` of them are inside the support
    (the rest would change a lesson the log never randomized there). `reward` and `success` map
    "logged" (the logged policy on the supported episodes) and each estimator to its estimate.
    """

    policy: str
    description: str
    episodes: int
    supported: int
    reward: Mapping[str, Estimate]
    success: Mapping[str, Estimate]
    effective: float = 0.0  # Kish's effective number of episodes under the exact slate weights
    predicted: float = math.inf  # the effective number the logging coins predict (`Accumulator.predicted`)

    @property
    def outside(self) -> float:
        """The share of episodes outside the support."""
        return 1.0 - self.supported / self.episodes if self.episodes else 1.0

    @property
    def outside_shown(self) -> str:
        """`outside` as a whole percent, never rounded to 0% or 100% when it is not: a row shown as
        100% outside would seem to rest on no episode, and one at 0% to drop none."""
        text = f"{self.outside:.0%}"
        if text == "100%" and self.outside < 1.0:
            return ">99%"
        if text == "0%" and self.outside > 0.0:
            return "<1%"
        return text

    @property
    def evaluable(self) -> bool:
        return self.supported > 1

    @property
    def thin(self) -> bool:
        """Too few effective episodes for the exact estimators' (IPS, SNIPS, DR) normal intervals:
        the log rarely flipped the coins this policy changes the way it would have, as its weights
        show or as its coins predict (a slate it would need seldom drawn, or never)."""
        return min(self.effective, self.predicted) < THIN

    def says_nothing(self, estimator: str) -> bool:
        """An exact estimator's success interval spans the whole range although its weights, as
        seen, rest on enough episodes: the log seldom or never saw every coin this policy changes
        fall its way at once (the pseudo-inverse estimators, which read each coin alone, still say
        something)."""
        return (self.policy != "logged" and estimator in EXACT and self.effective >= THIN
                and self.success[estimator].spans(0.0, 1.0))

    def inside(self) -> AlternativeReport:
        """This row with every estimate's value kept inside its interval (`Estimate.inside`): what
        `whatif` reports, and so what the CLI, the UI and the MCP tool show."""
        return dataclasses.replace(self, reward={name: e.inside() for name, e in self.reward.items()},
                                   success={name: e.inside() for name, e in self.success.items()})

    def to_dict(self) -> dict[str, object]:
        return {"policy": self.policy, "description": self.description, "episodes": self.episodes,
                "supported": self.supported, "outside": self.outside,
                "effective": self.effective, "predicted": self.predicted if math.isfinite(self.predicted) else None,
                "thin": self.thin,
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
        """The row of `policy`, by its name or any spelling of it that `whatif` takes (` K:1 `)."""
        names = [policy]
        with contextlib.suppress(InvalidArgument, AttributeError):
            names.append(name_of(policy))
        for name in names:
            for row in self.alternatives:
                if row.policy == name:
                    return row
        rows = ", ".join(echoed(row.policy) for row in self.alternatives)
        raise KeyError(f"no row {echoed(policy)} in this report; its rows: {rows} (ask whatif for it)")

    def to_dict(self) -> dict[str, object]:
        return {"store": self.store, "logged": self.logged, "reported": self.reported,
                "randomized": self.randomized, "alternatives": [row.to_dict() for row in self.alternatives]}


def _finite(estimate: Estimate) -> dict[str, float | int | None]:
    """JSON-safe: an undefined value or an unbounded interval becomes None."""
    return {key: (None if isinstance(value, float) and not math.isfinite(value) else value)
            for key, value in estimate.to_dict().items()}


@dataclasses.dataclass(frozen=True)
class _Cell:
    """One slate's episodes in one fold: their count and sums for each outcome, and per outcome
    the fold's model, its expectation under the logged coins and its prediction for the injected
    set (the same for every alternative, so computed once)."""

    fold: int
    n: int
    sums: Mapping[str, tuple[float, float]]
    models: Mapping[str, tuple[AdditiveModel, float, float]]


def evaluate(log: Log | Sequence[LoggedEpisode], alternatives: Iterable[Alternative]) -> list[AlternativeReport]:
    """Every alternative's estimates over the log's reported episodes, each with both of its
    intervals (`Accumulator.estimates`)."""
    with no_cycle_collection():  # a cell per slate and fold, a model per fold: none in a cycle
        return _evaluate_all(log if isinstance(log, Log) else Log.of(log), alternatives)


def _evaluate_all(log: Log, alternatives: Iterable[Alternative]) -> list[AlternativeReport]:
    patterns, models = fitted(log)
    grouped: list[tuple[Slate, list[_Cell]]] = []
    for slate, pattern in zip(log.slates, patterns, strict=True):
        injected = dict.fromkeys(pattern.injected, 1.0)
        cells = []
        for fold in range(FOLDS):
            if not pattern.n[fold]:
                continue
            predicted = {}
            for outcome in OUTCOMES:
                model = models[outcome][fold]
                predicted[outcome] = (model, model.predict(pattern.group, pattern.p),
                                   model.predict(pattern.group, injected))
            cells.append(_Cell(fold, pattern.n[fold], {o: pattern.sums(fold, o) for o in OUTCOMES}, predicted))
        if cells:
            grouped.append((slate, cells))
    noise = {outcome: _noise(patterns, outcome) for outcome in OUTCOMES}
    moments = {outcome: _moments(patterns, outcome) for outcome in OUTCOMES}
    return [_evaluate(alternative, grouped, len(log.slate), noise, moments) for alternative in alternatives]


def _moments(patterns: Sequence[Pattern], outcome: str) -> tuple[float, float]:
    """The outcome's mean and mean square over the log's reported episodes: what IPS's and SNIPS's
    predicted variances stand on where a slate was seldom seen (`Accumulator`)."""
    n = y = yy = 0.0
    for pattern in patterns:
        for fold in range(FOLDS):
            if pattern.n[fold]:
                total, squares = pattern.sums(fold, outcome)
                n, y, yy = n + pattern.n[fold], y + total, yy + squares
    return (y / n, yy / n) if n else (0.0, 0.0)


def _noise(patterns: Sequence[Pattern], outcome: str) -> float:
    """The outcome's variance among episodes that logged the same slate, pooled over the log's
    slates and folds: what the doubly robust terms' predicted variance multiplies."""
    within = dof = 0.0
    for pattern in patterns:
        for fold in range(FOLDS):
            n = pattern.n[fold]
            if n > 1:
                y, yy = pattern.sums(fold, outcome)
                within += yy - y * y / n
                dof += n - 1
    return within / dof if dof else 0.0


def _checked(alternative: Alternative, slate: Slate, fold: int) -> Mapping[str, float]:
    """The alternative's `changes` for one slate, each a probability, and none for a lesson not
    eligible there left at 0: the log left that lesson out for certain, as it does one at p = 0.

    Raises:
        InvalidArgument: `changes` gave something other than a mapping of probabilities.
    """
    changes = alternative.changes(slate, fold)
    if type(changes) is not dict and not isinstance(changes, Mapping):
        raise InvalidArgument(f"policy {echoed(alternative.name)}: changes() returns a mapping of lesson ids to "
                              f"inclusion probabilities, got {type(changes).__name__}")
    for lesson, pi in changes.items():
        # A NaN or a probability past [0, 1] would pass the support check and give no estimate, or a wrong
        # one. A float in [0, 1] is finite: `finite_number` is asked about anything else.
        if not (type(pi) is float and 0.0 <= pi <= 1.0) and not (finite_number(pi) and 0.0 <= pi <= 1.0):
            raise InvalidArgument(f"policy {echoed(alternative.name)} gives lesson {echoed(lesson)} the inclusion "
                                  f"probability {echoed(pi)}; an inclusion probability is a number in [0, 1]")
    if changes.keys() <= slate.p.keys():
        return changes
    return {lesson: pi for lesson, pi in changes.items() if lesson in slate.p or pi != 0.0}


def _weights(p: Mapping[str, float], injected: frozenset[str], changes: Mapping[str, float]
             ) -> tuple[float, float, float, float, list[tuple[str, float]]] | None:
    """An episode's `slate_weight`, `pseudo_inverse` and `second_moments` (E[w^2], E[g^2]) in one
    pass, each computed term for term as they compute it, and the lessons the changes move with
    their shift; None outside the support (as `slate_weight`)."""
    weight = g = w2 = g2 = 1.0
    moved = []
    for lesson, new in changes.items():
        old = p.get(lesson, 0.0)
        if new == old:
            continue
        if not 0.0 < old < 1.0:
            return None
        shift, spread = new - old, old * (1.0 - old)
        if lesson in injected:
            weight *= new / old
            g += shift * (1.0 - old) / spread
        else:
            weight *= (1.0 - new) / (1.0 - old)
            g += shift * (0.0 - old) / spread
        w2 *= new * new / old + (1.0 - new) ** 2 / (1.0 - old)
        g2 += shift ** 2 / spread
        moved.append((lesson, shift))
    return weight, g, w2, g2, moved


def _evaluate(alternative: Alternative, grouped: list[tuple[Slate, list[_Cell]]], total: int,
              noise: Mapping[str, float], moments: Mapping[str, tuple[float, float]]) -> AlternativeReport:
    sums = {outcome: Accumulator(*moments[outcome]) for outcome in OUTCOMES}
    supported = 0
    for slate, cells in grouped:
        for cell in cells:
            found = _weights(slate.p, slate.injected, _checked(alternative, slate, cell.fold))
            if found is None:
                continue
            weight, g, w2, g2, moved = found
            supported += cell.n
            for outcome in OUTCOMES:
                accumulator = sums[outcome]
                y, yy = cell.sums[outcome]
                model, under_logged, for_injected = cell.models[outcome]
                effect = model.effect
                under_alternative = under_logged + sum(shift * effect.get(i, 0.0) for i, shift in moved)
                accumulator.add(cell.n, y, yy, weight, g, w2, g2)
                accumulator.add_model(weight, g, ((cell.n, y, yy, under_alternative, for_injected),), w2, g2,
                                      noise[outcome])
    estimates = {outcome: accumulator.estimates(*RANGES[outcome], total) for outcome, accumulator in sums.items()}
    return AlternativeReport(alternative.name, alternative.description, total, supported,
                             estimates["reward"], estimates["success"], sums["reward"].effective,
                             sums["reward"].predicted)
