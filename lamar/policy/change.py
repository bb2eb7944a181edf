"""Change detection: a two-sided CUSUM on the rewards of episodes that injected the lesson.

The reference is the ledger's mean reward with the lesson, fitted on earlier episodes.
When the standardized drift in either direction exceeds `threshold`, the lesson's world
has changed: its evidence restarts from the start of the drifting segment.
"""

from __future__ import annotations


class ChangeDetector:
    """Page's CUSUM in both directions, remembering where each excursion began."""

    __slots__ = ("low", "high", "low_n", "low_sum", "high_n", "high_sum")

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.low = 0.0
        self.high = 0.0
        self.low_n = 0
        self.low_sum = 0.0
        self.high_n = 0
        self.high_sum = 0.0

    def update(self, reward: float, reference: float, sigma: float, drift: float) -> None:
        """Feed one reward of an episode that injected the lesson; ask `fired` afterwards."""
        z = (reward - reference) / sigma
        self.low = max(0.0, self.low - z - drift)
        if self.low > 0.0:
            self.low_n += 1
            self.low_sum += reward
        else:
            self.low_n, self.low_sum = 0, 0.0
        self.high = max(0.0, self.high + z - drift)
        if self.high > 0.0:
            self.high_n += 1
            self.high_sum += reward
        else:
            self.high_n, self.high_sum = 0, 0.0

    def fired(self, threshold: float) -> tuple[int, float] | None:
        """(count, sum) of the post-change segment when an alarm is due, else None."""
        if self.low > threshold:
            return self.low_n, self.low_sum
        if self.high > threshold:
            return self.high_n, self.high_sum
        return None

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}
