"""The engine's tuning, in one frozen record with documented defaults (docs/decisions.md says why)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any, TypedDict

from lamar._errors import InvalidArgument
from lamar.signals import Signal, to_reward
from lamar.storable import finite_number, whole_number

# The second design's knobs, accepted and ignored (with a DeprecationWarning) so that code and
# stores written for it keep running; docs/decisions.md says what replaced each one.
RETIRED = frozenset({
    "holdout_proven", "holdout_doubt", "min_evidence", "change_threshold", "change_shift", "doubt_threshold",
    "doubt_holdout", "drop_threshold", "drop_drift", "harm_exposure", "harm_retest", "harm_budget",
})

# Knobs that say when an engine settles pending episodes, not how an outcome folds (a settled
# episode is an outcome event like any other): engines that differ only in these read one
# another's saved state and PostgreSQL rows instead of folding the log again.
SETTLING = ("pending_after", "pending_outcome")

SOONER = 0.15  # the holdout a message proposes to prove sooner: docs/decisions.md prices it


def holdout_lever(rate: float = SOONER, store: str | None = None) -> str:
    """How a reader sets the holdout to `rate`, worded once for every message that names the lever: the hooks'
    install option for a Claude Code user, the keyword for a Python one (the CLI then reads the store so).
    `store` is named in the install: without --store, install would move the hooks to the default store."""
    import shlex

    from lamar.program import program_name

    # A database URL is shown without its password, which an install could not connect with: left to the reader.
    where = f" --store {shlex.quote(store)}" if store and "://" not in store else ""
    return (f"`{program_name()} claude-code install{where} --holdout {rate:g}` for Claude Code's hooks, "
            f"Lamar(..., holdout={rate:g}) in Python")


def without_retired(tuning: Mapping[str, Any], *, warn: bool = True) -> dict[str, Any]:
    """`tuning` without the retired knobs, each named in a DeprecationWarning (when `warn`)."""
    retired = sorted(set(tuning) & RETIRED)
    if retired and warn:
        warnings.warn(f"{', '.join(retired)}: retired with the second decision core and ignored; the "
                      "engine's knobs are explore, warmup, holdout, discount, alpha_helps, alpha_harms, "
                      "pending_after, pending_outcome (docs/decisions.md, 'The knobs')",
                      DeprecationWarning, stacklevel=3)
    return {name: value for name, value in tuning.items() if name not in RETIRED}


@dataclasses.dataclass(frozen=True)
class Policy:
    """How the engine explores, randomizes, judges and settles (docs/decisions.md, "The knobs").

    Attributes:
        explore: Thompson sampling's noise, in standard errors of each lesson's lift estimate:
            more tries of uncertain lessons against slots spent on useless ones.
        warmup: injections a lesson (or a slice of it) gets before its estimate decides.
        holdout: the evidence coin: the chance that a wanted lesson is withheld, whatever its
            verdict; proof against reward. 0 turns randomized evidence off (every verdict stays
            unknown).
        discount: per-eligible-episode forgetting of the selection model (1: none; the fall
            detector restarts it when the lesson's injected reward falls).
        alpha_helps: the chance that any helps verdict in the store is ever wrong, shared once per
            lesson by its creation rank and over its segments.
        alpha_harms: the same for harms verdicts; looser, since harm is only ever proposed for review.
        pending_after: seconds an episode may wait for its report before the engine settles
            it (None: episodes wait forever; `Lamar.pending()` lists them).
        pending_outcome: what a settled episode gets: a Signal or reward in [-1, 1] recorded
            as a default outcome, or None to record it as expired (no reward, nothing learned).

    >>> from lamar import Lamar, Policy
    >>> Policy().holdout, Lamar(holdout=0.1).policy.holdout  # Lamar's keywords are these fields
    (0.04, 0.1)
    >>> Policy(holdout=1.0)
    Traceback (most recent call last):
    lamar._errors.InvalidArgument: holdout must be in [0, 1) (0 turns randomized evidence off); got 1.0
    """

    explore: float = 0.65
    warmup: int = 3
    holdout: float = 0.04
    discount: float = 1.0
    alpha_helps: float = 0.02
    alpha_harms: float = 0.05
    pending_after: float | None = None
    pending_outcome: Signal | float | str | None = None

    def __post_init__(self) -> None:
        # InvalidArgument is a ValueError and a TypeError: code that caught either still does.
        if not (finite_number(self.holdout) and 0.0 <= self.holdout < 1.0):
            raise InvalidArgument(f"holdout must be in [0, 1) (0 turns randomized evidence off); got {self.holdout!r}")
        for name in ("alpha_helps", "alpha_harms"):
            if not (finite_number(getattr(self, name)) and 0.0 < getattr(self, name) < 1.0):
                raise InvalidArgument(f"{name} must be in (0, 1); got {getattr(self, name)!r}")
        if not (finite_number(self.discount) and 0.0 < self.discount <= 1.0):
            raise InvalidArgument(f"discount must be in (0, 1]; got {self.discount!r}")
        if not (finite_number(self.explore) and self.explore >= 0.0):
            raise InvalidArgument(f"explore must be a finite number >= 0; got {self.explore!r}")
        if not whole_number(self.warmup, low=1):  # a count of tries, as Lamar(warmup=...) takes it
            raise InvalidArgument(f"warmup must be a whole number, at least 1; got {self.warmup!r}")
        if self.pending_after is not None and not (finite_number(self.pending_after) and self.pending_after >= 0.0):
            raise InvalidArgument(f"pending_after is a number of seconds >= 0, or None; got {self.pending_after!r}")
        if self.pending_outcome is not None:
            to_reward(self.pending_outcome)  # raises InvalidReward, naming what it takes


class Tuning(TypedDict, total=False):
    """The tuning keywords of `Lamar(store, k, seed, **tuning)`: `Policy`'s fields, each optional
    (tests/test_engine.py keeps the two in step). The retired knobs (`RETIRED`) are still accepted
    at run time, with a DeprecationWarning, but are not typed."""

    explore: float
    warmup: int
    holdout: float
    discount: float
    alpha_helps: float
    alpha_harms: float
    pending_after: float | None
    pending_outcome: Signal | float | str | None
