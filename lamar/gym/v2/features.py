"""The second design's context slices, frozen for the gym's frontier (in memory only)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping

from lamar.gym.v2.ledger import Ledger
from lamar.gym.v2.selection import ArmStats
from lamar.gym.v2.verdicts import confidence_radius
from lamar.policy.verdicts import SliceEvidence, Verdict

MAX_SLICES = 32  # per lesson: a free key with many values (a session id) must not grow state forever
SLICE_SPREAD = 0.5  # tau: prior spread of a slice's deviation from the lesson-wide lift, in reward units
MIN_SIDE = 5  # randomized episodes each way before a slice may be judged (as the lesson-wide verdict)


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


class Slices:
    """Every slice of one lesson, and the alpha divisor its lesson-wide ledger inherited.

    `inherited` is 1 unless the lesson's scope was narrowed to one of its slices: the
    lesson-wide ledger then continues that slice's ledger, which was picked among
    `inherited` slices, so its bound keeps the slice family's Bonferroni divisor.
    """

    __slots__ = ("inherited", "slices", "values")

    def __init__(self) -> None:
        self.slices: dict[tuple[str, str], Slice] = {}
        self.values: dict[str, int] = {}  # free key -> distinct values seen (capped with the slices)
        self.inherited = 1

    # -- the fold ----------------------------------------------------------------------------

    def observe(self, context: Mapping[str, str], scope: tuple[tuple[str, str], ...], reward: float,
                injected: bool, p: float, discount: float) -> None:
        """Fold one reported episode into the slices its context falls in (randomized ones
        into their ledgers too); keys the scope (its `items_key`) fixes are not features."""
        randomized = 0.0 < p < 1.0
        slices = self.slices
        fixed = _keys(scope)
        for key, value in context.items():
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

    def upper(self, arms: ArmStats, context: Mapping[str, str], sigma: float, explore: float,
              warmup: int) -> float:
        """The optimistic bound of the lesson's lift in `context` (the shrinkage model that
        `lamar.policy.features.Slices` describes).

        The width adds each slice's posterior variance to the lesson-wide one; a slice not yet
        tried `warmup` times (a new language) is cold, like a new lesson, and gets its first looks.
        """
        if arms.cold(warmup):
            return math.inf
        spread = 1.0 / arms.w_in + 1.0 / arms.w_out
        log_t = max(1.0, math.log(arms.w_in + arms.w_out))
        if not self.values:
            return arms.estimate + explore * sigma * math.sqrt(log_t * spread)
        estimate, variance = self._posterior(arms, context, sigma, warmup)
        if math.isinf(variance):
            return math.inf
        return estimate + explore * math.sqrt(log_t * (sigma * sigma * spread + variance))

    def estimate(self, arms: ArmStats, context: Mapping[str, str], sigma: float) -> float:
        """The selection model's point estimate of the lift in `context` (no optimism)."""
        if arms.w_in <= 0.0 or arms.w_out <= 0.0:
            return 0.0
        return self._posterior(arms, context, sigma, 0)[0] if self.values else arms.estimate

    def _posterior(self, arms: ArmStats, context: Mapping[str, str], sigma: float,
                   warmup: int) -> tuple[float, float]:
        """(lift in `context`, the variance the slices add); the variance is inf for a cold slice."""
        estimate = arms.estimate
        variance = 0.0
        tau2 = SLICE_SPREAD * SLICE_SPREAD
        values = self.values
        for key, value in context.items():
            if values.get(key, 0) < 2:
                continue  # a key in the scope, or one value only: no deviation to learn
            s = self.slices.get((key, value))
            if s is None or s.arms.tries < warmup:
                return estimate, math.inf  # every slice gets its first looks, as every lesson does
            if s.arms.w_in <= 0.0 or s.arms.w_out <= 0.0:
                variance += tau2  # not seen both ways (since a restart): the prior alone
                continue
            noise = sigma * sigma * (1.0 / s.arms.w_in + 1.0 / s.arms.w_out)
            shrink = tau2 / (tau2 + noise)
            estimate += shrink * (s.arms.estimate - arms.estimate)
            variance += shrink * noise
        return estimate, variance

    # -- evidence ----------------------------------------------------------------------------

    @property
    def tested(self) -> int:
        """Slices in the family (of keys seen with two values or more): the Bonferroni divisor."""
        values = self.values
        return sum(1 for key, _ in self.slices if values.get(key, 0) >= 2)

    def judge(self, alpha_helps: float, alpha_harms: float, min_evidence: int,
              n_lessons: int) -> list[SliceBounds]:
        """Each slice with enough randomized episodes, judged at alpha / (lessons x slices)."""
        divisor = max(n_lessons, 1) * max(self.tested, 1)
        out = []
        for (key, value), s in self.slices.items():
            ledger = s.ledger
            if self.values.get(key, 0) < 2 or ledger.n < min_evidence or min(ledger.n_in, ledger.n_out) < MIN_SIDE:
                continue
            spread, weight, mean = ledger.variance_sum, ledger.weight, ledger.mean
            lower = mean - confidence_radius(spread, 2 * alpha_helps / divisor) / weight
            upper = mean + confidence_radius(spread, 2 * alpha_harms / divisor) / weight
            verdict = Verdict.HELPS if lower > 0.0 else Verdict.HARMS if upper < 0.0 else Verdict.UNKNOWN
            out.append(SliceBounds(key, value, verdict, mean, lower, upper, ledger.n))
        return out

    def evidence(self, alpha_helps: float, alpha_harms: float, min_evidence: int,
                 n_lessons: int) -> dict[str, SliceEvidence]:
        """`Evidence.slices`: slice name -> its verdict, lift, bounds and randomized episodes."""
        return {slice_name(b.key, b.value): SliceEvidence(b.verdict, b.lift, b.lower, b.upper, b.randomized)
                for b in self.judge(alpha_helps, alpha_harms, min_evidence, n_lessons)}


__all__ = ["MAX_SLICES", "SLICE_SPREAD", "Slice", "SliceBounds", "Slices", "slice_name"]
