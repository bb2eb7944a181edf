"""`StateView`: the folded state behind the narrow `SleepView` that sleep and apply read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lamar.experience import Experience
    from lamar.policy.lesson import LessonState
    from lamar.policy.verdicts import Evidence
    from lamar.state.episode import EpisodeRecord
    from lamar.state.follower import Follower
    from lamar.store.base import Event


class StateView:
    """A follower's fold cache for one sleep or apply, called under the engine's lock (let go by `released`).

    Every read comes from the one cache, in either mode: the lessons, their statuses and their
    evidence describe the same point of the log. Each lesson's evidence is worked out once
    between two changes of the fold (duplicates, narrowing and every mined lesson read it);
    `sync` and `append` forget what was read.
    """

    def __init__(self, log: Follower, lock: Any = None, *, whole: bool = False) -> None:
        self._log = log
        if whole:
            log.whole()
        self._lock = lock  # the engine's, held by the caller; None: nothing to let go
        self.policy = log.policy
        self.store = log.store
        self._evidence: dict[str, Evidence] = {}
        self._experiences: list[Experience] | None = None

    @property
    def position(self) -> int:
        return self._log.cache.seq

    def sync(self) -> None:
        self._log.sync()
        self._forget()

    def _forget(self) -> None:
        self._evidence.clear()
        self._experiences = None

    def experiences(self) -> list[Experience]:
        if self._experiences is None:
            self._experiences = [state.experience for state in self._log.cache.lessons.values()]
        return list(self._experiences)  # a copy: a caller may change its list, never this one

    def get(self, exp_id: str) -> Experience:
        return self._log.lesson(exp_id).experience

    def evidence(self, exp_id: str) -> Evidence:
        found = self._evidence.get(exp_id)
        if found is None:
            state = self._log.lesson(exp_id)
            found = self._evidence[exp_id] = state.evidence(self.policy, self._log.cache.n_active)
        return found

    def lesson(self, exp_id: str) -> LessonState | None:
        return self._log.cache.lessons.get(exp_id)

    def episodes(self) -> Mapping[str, EpisodeRecord]:
        # A fold resumed from a saved state holds every lesson but only some episodes: the whole log
        # is folded the first time they are all asked for (a compaction), not for a retirement.
        if self._log.cache.partial:
            self._log.whole()
            self._forget()
        return self._log.cache.episodes

    def compacted_episodes(self) -> int:
        return int(self._log.cache.compacted["episodes"])

    def applied(self, proposal_id: str) -> bool:
        return proposal_id in self._log.cache.applied

    def applied_ids(self) -> frozenset[str]:
        return frozenset(self._log.cache.applied)

    def noes(self) -> Mapping[str, Mapping[str, object]]:
        return self._log.cache.noes

    def active_count(self) -> int:
        return self._log.cache.n_active

    def append(self, events: Iterable[Event]) -> list[Event]:
        stored = self._log.append(list(events))
        self._forget()
        return stored

    @contextmanager
    def released(self) -> Iterator[None]:
        """The engine's lock let go while a model answers, which takes minutes: a server's recalls
        and reports would wait for it. What they wrote meanwhile is folded after."""
        if self._lock is None:
            yield
            return
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self.sync()


__all__ = ["StateView"]
