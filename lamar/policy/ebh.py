"""Verdicts of record by false-discovery control (e-BH) across lessons, beside the family-wise
anytime bound `evidence()` keeps (docs/decisions.md, "Verdicts of record by e-BH")."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from lamar.policy.config import Policy
from lamar.policy.ledger import Ledger
from lamar.policy.verdicts import LAMBDAS, Verdict

_CAP = 700.0  # log-capital beyond which exp overflows: such an e-value is decided anyway


def e_values(ledger: Ledger) -> tuple[float, float]:
    """(helps, harms): the segment's capital against "the lift is <= 0" and against ">= 0".

    Each capital (the lesson's own, averaged over the bets of `LAMBDAS`) is an e-value, valid
    whenever it is read.

    With A the sum of y / c and L the bet's log-penalty sum, exp(lam (A - sum g theta) + L) is a
    nonnegative supermartingale for each bet (`betting_bounds`); when the weighted lift is <= 0,
    exp(lam A + L) is at most it, so its mean over the bets has expectation <= 1 at any stopping time.

    >>> e_values(Ledger())
    (1.0, 1.0)
    """
    low, high = ledger.penalties
    helps = sum(math.exp(min(lam * ledger.a + pen, _CAP)) for lam, pen in zip(LAMBDAS, low, strict=True))
    harms = sum(math.exp(min(-lam * ledger.a + pen, _CAP)) for lam, pen in zip(LAMBDAS, high, strict=True))
    return helps / len(LAMBDAS), harms / len(LAMBDAS)


def ebh(evalues: Mapping[str, float], alpha: float) -> set[str]:
    """The e-BH discoveries: the R largest e-values, R the largest r with the r-th largest >= m / (alpha r).

    e-BH (Wang and Ramdas 2022) turns the e-values of m lessons into a set of helps (or harms) with
    a false-discovery rate at most alpha, whatever their dependence.

    >>> sorted(ebh({"a": 90.0, "b": 45.0, "c": 2.0, "d": 0.5}, 0.1))
    ['a', 'b']
    >>> ebh({"a": 30.0, "b": 1.0}, 0.05)
    set()
    """
    m = len(evalues)
    ranked = sorted(evalues.items(), key=lambda item: -item[1])
    found = 0
    for r, (_, e) in enumerate(ranked, start=1):
        if e >= m / (alpha * r):
            found = r
    return {name for name, _ in ranked[:found]}


def verdicts_of_record(ledgers: Mapping[str, Ledger] | Iterable[tuple[str, Ledger]],
                       policy: Policy) -> dict[str, Verdict]:
    """Each lesson's verdict of record at one look: helps among the e-BH discoveries at
    `alpha_helps` over all the lessons given, harms among those at `alpha_harms`, unknown otherwise."""
    items = list(ledgers.items()) if isinstance(ledgers, Mapping) else list(ledgers)
    values = {name: e_values(ledger) for name, ledger in items}
    helps = ebh({name: e[0] for name, e in values.items()}, policy.alpha_helps)
    harms = ebh({name: e[1] for name, e in values.items()}, policy.alpha_harms)
    return {name: Verdict.HELPS if name in helps and name not in harms else
            Verdict.HARMS if name in harms and name not in helps else Verdict.UNKNOWN for name in values}


__all__ = ["e_values", "ebh", "verdicts_of_record"]
