"""The fall detector: a CUSUM on the rewards of the episodes that injected a lesson
(docs/decisions.md, "A moving world")."""

from __future__ import annotations

from typing import Any

from lamar.policy.record import SlotRecord

SLACK = 0.25  # kappa: the fall per injected episode, in reward standard deviations, the CUSUM ignores
LEVEL = 16.0  # h: the statistic's level that closes the segment
WATCH_AFTER = 50  # injected episodes that form the reference before the statistic moves
REFERENCE_DISCOUNT = 0.998  # the reference's memory: about 500 injected episodes


class ChangeDetector(SlotRecord):
    """The CUSUM statistic, its reference (frozen during an excursion), and the excursion itself.

    When the injected rewards fall, it restarts the lesson's selection model and closes its
    evidence segment. It is a Page CUSUM on non-randomized rewards, not an e-detector: its
    false-alarm rate is measured by the audit, and a false alarm only ever makes claims weaker (a
    closed segment claims nothing), so no verdict's validity rests on it."""

    __slots__ = ("stat", "watched", "ref_w", "ref_s", "ex_w_in", "ex_s_in", "ex_w_out", "ex_s_out")

    def __init__(self) -> None:
        self.stat = 0.0
        self.watched = 0
        self.ref_w = 0.0
        self.ref_s = 0.0
        self.ex_w_in = 0.0  # the episodes since the statistic last stood at 0, with and without the lesson
        self.ex_s_in = 0.0
        self.ex_w_out = 0.0
        self.ex_s_out = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChangeDetector:
        """As saved; the second design's detector (other statistics) starts afresh."""
        return super().from_dict(data) if "stat" in data else cls()

    def update(self, reward: float, injected: bool, sigma: float) -> tuple[float, float, float, float] | None:
        """Feed one reported episode in which the lesson was eligible. Returns the excursion
        (w_in, s_in, w_out, s_out) when the statistic crossed `LEVEL` with it (the detector then
        starts again, its reference the excursion's injected mean), else None."""
        if injected:
            self.watched += 1
            if self.watched > WATCH_AFTER:
                reference = self.ref_s / self.ref_w  # predictable: this episode is not in it yet
                self.stat = max(0.0, self.stat + (reference - reward) / sigma - SLACK)
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
                return None
        if self.stat == 0.0:
            return None
        if injected:
            self.ex_w_in += 1.0
            self.ex_s_in += reward
        else:
            self.ex_w_out += 1.0
            self.ex_s_out += reward
        if self.stat <= LEVEL:
            return None
        excursion = (self.ex_w_in, self.ex_s_in, self.ex_w_out, self.ex_s_out)
        self.stat = 0.0
        self.ref_w, self.ref_s = excursion[0], excursion[1]
        self.ex_w_in = self.ex_s_in = self.ex_w_out = self.ex_s_out = 0.0
        return excursion
