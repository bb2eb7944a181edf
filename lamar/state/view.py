"""`EngineView`: the engine's folded state behind the narrow `SleepView` that sleep reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lamar.engine import Lamar
    from lamar.experience import Experience
    from lamar.policy.lesson import LessonState
    from lamar.policy.verdicts import Evidence
    from lamar.state.episode import EpisodeRecord
    from lamar.store.base import Event


class EngineView:
    """One engine's state for one sleep or apply, called under the engine's lock.

    The lessons and each lesson's evidence are read once between two changes of the fold:
    proposing reads them from several places (duplicates, narrowing, every mined lesson), and in
    the fold mode each read of the engine is a query. `sync` and `append` forget them.
    """

    def __init__(self, lam: Lamar) -> None:
        self._lam = lam
        self.policy = lam.policy
        self.store = lam.store
        self._evidence: dict[str, Evidence] = {}
        self._experiences: list[Experience] | None = None

    @property
    def position(self) -> int:
        return self._lam._seq

    def sync(self) -> None:
        self._lam._sync()
        self._forget()

    def _forget(self) -> None:
        self._evidence.clear()
        self._experiences = None

    def experiences(self) -> list[Experience]:
        if self._experiences is None:
            self._experiences = self._lam.experiences()
        return list(self._experiences)  # a copy: a caller may change its list, never this one

    def get(self, exp_id: str) -> Experience:
        return self._lam.get(exp_id)

    def evidence(self, exp_id: str) -> Evidence:
        found = self._evidence.get(exp_id)
        if found is None:
            found = self._evidence[exp_id] = self._lam.evidence(exp_id)
        return found

    def lesson(self, exp_id: str) -> LessonState | None:
        return self._lam._lessons.get(exp_id)

    def episodes(self) -> Mapping[str, EpisodeRecord]:
        return self._lam._episodes

    def compacted_episodes(self) -> int:
        return int(self._lam._compacted["episodes"])

    def applied(self, proposal_id: str) -> bool:
        return proposal_id in self._lam._applied

    def active_count(self) -> int:
        return self._lam._active_count()

    def append(self, events: Iterable[Event]) -> list[Event]:
        stored = self._lam._append(list(events))
        self._forget()
        return stored


__all__ = ["EngineView"]
