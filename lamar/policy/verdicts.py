"""Verdicts (helps / harms / unknown), the evidence behind them, and the anytime-valid bound they rest on."""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping


class Verdict(str, enum.Enum):
    """What the randomized evidence says about a lesson's effect on reward."""

    HELPS = "helps"
    HARMS = "harms"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class SliceEvidence:
    """One slice's measured effect (a value of a context key the lesson's scope leaves free),
    judged at the slice family's alpha (split over the lesson's slices)."""

    verdict: Verdict
    lift: float
    lower: float
    upper: float
    randomized: int


@dataclasses.dataclass(frozen=True)
class Evidence:
    """A lesson's measured effect: `lift` on reward with anytime-valid bounds `[lower, upper]`.

    `lower` is the bound at the (stricter) helps level and `upper` at the harms level, so
    `verdict` is HELPS exactly when lower > 0 and HARMS exactly when upper < 0.
    `randomized` counts the episodes where the lesson was wanted and its inclusion was a
    coin of known probability; only those enter `lift`.
    """

    experience_id: str
    verdict: Verdict
    lift: float
    lower: float
    upper: float
    randomized: int
    injected: int
    held_out: int
    eligible: int
    restarts: int
    estimate: float  # the selection model's (discounted, non-randomized) view of the lift
    # "key=value" -> evidence within that slice of the context, for slices with enough data
    slices: Mapping[str, SliceEvidence] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-safe values: an infinite bound (no evidence yet) becomes None."""
        data = dataclasses.asdict(self)
        data["verdict"] = self.verdict.value
        for name in ("lift", "lower", "upper", "estimate"):
            if not math.isfinite(data[name]):
                data[name] = None
        data["slices"] = {name: {**dataclasses.asdict(s), "verdict": s.verdict.value}
                          for name, s in self.slices.items()}
        return data


def confidence_radius(variance_sum: float, alpha: float, information: float = 150.0) -> float:
    """Radius of a two-sided asymptotic confidence sequence for a weighted running sum.

    Time-uniform CLT bound (Waudby-Smith, Arnold, Wu, Ramdas and Howard, 2021, Thm 2.2),
    stated for the martingale S = sum w (psi - lift) with variance process `variance_sum`:
    with probability >= 1 - alpha, |S| stays within the radius at *every* episode, so
    looking after each one does not inflate false verdicts. Divide by the sum of weights
    for a bound on the lift. `rho` is fixed in advance; the bound is tightest when the
    variance process is near `information`.

    >>> round(confidence_radius(100.0, 0.05), 2)
    30.51
    >>> confidence_radius(0.0, 0.05) > 0
    True
    """
    log_term = -2.0 * math.log(alpha)
    rho2 = (log_term + math.log(log_term + 1.0)) / information
    v = variance_sum * rho2
    return math.sqrt(2.0 * (v + 1.0) / rho2 * math.log(math.sqrt(v + 1.0) / alpha))
