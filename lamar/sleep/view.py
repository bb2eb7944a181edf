"""`SleepView`: all that sleep and apply read of the folded state, and their one way to write."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from lamar.experience import Experience
    from lamar.policy.config import Policy
    from lamar.policy.lesson import LessonState
    from lamar.policy.verdicts import Evidence
    from lamar.state.episode import EpisodeRecord
    from lamar.store.base import Event, Store


class SleepView(Protocol):
    """The engine's folded state as sleep sees it (`lamar.state.view.StateView` is the engine's).

    A view answers from one fold: `sync` brings it to the log's end; `append` writes events,
    which the next `sync` folds.
    """

    policy: Policy
    store: Store

    @property
    def position(self) -> int:
        """The seq of the last event folded: a report made now is made at this point of the log."""

    def sync(self) -> None: ...

    def experiences(self) -> list[Experience]:
        """Every lesson, in the order it was added."""

    def get(self, exp_id: str) -> Experience:
        """The lesson; raises UnknownExperience when the store does not hold it."""

    def evidence(self, exp_id: str) -> Evidence: ...

    def lesson(self, exp_id: str) -> LessonState | None:
        """The lesson's folded state, or None when the store does not hold it."""

    def episodes(self) -> Mapping[str, EpisodeRecord]:
        """The episodes held (not compacted), by id, in log order."""

    def compacted_episodes(self) -> int: ...

    def applied(self, proposal_id: str) -> bool: ...

    def applied_ids(self) -> frozenset[str]:
        """Every proposal id the store holds as applied (rejection records among them: lamar.sleep.rejected)."""

    def noes(self) -> Mapping[str, Mapping[str, object]]:
        """What a person saw of each rejection in force, by record id (`lamar.state.snapshot.note_no`)."""

    def active_count(self) -> int:
        """Lessons not retired (the count the verdicts' multiplicity is taken over)."""

    def append(self, events: Iterable[Event]) -> list[Event]: ...

    def released(self) -> AbstractContextManager[None]:
        """Around a model call: the engine's lock let go, so that recall and report go on while
        the model answers; the view is synced after."""


__all__ = ["SleepView"]
