"""The evidence ledger: randomized, augmented inverse-propensity scores of one lesson's lift.

Only episodes where the lesson was wanted and then kept or held out by a coin of known
probability p enter the ledger. Each gives

    psi = (mu1 - mu0) + I * (r - mu1) / p - (1 - I) * (r - mu0) / (1 - p)

with mu1, mu0 the mean rewards with and without the lesson fitted on *earlier* ledger
episodes only, so psi is an unbiased, predictable-baseline score of the lift whatever the
other injected lessons did. The ledger is never discounted; a change detector restarts it.
"""

from __future__ import annotations

import math


class Ledger:
    """Running sums of psi since the last restart."""

    __slots__ = ("n", "total", "total_sq", "n_in", "n_out", "sum_in", "sum_out")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.total_sq = 0.0
        self.n_in = 0
        self.n_out = 0
        self.sum_in = 0.0
        self.sum_out = 0.0

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

    def record(self, reward: float, injected: bool, p: float) -> float:
        """Add one randomized episode; return its psi."""
        mu1, mu0 = self.mu_in, self.mu_out
        if injected:
            psi = (mu1 - mu0) + (reward - mu1) / p
            self.n_in += 1
            self.sum_in += reward
        else:
            psi = (mu1 - mu0) - (reward - mu0) / (1.0 - p)
            self.n_out += 1
            self.sum_out += reward
        self.n += 1
        self.total += psi
        self.total_sq += psi * psi
        return psi

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0

    @property
    def variance(self) -> float:
        if self.n < 2:
            return math.inf
        return max(self.total_sq / self.n - self.mean**2, 1e-9)

    def merge(self, other: Ledger) -> None:
        """Fold another lesson's ledger into this one (duplicates share one effect)."""
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}
