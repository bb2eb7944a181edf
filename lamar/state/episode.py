"""`EpisodeRecord`: one episode as the fold keeps it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class EpisodeRecord:
    """An episode as folded from its event; `reward` is None until reported.

    `number` counts the episodes before it; `outcome_seq` is the event whose outcome counts;
    `sealed` marks an outcome folded into a checkpoint, which can no longer be replaced (its
    reward is inside the lessons' sums). `settled` is "default" or "expired" when the outcome
    is the pending policy's (see `lamar.state.pending`), which a late real report replaces.
    """

    __slots__ = ("id", "context", "eligible", "injected", "held_out", "p", "time", "reward", "signal", "reports",
                 "number", "outcome_seq", "sealed", "settled")

    def __init__(self, data: Mapping[str, Any], when: float) -> None:
        self.id: str = data["id"]
        self.context: dict[str, str] = data["context"]
        self.eligible: list[str] = data["eligible"]
        self.injected: list[str] = data["injected"]
        self.held_out: list[str] = data["held_out"]
        self.p: dict[str, float] = data["p"]
        self.time = when
        self.reward: float | None = None
        self.signal: str | None = None
        self.reports = 0
        self.number = 0
        self.outcome_seq = 0
        self.sealed = False
        self.settled: str | None = None

    def copy(self) -> EpisodeRecord:
        """A copy the caller may change: its lists and mappings are its own, not the fold's."""
        twin = EpisodeRecord.__new__(EpisodeRecord)
        for name in self.__slots__:
            value = getattr(self, name)
            setattr(twin, name, type(value)(value) if isinstance(value, (list, dict)) else value)
        return twin
