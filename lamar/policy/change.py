"""Change detection: a one-sided CUSUM on the rewards of episodes that injected the lesson.

The reference is the ledger's mean reward with the lesson, fitted on earlier episodes.
When the standardized fall exceeds `threshold`, the lesson has stopped working as it did:
its evidence restarts from the start of the falling segment. Rises are not alarms: a
lesson's injected reward rises whenever the policy stops pairing it with worse lessons,
and a lesson that starts to help is found by exploration, not by this detector.
"""

from __future__ import annotations

from lamar.policy.record import SlotRecord


class ChangeDetector(SlotRecord):
    """Page's CUSUM for a drop in mean, remembering where the excursion began."""

    __slots__ = ("score", "segment_n", "segment_sum")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.score = 0.0
        self.segment_n = 0
        self.segment_sum = 0.0

    def update(self, reward: float, reference: float, sigma: float, drift: float) -> None:
        """Feed one reward of an episode that injected the lesson; ask `fired` afterwards."""
        self.score = max(0.0, self.score + (reference - reward) / sigma - drift)
        if self.score > 0.0:
            self.segment_n += 1
            self.segment_sum += reward
        else:
            self.segment_n, self.segment_sum = 0, 0.0

    def fired(self, threshold: float) -> tuple[int, float] | None:
        """(count, reward sum) of the post-change segment when an alarm is due, else None."""
        if self.score > threshold:
            return self.segment_n, self.segment_sum
        return None
