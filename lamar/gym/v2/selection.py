"""The second design's selection model and fall detector, frozen for the gym's frontier."""

from __future__ import annotations

import math
from typing import Any

from lamar.policy.record import SlotRecord

_PRIOR_OUT = 2.0  # weight of the old without-lesson mean kept when the arms restart on a fall
# Suspicion: the same CUSUM with a slack of half a 0.4-sd fall and a low level. It decides no
# verdict and restarts nothing; a proven lesson under suspicion is held out at `holdout_doubt`,
# so that its randomized evidence gets the information a fall needs (docs/decisions.md).
SUSPECT_DRIFT = 0.2
SUSPECT_LEVEL = 8.0


class ArmStats(SlotRecord):
    """Discounted weights and reward sums with and without the lesson, and a fall detector.

    The detector is the selection's own, not evidence: a one-sided CUSUM (Page) on the
    rewards of episodes that injected the lesson, against the arm's own discounted mean.
    When the injected reward falls and stays down, both arms restart from the excursion (the
    episodes since the statistic last stood at zero, with and without the lesson), so a
    lesson that stopped working stops being chosen within a few dozen episodes. The
    without-lesson arm keeps its old mean at a weight of two episodes, so that a fall of the
    base rate (which drags both arms down) is corrected by the next few held-out episodes
    instead of making the lesson look harmful. Verdicts never read this: they rest on the
    randomized ledger and its own change detector (see `lamar.policy.change`).
    """

    __slots__ = ("w_in", "s_in", "w_out", "s_out", "tries", "drop", "ex_w_in", "ex_s_in", "ex_w_out", "ex_s_out",
                 "suspect")

    def __init__(self) -> None:
        self.tries = 0  # undiscounted injections since the last restart
        self.w_in = 0.0
        self.s_in = 0.0
        self.w_out = 0.0
        self.s_out = 0.0
        self.drop = 0.0  # the fall detector's statistic, in reward standard deviations
        self.ex_w_in = 0.0  # the current excursion's episodes with and without the lesson
        self.ex_s_in = 0.0
        self.ex_w_out = 0.0
        self.ex_s_out = 0.0
        self.suspect = 0.0  # the suspicion statistic (see SUSPECT_DRIFT), in reward standard deviations

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmStats:
        """As `SlotRecord.from_dict`; a record saved before the fall detector existed starts it at rest."""
        state = cls.__new__(cls)  # every slot is set below
        for name in cls.__slots__:
            setattr(state, name, data[name] if name in data or not name.startswith(("drop", "ex_", "suspect")) else 0.0)
        return state

    def watch(self, reward: float, injected: bool, sigma: float, drift: float, threshold: float,
              warmup: int) -> bool:
        """Feed one episode to the fall detector before `record`; True when it fired and the
        arms restarted from the excursion (this episode included: do not `record` it again)."""
        if injected and self.tries >= 2 * warmup and self.w_in > 0.0:
            reference = self.s_in / self.w_in  # predictable: this episode is not in it yet
            self.drop = max(0.0, self.drop + (reference - reward) / sigma - drift)
            self.suspect = max(0.0, self.suspect + (reference - reward) / sigma - SUSPECT_DRIFT)
            if self.drop == 0.0:
                self.ex_w_in = self.ex_s_in = self.ex_w_out = self.ex_s_out = 0.0
        if self.drop <= 0.0:
            return False
        if injected:
            self.ex_w_in += 1.0
            self.ex_s_in += reward
        else:
            self.ex_w_out += 1.0
            self.ex_s_out += reward
        if self.drop <= threshold:
            return False
        prior = min(self.w_out, _PRIOR_OUT)
        mean_out = self.s_out / self.w_out if self.w_out > 0.0 else 0.0
        self.restart_both(self.ex_w_in, self.ex_s_in, self.ex_w_out + prior, self.ex_s_out + prior * mean_out)
        self.tries = max(self.tries, warmup)  # it was tried: a restart must not make it cold again
        return True

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

    @property
    def suspected(self) -> bool:
        """Whether the injected reward fell enough to watch the lesson's verdict more closely."""
        return self.suspect > SUSPECT_LEVEL

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
        self.drop = self.suspect = 0.0
        self.ex_w_in = self.ex_s_in = self.ex_w_out = self.ex_s_out = 0.0
