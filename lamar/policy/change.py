"""The fall detector: two CUSUMs on the rewards of the episodes that injected a lesson
(docs/decisions.md, "A moving world")."""

from __future__ import annotations

from typing import Any

from lamar.policy.record import SlotRecord

SLACK = 0.25  # kappa: the fall per injected episode, in reward standard deviations, the CUSUM ignores
LEVEL = 16.5  # h: the statistic's level that closes the segment
SLOW_SLACK = 0.05  # the second statistic's slack: it sees falls too small for the first
SLOW_LEVEL = 52.0  # and its level, set so that both together false-alarm as rarely as the first alone
WATCH_AFTER = 50  # injected episodes that form the reference before the statistics move
REFERENCE_DISCOUNT = 0.998  # the reference's memory: about 500 injected episodes


class ChangeDetector(SlotRecord):
    """Two CUSUM statistics on one reference (frozen during the first one's excursion), and the
    excursion of each.

    When the injected rewards fall, it restarts the lesson's selection model and closes its
    evidence segment. The first statistic sees a large fall quickly; the second, with a small
    slack and a high level, sees a small fall that the first would miss for thousands of episodes.
    They are Page CUSUMs on non-randomized rewards, not e-detectors: their false-alarm rate is
    measured by the audit, and a false alarm only ever makes claims weaker (a closed segment claims
    nothing), so no verdict's validity rests on them."""

    __slots__ = ("stat", "watched", "ref_w", "ref_s", "ex_w_in", "ex_s_in", "ex_w_out", "ex_s_out",
                 "slow", "slow_w_in", "slow_s_in", "slow_w_out", "slow_s_out")

    def __init__(self) -> None:
        self.stat = 0.0
        self.watched = 0
        self.ref_w = 0.0
        self.ref_s = 0.0
        self.ex_w_in = 0.0  # the episodes since the statistic last stood at 0, with and without the lesson
        self.ex_s_in = 0.0
        self.ex_w_out = 0.0
        self.ex_s_out = 0.0
        self.slow = 0.0  # the second statistic, and the episodes since it last stood at 0
        self.slow_w_in = 0.0
        self.slow_s_in = 0.0
        self.slow_w_out = 0.0
        self.slow_s_out = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChangeDetector:
        """As saved. A detector saved before the second statistic existed gets it at rest; the
        second design's detector (other statistics) starts afresh."""
        if "stat" not in data:
            return cls()
        return cls.filled([data.get(name, 0.0) for name in cls.__slots__])

    def update(self, reward: float, injected: bool, sigma: float) -> tuple[float, float, float, float] | None:
        """Feed one reported episode in which the lesson was eligible. Returns the excursion
        (w_in, s_in, w_out, s_out) of the statistic that crossed its level with it (the detector
        then starts again, its reference the excursion's injected mean), else None."""
        if injected:
            self.watched += 1
            if self.watched > WATCH_AFTER:
                # predictable: this episode is not in the reference yet
                fall = (self.ref_s / self.ref_w - reward) / sigma
                self.stat = max(0.0, self.stat + fall - SLACK)
                self.slow = max(0.0, self.slow + fall - SLOW_SLACK)
            if self.slow == 0.0:
                if self.slow_w_in or self.slow_w_out:
                    self.slow_w_in = self.slow_s_in = self.slow_w_out = self.slow_s_out = 0.0
            else:
                self.slow_w_in += 1.0
                self.slow_s_in += reward
            if self.stat == 0.0:
                # At rest the reference follows the injected rewards (a slow drift of the base rate);
                # during an excursion it holds the level before it, so a stop is seen against that.
                # An excursion that ended at 0 was noise: its rewards join the reference too (left
                # out, the reference would keep only the good episodes and drift up).
                if self.ex_w_in:
                    keep = REFERENCE_DISCOUNT ** self.ex_w_in
                    self.ref_w = keep * self.ref_w + self.ex_w_in
                    self.ref_s = keep * self.ref_s + self.ex_s_in
                self.ref_w = REFERENCE_DISCOUNT * self.ref_w + 1.0
                self.ref_s = REFERENCE_DISCOUNT * self.ref_s + reward
                if self.ex_w_in or self.ex_w_out:
                    self.ex_w_in = self.ex_s_in = self.ex_w_out = self.ex_s_out = 0.0
                return self._fire() if self.slow > SLOW_LEVEL else None
            self.ex_w_in += 1.0
            self.ex_s_in += reward
        else:
            if self.slow != 0.0:
                self.slow_w_out += 1.0
                self.slow_s_out += reward
            if self.stat == 0.0:
                return None
            self.ex_w_out += 1.0
            self.ex_s_out += reward
        if self.stat <= LEVEL and self.slow <= SLOW_LEVEL:
            return None
        return self._fire()

    def _fire(self) -> tuple[float, float, float, float]:
        """The excursion of the statistic that crossed (the first, if both did); both restart."""
        if self.stat > LEVEL:
            excursion = (self.ex_w_in, self.ex_s_in, self.ex_w_out, self.ex_s_out)
        else:
            excursion = (self.slow_w_in, self.slow_s_in, self.slow_w_out, self.slow_s_out)
        self.stat = self.slow = 0.0
        self.ref_w, self.ref_s = excursion[0], excursion[1]
        self.ex_w_in = self.ex_s_in = self.ex_w_out = self.ex_s_out = 0.0
        self.slow_w_in = self.slow_s_in = self.slow_w_out = self.slow_s_out = 0.0
        return excursion
