"""The second design's evidence ledger (AIPW scores), frozen for the gym's frontier."""

from __future__ import annotations

from typing import Any, Self

from lamar.policy.record import SlotRecord

_LEVEL_DISCOUNT = 0.95  # the reward level's memory, in randomized episodes (about 20)


class Ledger(SlotRecord):
    """Weighted running sums of psi since the last restart."""

    __slots__ = ("n", "weight", "total", "w2", "w2_psi", "w2_psi2",
                 "n_in", "n_out", "sum_in", "sum_out", "level_w", "level_s")

    def __init__(self) -> None:
        self.n = 0  # randomized episodes
        self.weight = 0.0  # sum of w
        self.total = 0.0  # sum of w * psi
        self.w2 = 0.0  # sums of w^2, w^2 psi, w^2 psi^2: the variance process
        self.w2_psi = 0.0
        self.w2_psi2 = 0.0
        self.n_in = 0
        self.n_out = 0
        self.sum_in = 0.0
        self.sum_out = 0.0
        self.level_w = 0.0  # discounted count and reward sum of the randomized episodes
        self.level_s = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """As saved; a ledger saved before the reward level existed starts its level afresh."""
        return super().from_dict({"level_w": 0.0, "level_s": 0.0, **data})

    @property
    def mu_in(self) -> float:
        """Mean reward of randomized episodes with the lesson (falls back to without, then 0)."""
        if self.n_in:
            return self.sum_in / self.n_in
        return self.sum_out / self.n_out if self.n_out else 0.0

    @property
    def mu_out(self) -> float:
        if self.n_out:
            return self.sum_out / self.n_out
        return self.sum_in / self.n_in if self.n_in else 0.0

    def score(self, reward: float, injected: bool, p: float) -> float:
        """The episode's psi against the baselines of the episodes before it (changes nothing)."""
        # Clipped to what rewards in [-1, 1] allow: an early, wild estimate must not feed
        # back into the baselines (any predictable baseline keeps psi unbiased; a sane one
        # keeps its variance, which the bound estimates, from exploding at small samples).
        lift = min(1.0, max(-1.0, self.total / self.weight)) if self.weight else 0.0
        level = self.level_s / self.level_w if self.level_w else 0.0
        mu0 = level - p * lift
        if injected:
            return lift + (reward - mu0 - lift) / p
        return lift - (reward - mu0) / (1.0 - p)

    def span(self, p: float) -> tuple[float, float]:
        """The lowest and highest weighted score w psi the next episode can give (any arm, any reward)."""
        w = p * (1.0 - p)
        scores = [w * self.score(r, arm, p) for r in (-1.0, 1.0) for arm in (True, False)]
        return min(scores), max(scores)

    def record(self, reward: float, injected: bool, p: float) -> float:
        """Add one randomized episode; return its psi."""
        psi = self.score(reward, injected, p)
        if injected:
            self.n_in += 1
            self.sum_in += reward
        else:
            self.n_out += 1
            self.sum_out += reward
        self.level_w = _LEVEL_DISCOUNT * self.level_w + 1.0
        self.level_s = _LEVEL_DISCOUNT * self.level_s + reward
        w = p * (1.0 - p)
        self.n += 1
        self.weight += w
        self.total += w * psi
        self.w2 += w * w
        self.w2_psi += w * w * psi
        self.w2_psi2 += w * w * psi * psi
        return psi

    @property
    def mean(self) -> float:
        """The weighted mean of psi: the estimated (weighted average) lift of the segment."""
        return self.total / self.weight if self.weight else 0.0

    @property
    def variance_sum(self) -> float:
        """Sum of w^2 (psi - mean)^2: the empirical variance of the weighted sum."""
        m = self.mean
        return max(self.w2_psi2 - 2.0 * m * self.w2_psi + m * m * self.w2, 1e-12)
