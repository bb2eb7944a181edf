"""Selection: an optimistic (upper-confidence) estimate of each eligible lesson's lift.

Per lesson, a discounted two-arm model of reward, i.e. ridge regression on the features
(bias, injected) within the lesson's scope: mean reward when injected minus mean reward
when eligible but absent. The discount is applied once per episode the lesson was
eligible in, so a lesson forgets only while it is in play. A lesson that has not yet
been seen both ways is cold and scores +inf, so it is tried.
"""

from __future__ import annotations

import math


class ArmStats:
    """Discounted weights and reward sums with and without the lesson."""

    __slots__ = ("w_in", "s_in", "w_out", "s_out")

    def __init__(self) -> None:
        self.w_in = 0.0
        self.s_in = 0.0
        self.w_out = 0.0
        self.s_out = 0.0

    def record(self, reward: float, injected: bool, discount: float) -> None:
        self.w_in *= discount
        self.s_in *= discount
        self.w_out *= discount
        self.s_out *= discount
        if injected:
            self.w_in += 1.0
            self.s_in += reward
        else:
            self.w_out += 1.0
            self.s_out += reward

    @property
    def cold(self) -> bool:
        return self.w_in < 1.0 or self.w_out < 1.0

    @property
    def estimate(self) -> float:
        """Estimated lift (0 while cold)."""
        if self.cold:
            return 0.0
        return self.s_in / self.w_in - self.s_out / self.w_out

    def upper(self, sigma: float, explore: float) -> float:
        """The optimistic bound the policy ranks by."""
        if self.cold:
            return math.inf
        return self.estimate + explore * sigma * math.sqrt(1.0 / self.w_in + 1.0 / self.w_out)

    def restart_injected(self, weight: float, total: float) -> None:
        """Forget the injected arm's past, keeping only the post-change segment.

        The without-lesson arm measures the world without this lesson, which a change in
        the lesson's own effect does not touch, so it is kept.
        """
        self.w_in = weight
        self.s_in = total

    def merge(self, other: ArmStats) -> None:
        for name in self.__slots__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}
