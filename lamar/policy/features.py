"""Context beyond the scope: per-slice selection statistics and evidence of one lesson."""

from __future__ import annotations

import dataclasses
import functools
import math
import random
from collections.abc import Mapping
from typing import Any

from lamar.policy.alpha import SLICE_SERIES, series
from lamar.policy.ledger import Ledger
from lamar.policy.selection import ArmStats
from lamar.policy.verdicts import SliceEvidence, Verdict, betting_bounds

MAX_SLICES = 32  # per lesson: a free key with many values (a session id) must not grow state forever
SLICE_SPREAD = 0.25  # tau: prior spread of a slice's deviation from the lesson-wide lift, in reward units


def slice_name(key: str, value: str) -> str:
    """How a slice is named in `Evidence.slices` and in proposals.

    >>> slice_name("language", "swift")
    'language=swift'
    """
    return f"{key}={value}"


@functools.lru_cache(maxsize=1024)
def _keys(scope: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """The keys a scope fixes (cached: the fold asks once per eligible lesson per report)."""
    return frozenset(key for key, _ in scope)


@dataclasses.dataclass(frozen=True)
class SliceBounds:
    """A slice's verdict inputs: lift, bounds at the slice family's alpha, randomized episodes."""

    key: str
    value: str
    verdict: Verdict
    lift: float
    lower: float
    upper: float
    randomized: int


class Slice:
    """Two-arm selection statistics and an evidence ledger of one (free key, value)."""

    __slots__ = ("arms", "ledger")

    def __init__(self) -> None:
        self.arms = ArmStats()
        self.ledger = Ledger()

    def to_dict(self) -> dict[str, Any]:
        return {"arms": self.arms.to_dict(), "ledger": self.ledger.to_dict()}

    def copy(self) -> Slice:
        out = Slice.__new__(Slice)
        out.arms, out.ledger = self.arms.copy(), self.ledger.copy()
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Slice:
        out = cls()
        out.arms = ArmStats.from_dict(dict(data["arms"]))
        out.ledger = Ledger.from_dict(dict(data["ledger"]))
        return out


class Slices:
    """Every slice of one lesson, and the alpha divisor its lesson-wide ledger inherited.

    A slice is one value of one context key that the lesson's scope leaves free (the lesson
    is scoped to `task=build`; `language=swift` is a slice of it). The features are the ones
    requirement 8 asks for, hand-built and small: a bias (the lesson-wide two-arm model) and
    one indicator per (free key, value). Selection uses them as a shrinkage model: each
    slice's deviation from the lesson-wide lift is shrunk towards zero by its own precision,

        lift(context) = lift_L + sum over free keys of  d_s * tau^2 / (tau^2 + sigma^2 / n_s)

    (n_s the slice's effective two-arm sample size, tau the prior spread of a slice deviation),
    so a slice with little data says little and a lesson that helps in Swift and hurts in
    Python is ranked by where it is. Keys the lesson has seen with a single value carry no
    information (their slice is the lesson itself) and are skipped.

    The evidence side keeps one AIPW ledger per slice, fed by the same randomized coins as the
    lesson-wide ledger, and judges each slice at its share of the lesson's alpha, fixed by the order
    the slice was first seen (`lamar.policy.alpha.slice_alpha`), a family of its own beside the
    lesson-wide verdicts. Slices restart with their lesson's segment.

    `inherited` is 1 unless the lesson's scope was narrowed to one of its slices: the
    lesson-wide ledger then continues that slice's ledger, so its bound keeps that slice's
    level, the lesson's alpha divided by `inherited` (a float; older states hold whole numbers).
    """

    __slots__ = ("inherited", "slices", "values")

    def __init__(self) -> None:
        self.slices: dict[tuple[str, str], Slice] = {}
        self.values: dict[str, int] = {}  # free key -> distinct values seen (capped with the slices)
        self.inherited: float = 1

    # -- the fold ----------------------------------------------------------------------------

    def observe(self, context: Mapping[str, str], scope: tuple[tuple[str, str], ...], reward: float,
                injected: bool, p: float, discount: float) -> None:
        """Fold one reported episode into the slices its context falls in (randomized ones
        into their ledgers too); keys the scope (its `items_key`) fixes are not features."""
        randomized = 0.0 < p < 1.0
        slices = self.slices
        fixed = _keys(scope)
        # In key order: a slice's rank (its share of alpha) must not follow the order a context's
        # keys were given in, which SQLite and PostgreSQL do not keep and the JSON store does.
        for key, value in sorted(context.items()):
            if key in fixed:
                continue
            s = slices.get((key, value))
            if s is None:
                if len(slices) >= MAX_SLICES:
                    continue
                s = slices[(key, value)] = Slice()
                self.values[key] = self.values.get(key, 0) + 1
            s.arms.record(reward, injected, discount)
            if randomized:
                s.ledger.record(reward, injected, p)

    def restart(self) -> None:
        """The lesson's world changed: its slices forget both arms alike, and their ledgers.

        They keep their count of tries: a restart must not make every slice cold again (a
        fossil would get fresh first looks in every language).
        """
        for s in self.slices.values():
            tries = s.arms.tries
            s.arms = ArmStats()
            s.arms.tries = tries
            s.ledger = Ledger()

    def restart_arms(self) -> None:
        """The selector saw the lesson's injected reward fall: its slices' selection arms forget
        alike (their ledgers, which are evidence, stay; so do their tries)."""
        for s in self.slices.values():
            tries = s.arms.tries
            s.arms = ArmStats()
            s.arms.tries = tries

    # -- selection ---------------------------------------------------------------------------

    def sample(self, arms: ArmStats, context: Mapping[str, str], sigma: float, explore: float, warmup: int,
               rng: random.Random) -> float:
        """Thompson's draw of the lesson's lift in `context` (the shrinkage model of `Slices`): the
        lesson-wide estimate moved by each slice's shrunk deviation, its noise the lesson-wide
        variance plus each slice's. A slice seen little (a new language) is drawn around the
        lesson-wide estimate with the prior's spread tau: explored as much as little is known of
        it, not forced (a forced first look in every value of every key cost the most where
        episodes per lesson are few)."""
        if arms.cold(warmup):
            return math.inf
        if not self.values:
            return arms.estimate + explore * sigma * math.sqrt(arms.spread) * rng.gauss(0.0, 1.0)
        estimate, variance = self._posterior(arms, context, sigma)
        return estimate + explore * math.sqrt(sigma * sigma * arms.spread + variance) * rng.gauss(0.0, 1.0)

    def estimate(self, arms: ArmStats, context: Mapping[str, str], sigma: float) -> float:
        """The selection model's point estimate of the lift in `context` (no optimism)."""
        if arms.w_in <= 0.0 or arms.w_out <= 0.0:
            return 0.0
        return self._posterior(arms, context, sigma)[0] if self.values else arms.estimate

    def _posterior(self, arms: ArmStats, context: Mapping[str, str], sigma: float) -> tuple[float, float]:
        """(lift in `context`, the variance the slices add: the prior tau^2 for a slice not yet seen both ways)."""
        estimate = arms.estimate
        variance = 0.0
        tau2 = SLICE_SPREAD * SLICE_SPREAD
        values = self.values
        for key, value in context.items():
            if values.get(key, 0) < 2:
                continue  # a key in the scope, or one value only: no deviation to learn
            s = self.slices.get((key, value))
            if s is None or s.arms.w_in <= 0.0 or s.arms.w_out <= 0.0:
                variance += tau2  # not seen both ways (since a restart): the prior alone
                continue
            noise = sigma * sigma * (1.0 / s.arms.w_in + 1.0 / s.arms.w_out)
            shrink = tau2 / (tau2 + noise)
            estimate += shrink * (s.arms.estimate - arms.estimate)
            variance += shrink * noise
        return estimate, variance

    # -- evidence ----------------------------------------------------------------------------

    def judge(self, alpha_helps: float, alpha_harms: float) -> list[SliceBounds]:
        """Each slice of a key seen with two values or more, judged at its share of the lesson's
        (segment's) alpha: the s-th slice seen (by key within an episode) gets `series(s, SLICE_SERIES)` of it."""
        values = self.values
        out = []
        for rank, ((key, value), s) in enumerate(self.slices.items(), start=1):
            ledger = s.ledger
            if values.get(key, 0) < 2 or not ledger.n:
                continue
            share = series(rank, SLICE_SERIES)
            lift, lower, upper = betting_bounds(ledger.a, ledger.b, *ledger.penalties, alpha_helps * share,
                                                alpha_harms * share)
            verdict = Verdict.HELPS if lower > 0.0 else Verdict.HARMS if upper < 0.0 else Verdict.UNKNOWN
            out.append(SliceBounds(key, value, verdict, lift, lower, upper, ledger.n))
        return out

    def evidence(self, alpha_helps: float, alpha_harms: float) -> dict[str, SliceEvidence]:
        """`Evidence.slices`: slice name -> its verdict, lift, bounds and randomized episodes."""
        return {slice_name(b.key, b.value): SliceEvidence(b.verdict, b.lift, b.lower, b.upper, b.randomized)
                for b in self.judge(alpha_helps, alpha_harms)}

    # -- narrowing, persistence, merges ------------------------------------------------------

    def continued(self, key: str, value: str) -> dict[str, Any] | None:
        """The slice a narrowing to `key`=`value` continues, with its rank (what `narrow` reads
        from a scope event whose contexts were erased); None when there is no such slice."""
        kept = self.slices.get((key, value))
        if kept is None:
            return None
        return {**kept.to_dict(), "rank": list(self.slices).index((key, value)) + 1}

    def narrow(self, key: str, value: str, continued: Mapping[str, Any] | None = None) -> Slice | None:
        """Forget every slice once the scope fixes `key` to `value`; return that slice.

        The other keys' slices mixed both sides of the narrowed key, so none of them speaks
        for the narrower lesson; they start again. `continued` (`continued`'s record, kept by
        the scope event once the contexts that fed the slice were erased) stands for the slice.
        """
        kept = self.slices.get((key, value))
        rank = list(self.slices).index((key, value)) + 1 if kept is not None else 0
        if continued is not None:
            kept, rank = Slice.from_dict(continued), int(continued["rank"])
        if kept is not None:
            self.inherited = self.inherited / series(rank, SLICE_SERIES)
        self.slices = {}
        self.values = {}
        return kept

    def to_dict(self) -> dict[str, Any]:
        return {"slices": [[key, value, s.to_dict()] for (key, value), s in self.slices.items()],
                "values": dict(self.values), "inherited": self.inherited}

    def copy(self) -> Slices:
        out = Slices()
        out.slices = {name: s.copy() for name, s in self.slices.items()}
        out.values = dict(self.values)
        out.inherited = self.inherited
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Slices:
        out = cls()
        for key, value, raw in data["slices"]:
            out.slices[(str(key), str(value))] = Slice.from_dict(raw)
        out.values = {str(k): int(v) for k, v in data["values"].items()}
        out.inherited = data["inherited"] if isinstance(data["inherited"], (int, float)) else float(data["inherited"])
        return out

    def merge(self, other: Slices) -> None:
        """Add a duplicate lesson's slices to these (a merge of two lessons)."""
        for name, s in other.slices.items():
            mine = self.slices.get(name)
            if mine is None:
                if len(self.slices) >= MAX_SLICES:
                    continue
                mine = self.slices[name] = Slice()
                self.values[name[0]] = self.values.get(name[0], 0) + 1
            mine.arms.merge(s.arms)
            mine.ledger.merge(s.ledger)
        self.inherited = max(self.inherited, other.inherited)  # the stricter level of the two


__all__ = ["MAX_SLICES", "SLICE_SPREAD", "Slice", "SliceBounds", "Slices", "slice_name"]
