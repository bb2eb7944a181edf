"""The evidence ledger: randomized, augmented inverse-propensity scores of one lesson's lift, and
the sums its confidence sequence reads (docs/decisions.md, "What is estimated")."""

from __future__ import annotations

import math
from typing import Any, Self

from lamar.policy.record import SlotRecord
from lamar.policy.verdicts import LAMBDAS

_LEVEL_DISCOUNT = 0.95  # the reward level's memory, in randomized episodes (about 20)
_LOW = tuple(f"low{k}" for k in range(len(LAMBDAS)))
_HIGH = tuple(f"high{k}" for k in range(len(LAMBDAS)))


class Ledger(SlotRecord):
    """Counts, baselines and the confidence sequence's sums since the last restart.

    Only episodes where the lesson was wanted and a coin of known probability p decided whether
    it was injected enter the ledger. Each gives

        psi = (mu1 - mu0) + I * (r - mu1) / p - (1 - I) * (r - mu0) / (1 - p)

    with baselines fitted on *earlier* episodes only (a recent reward level split by the segment's
    lift estimate), so E[psi | past] is the lesson's lift then, whatever the other lessons or the
    base rate did. The weighted score y = p (1 - p) psi is linear in a reward in [-1, 1], so its
    range around its prediction is known before the episode: the bound's sums normalize by it. The
    ledger holds one segment: a restart starts a new one.
    """

    __slots__ = ("n", "n_in", "n_out", "sum_in", "sum_out", "level_w", "level_s", "weight", "total", "a", "b",
                 *(f"low{k}" for k in range(len(LAMBDAS))), *(f"high{k}" for k in range(len(LAMBDAS))))

    def __init__(self) -> None:
        self.n = 0  # randomized episodes
        self.n_in = 0
        self.n_out = 0
        self.sum_in = 0.0
        self.sum_out = 0.0
        self.level_w = 0.0  # discounted count and reward sum of the randomized episodes
        self.level_s = 0.0
        self.weight = 0.0  # sums of w and w psi: the baselines' lift estimate
        self.total = 0.0
        self.a = 0.0  # sum of y / c
        self.b = 0.0  # sum of w / c: the weights g of the target
        # per bet lam of LAMBDAS: sums of log(1 + lam xi) - lam xi and log(1 - lam xi) + lam xi
        for k in range(len(LAMBDAS)):
            setattr(self, f"low{k}", 0.0)
            setattr(self, f"high{k}", 0.0)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """As saved. A ledger of the second design (no bound sums: its bound was another) starts a
        fresh segment that keeps only its reward level: evidence does not carry over to a bound
        it was not collected for."""
        if "a" not in data:
            ledger = cls()
            ledger.level_w, ledger.level_s = float(data.get("level_w", 0.0)), float(data.get("level_s", 0.0))
            return ledger
        return super().from_dict(data)

    def _baselines(self, p: float) -> tuple[float, float]:
        """(lift, mu0) from the episodes before this one: predictable."""
        # Clipped to what rewards in [-1, 1] allow: an early, wild estimate must not feed back.
        lift = min(1.0, max(-1.0, self.total / self.weight)) if self.weight else 0.0
        level = self.level_s / self.level_w if self.level_w else 0.0
        return lift, level - p * lift

    def score(self, reward: float, injected: bool, p: float) -> float:
        """The episode's psi against the baselines of the episodes before it (changes nothing)."""
        lift, mu0 = self._baselines(p)
        if injected:
            return lift + (reward - mu0 - lift) / p
        return lift - (reward - mu0) / (1.0 - p)

    def half_range(self, p: float) -> float:
        """c: the farthest the next weighted score w psi can fall from its prediction w * lift,
        over both arms and every reward in [-1, 1] (known before the episode)."""
        lift, mu0 = self._baselines(p)
        mu1 = mu0 + lift
        # injected: y - w lift = (1 - p)(r - mu1); held out: y - w lift = -p (r - mu0)
        return max((1.0 - p) * (1.0 + mu1), (1.0 - p) * (1.0 - mu1), p * (1.0 - mu0), p * (1.0 + mu0), 1e-9)

    def record(self, reward: float, injected: bool, p: float) -> float:
        """Add one randomized episode; return its psi."""
        lift = min(1.0, max(-1.0, self.total / self.weight)) if self.weight else 0.0
        c = self.half_range(p)
        psi = self.score(reward, injected, p)
        w = p * (1.0 - p)
        xi = w * (psi - lift) / c
        self.a += w * psi / c
        self.b += w / c
        for k, lam in enumerate(LAMBDAS):
            bet = lam * xi
            setattr(self, _LOW[k], getattr(self, _LOW[k]) + math.log1p(bet) - bet)
            setattr(self, _HIGH[k], getattr(self, _HIGH[k]) + math.log1p(-bet) + bet)
        if injected:
            self.n_in += 1
            self.sum_in += reward
        else:
            self.n_out += 1
            self.sum_out += reward
        self.level_w = _LEVEL_DISCOUNT * self.level_w + 1.0
        self.level_s = _LEVEL_DISCOUNT * self.level_s + reward
        self.n += 1
        self.weight += w
        self.total += w * psi
        return psi

    @property
    def penalties(self) -> tuple[list[float], list[float]]:
        """The bet-by-bet sums the bound reads: (low, high), one per lam of LAMBDAS."""
        return [getattr(self, name) for name in _LOW], [getattr(self, name) for name in _HIGH]

    @property
    def mean(self) -> float:
        """The estimated lift: the weighted average of psi with the bound's weights g = w / c."""
        return self.a / self.b if self.b else 0.0
