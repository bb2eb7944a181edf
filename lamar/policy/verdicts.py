"""Verdicts (helps / harms / unknown), the evidence behind them, and the anytime-valid bound they rest on."""

from __future__ import annotations

import dataclasses
import enum
import math


class Verdict(str, enum.Enum):
    """What the randomized evidence says about a lesson's effect on reward."""

    HELPS = "helps"
    HARMS = "harms"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


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

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-safe values: an infinite bound (no evidence yet) becomes None."""
        data = dataclasses.asdict(self)
        data["verdict"] = self.verdict.value
        for name in ("lift", "lower", "upper", "estimate"):
            if not math.isfinite(data[name]):
                data[name] = None
        return data


def confidence_radius(n: int, variance: float, alpha: float, information: float = 2000.0) -> float:
    """Half-width of a two-sided asymptotic confidence sequence for a running mean.

    Time-uniform CLT bound (Waudby-Smith, Arnold, Wu, Ramdas and Howard, 2021, Thm 2.2):
    with probability >= 1 - alpha the mean stays within the radius at *every* n, so looking
    after each episode does not inflate false verdicts. `rho` is fixed in advance so the
    bound is tightest when n * variance is near `information`.

    >>> round(confidence_radius(400, 1.0, 0.05), 3)
    0.168
    >>> confidence_radius(0, 1.0, 0.05)
    inf
    """
    if n <= 0:
        return math.inf
    log_term = -2.0 * math.log(alpha)
    rho2 = (log_term + math.log(log_term + 1.0)) / information
    v = n * max(variance, 1e-12) * rho2
    return math.sqrt(2.0 * (v + 1.0) / (n * n * rho2) * math.log(math.sqrt(v + 1.0) / alpha))
