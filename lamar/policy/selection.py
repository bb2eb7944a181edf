"""Selection: an optimistic (upper-confidence) estimate of each eligible lesson's lift.

Per lesson, a discounted two-arm model of reward, i.e. ridge regression on the features
(bias, injected) within the lesson's scope: mean reward when injected minus mean reward
when eligible but absent. The discount is applied once per episode the lesson was
eligible in, so a lesson forgets only while it is in play. A lesson that has not yet
been tried `warmup` times (and seen absent once) is cold and scores +inf, so every new
lesson gets a fair first look before its bound may rule it out.
"""

from __future__ import annotations

import math

from lamar.policy.record import SlotRecord


class ArmStats(SlotRecord):
    """Discounted weights and reward sums with and without the lesson."""

    __slots__ = ("w_in", "s_in", "w_out", "s_out", "tries")

    def __init__(self) -> None:
        self.tries = 0  # undiscounted injections since the last restart
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

    def upper(self, sigma: float, explore: float, warmup: int) -> float:
        """The optimistic bound the policy ranks by.

        The width grows with the log of the lesson's (discounted) eligible episodes, as in
        UCB1, so an arm that was unlucky early is retried, ever more rarely, instead of
        being written off after two bad episodes.
        """
        if self.cold(warmup):
            return math.inf
        spread = 1.0 / self.w_in + 1.0 / self.w_out
        log_t = max(1.0, math.log(self.w_in + self.w_out))
        return self.estimate + explore * sigma * math.sqrt(log_t * spread)

    def restart_both(self, w_in: float, s_in: float, w_out: float, s_out: float) -> None:
        """Restart both arms from the same post-change stretch of episodes.

        Keeping the without-lesson arm's whole history while cutting the injected arm to
        the post-change stretch compares a recent arm with an old one: after any fall of the
        base rate every restarted lesson would look harmful.
        """
        self.tries = int(w_in)
        self.w_in, self.s_in = w_in, s_in
        self.w_out, self.s_out = w_out, s_out
