"""The evidence ledger: randomized, augmented inverse-propensity scores of one lesson's lift.

Only episodes where the lesson was wanted and then kept or held out by a coin of known
probability p enter the ledger. Each gives

    psi = (mu1 - mu0) + I * (r - mu1) / p - (1 - I) * (r - mu0) / (1 - p)

with mu1, mu0 the mean rewards with and without the lesson fitted on *earlier* ledger
episodes only, so psi is an unbiased, predictable-baseline score of the lift whatever the
other injected lessons did. Scores are averaged with the predictable weight w = p (1 - p),
the inverse of psi's variance under the coin: an episode held out at q = 0.05 carries a
psi twenty times its reward, and unweighted it would swamp the bound it is meant to
tighten. The ledger is never discounted; a change detector restarts it.
"""

from __future__ import annotations

from lamar.policy.record import SlotRecord


class Ledger(SlotRecord):
    """Weighted running sums of psi since the last restart."""

    __slots__ = ("n", "weight", "total", "w2", "w2_psi", "w2_psi2",
                 "n_in", "n_out", "sum_in", "sum_out")

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
        """The weighted mean of psi: the estimated lift."""
        return self.total / self.weight if self.weight else 0.0

    @property
    def variance_sum(self) -> float:
        """Sum of w^2 (psi - mean)^2: the empirical variance of the weighted sum."""
        m = self.mean
        return max(self.w2_psi2 - 2.0 * m * self.w2_psi + m * m * self.w2, 1e-12)
