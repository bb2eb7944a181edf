"""The second design's twenty knobs, frozen for the gym's frontier."""

from __future__ import annotations

import dataclasses
import math

from lamar.signals import Signal, to_reward


@dataclasses.dataclass(frozen=True)
class Policy:
    """How the engine explores, holds out, exposes, judges and forgets.

    Attributes:
        explore: width of the optimistic bound in reward standard deviations.
        warmup: injections a lesson gets before its bound may rule it out.
        holdout: chance that a wanted lesson without a helps verdict is withheld.
        holdout_proven: the same for a lesson proven to help and not in doubt (the running
            cost of watching it).
        holdout_doubt: the same for a lesson proven to help while its doubt statistic is above
            `doubt_holdout` or its verdict is withdrawn: the moment the verdict needs information.
        discount: per-eligible-episode forgetting of the selection model (not of the ledger).
        alpha_helps: error of helps verdicts, split over the lessons (Bonferroni) and over each
            lesson's segments (alpha_j = alpha 6 / (pi^2 j^2) for its j-th segment).
        alpha_harms: the same for harms verdicts; looser, since harm is only ever proposed for review.
        min_evidence: randomized episodes before any verdict.
        change_threshold: log-likelihood ratio at which the change CUSUM proves a change
            of the lift and restarts the lesson's evidence.
        change_shift: the shift of the lift the change CUSUM looks for, in reward standard deviations.
        doubt_threshold: log-likelihood ratio ("the lift is now 0" against "still the estimate")
            above which a helps verdict is withdrawn to unknown.
        doubt_holdout: doubt level above which a proven lesson is held out at `holdout_doubt`.
        drop_threshold: the selection's fall detector (not a verdict): CUSUM level, in reward
            standard deviations, at which a lesson whose injected reward fell restarts its
            selection model, so a lesson that stopped working stops being chosen quickly.
        drop_drift: that detector's slack per episode, in reward standard deviations.
        harm_exposure: chance per episode of an exposure round while some eligible lesson looks
            harmful but is not yet judged: one such lesson is injected on a fair coin so that
            harm can be proven (0 turns exposure off; the injection rate is half this).
        harm_retest: the same for lessons judged harms, so that verdict stays revisable.
        harm_budget: randomized episodes a lesson's segment may reach by exposure: past it, a
            lesson that still has no verdict is no longer exposed (its harm, if any, is too
            small to prove at a price worth paying).
        pending_after: seconds an episode may wait for its report before the engine settles
            it (None: episodes wait forever; `Lamar.pending()` lists them).
        pending_outcome: what a settled episode gets: a Signal or reward in [-1, 1] recorded
            as a default outcome, or None to record it as expired (no reward, nothing learned).
    """

    explore: float = 0.6
    warmup: int = 8
    holdout: float = 0.15
    holdout_proven: float = 0.05
    holdout_doubt: float = 0.25
    discount: float = 0.999
    alpha_helps: float = 0.02
    alpha_harms: float = 0.05
    min_evidence: int = 20
    change_threshold: float = 10.0
    change_shift: float = 0.4
    doubt_threshold: float = 2.0
    doubt_holdout: float = 0.1
    drop_threshold: float = 10.0
    drop_drift: float = 0.5
    harm_exposure: float = 0.05
    harm_retest: float = 0.02
    harm_budget: int = 2000
    pending_after: float | None = None
    pending_outcome: Signal | float | str | None = None

    def __post_init__(self) -> None:
        for name in ("holdout", "holdout_proven", "holdout_doubt"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise ValueError(f"{name} must be strictly between 0 and 1 (the coin must be random); got {value}")
        for name in ("harm_exposure", "harm_retest"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be in [0, 1) (0 turns it off); got {value}")
        for name in ("alpha_helps", "alpha_harms"):
            if not 0.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must be in (0, 1)")
        if not 0.0 < self.discount <= 1.0:
            raise ValueError("discount must be in (0, 1]")
        for name in ("explore", "drop_threshold", "drop_drift", "change_threshold", "change_shift",
                     "doubt_threshold", "doubt_holdout"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise ValueError(f"{name} must be a finite number >= 0")
        if self.harm_budget < 0:
            raise ValueError("harm_budget must be a whole number >= 0")
        if self.warmup < 1:
            raise ValueError("warmup must be at least 1")
        if self.min_evidence < 2:
            raise ValueError("min_evidence must be at least 2")
        if self.pending_after is not None and not (isinstance(self.pending_after, (int, float))
                                                   and 0.0 <= self.pending_after < math.inf):
            raise ValueError(f"pending_after is a number of seconds >= 0, or None; got {self.pending_after!r}")
        if self.pending_outcome is not None:
            to_reward(self.pending_outcome)  # raises InvalidReward, naming what it takes
