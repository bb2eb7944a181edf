"""Selection: Thompson sampling on each lesson's two-arm estimate of its lift."""

from __future__ import annotations

import math
from typing import Any

from lamar.policy.record import SlotRecord


class ArmStats(SlotRecord):
    """Discounted weights and reward sums with and without the lesson, and its tries.

    A two-arm model of reward within the lesson's scope: the mean reward when injected minus the
    mean when eligible but absent. The discount is applied once per episode the lesson was
    eligible in, so a lesson forgets only while it is in play. A lesson not yet tried `warmup`
    times (or never seen absent) is cold and sampled at +inf, so every new lesson gets its first
    looks. Verdicts never read this model: they rest on the randomized ledger."""

    __slots__ = ("w_in", "s_in", "w_out", "s_out", "tries")

    def __init__(self) -> None:
        self.w_in = 0.0
        self.s_in = 0.0
        self.w_out = 0.0
        self.s_out = 0.0
        self.tries = 0  # undiscounted injections since the last restart

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmStats:
        """As saved; the second design's record (with its detectors' slots) keeps its arms."""
        return cls.filled([data[name] for name in cls.__slots__])

    def record(self, reward: float, injected: bool, discount: float) -> None:
        if discount < 1.0:
            self.w_in *= discount
            self.s_in *= discount
            self.w_out *= discount
            self.s_out *= discount
        if injected:
            self.tries += 1
            self.w_in += 1.0
            self.s_in += reward
        else:
            self.w_out += 1.0
            self.s_out += reward

    def cold(self, warmup: int) -> bool:
        return self.tries < warmup or self.w_out < 1.0 or self.w_in <= 0.0

    @property
    def estimate(self) -> float:
        """Estimated lift (0 until seen both ways)."""
        if self.w_in <= 0.0 or self.w_out <= 0.0:
            return 0.0
        return self.s_in / self.w_in - self.s_out / self.w_out

    @property
    def spread(self) -> float:
        """1 / n_in + 1 / n_out: the estimate's variance in units of the reward's."""
        return 1.0 / self.w_in + 1.0 / self.w_out

    def sample(self, sigma: float, explore: float, warmup: int, z: float) -> float:
        """Thompson's draw of the lift, `z` a standard normal draw; +inf while cold."""
        if self.cold(warmup):
            return math.inf
        return self.estimate + explore * sigma * math.sqrt(self.spread) * z

    def restart_both(self, w_in: float, s_in: float, w_out: float, s_out: float) -> None:
        """Restart both arms from the same post-change stretch of episodes (the fall detector's
        excursion): a recent injected arm against an old absent one would make every lesson look
        harmful after a fall of the base rate. It was tried: a restart does not make it cold."""
        self.tries = max(int(w_in), self.tries)
        self.w_in, self.s_in = w_in, s_in
        self.w_out, self.s_out = w_out, s_out
