"""The engine's tuning, in one frozen record with documented defaults."""

from __future__ import annotations

import dataclasses
import math

from lamar.signals import Signal, to_reward


@dataclasses.dataclass(frozen=True)
class Policy:
    """How the engine explores, holds out, judges and forgets.

    Attributes:
        explore: width of the optimistic bound in reward standard deviations.
        warmup: injections a lesson gets before its bound may rule it out.
        holdout: chance that a wanted lesson without a helps verdict is withheld.
        holdout_proven: the same for a lesson proven to help (the running cost of checking it).
        discount: per-eligible-episode forgetting of the selection model (not of the ledger).
        alpha_helps: family-wise error of helps verdicts, split over the lessons (Bonferroni).
        alpha_harms: the same for harms verdicts; looser, since harm is only ever proposed for review.
        min_evidence: randomized episodes before any verdict.
        change_threshold: CUSUM alarm level, in reward standard deviations.
        change_drift: CUSUM slack per episode, in reward standard deviations.
        pending_after: seconds an episode may wait for its report before the engine settles
            it (None: episodes wait forever; `Lamar.pending()` lists them).
        pending_outcome: what a settled episode gets: a Signal or reward in [-1, 1] recorded
            as a default outcome, or None to record it as expired (no reward, nothing learned).
    """

    explore: float = 0.6
    warmup: int = 8
    holdout: float = 0.15
    holdout_proven: float = 0.05
    discount: float = 0.999
    alpha_helps: float = 0.02
    alpha_harms: float = 0.05
    min_evidence: int = 20
    change_threshold: float = 10.0
    change_drift: float = 0.5
    pending_after: float | None = None
    pending_outcome: Signal | float | str | None = None

    def __post_init__(self) -> None:
        for name in ("holdout", "holdout_proven"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"{name} must be strictly between 0 and 1 (the coin must be random); got {value}")
        for name in ("alpha_helps", "alpha_harms"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be in (0, 1)")
        if not 0.0 < self.discount <= 1.0:
            raise ValueError("discount must be in (0, 1]")
        for name in ("explore", "change_threshold", "change_drift"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"{name} must be a finite number >= 0")
        if self.warmup < 1:
            raise ValueError("warmup must be at least 1")
        if self.min_evidence < 2:
            raise ValueError("min_evidence must be at least 2")
        if self.pending_after is not None and not (isinstance(self.pending_after, (int, float))
                                                   and 0.0 <= self.pending_after < math.inf):
            raise ValueError(f"pending_after is a number of seconds >= 0, or None; got {self.pending_after!r}")
        if self.pending_outcome is not None:
            to_reward(self.pending_outcome)  # raises InvalidReward, naming what it takes
