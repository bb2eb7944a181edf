"""Sleep reads the folded state through `SleepView` only: a small fake of it, with no engine and
no store behind it, is enough to propose and to apply."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pytest

from lamar import Experience, Scope
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.policy.verdicts import Evidence
from lamar.sleep import apply_report, run_sleep
from lamar.sleep.view import SleepView
from lamar.state.episode import EpisodeRecord
from lamar.store import Event, MemoryStore, Store


class FakeView:
    """Lessons held in a dict; writes kept in a list (folded only as far as `applied`)."""

    def __init__(self, lessons: Iterable[Experience]) -> None:
        self.policy = Policy()
        self.store: Store = MemoryStore()
        self.states = {e.id: LessonState(e) for e in lessons}
        self.written: list[Event] = []
        self.synced = 0

    @property
    def position(self) -> int:
        return len(self.written)

    def sync(self) -> None:
        self.synced += 1

    def experiences(self) -> list[Experience]:
        return [s.experience for s in self.states.values()]

    def get(self, exp_id: str) -> Experience:
        return self.states[exp_id].experience

    def evidence(self, exp_id: str) -> Evidence:
        return self.states[exp_id].evidence(self.policy, self.active_count())

    def lesson(self, exp_id: str) -> LessonState | None:
        return self.states.get(exp_id)

    def episodes(self) -> Mapping[str, EpisodeRecord]:
        return {}

    def compacted_episodes(self) -> int:
        return 0

    def applied(self, proposal_id: str) -> bool:
        return proposal_id in self.applied_ids()

    def applied_ids(self) -> frozenset[str]:
        return frozenset(e.data["proposal"] for e in self.written if e.kind == "applied")

    def noes(self) -> Mapping[str, Mapping[str, object]]:
        return {}

    def active_count(self) -> int:
        return len(self.states)

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        yield

    def append(self, events: Iterable[Event]) -> list[Event]:
        events = list(events)
        self.written += events
        return events


def _duplicates() -> FakeView:
    scope = Scope(project="app")
    return FakeView([
        Experience("the xcode build fails", "clear derived data and rebuild", scope=scope).with_identity(),
        Experience("the xcode build fails", "clear derived data, then rebuild", scope=scope).with_identity(),
        Experience("the tests are flaky", "rerun the failed test alone", scope=scope).with_identity(),
    ])


def test_a_fake_view_satisfies_the_protocol_sleep_is_typed_against() -> None:
    view: SleepView = _duplicates()  # pyproject.toml has mypy check this file: the fake must fit
    assert view.position == 0


def test_sleep_proposes_a_merge_from_a_fake_view_and_apply_writes_it_through_the_view() -> None:
    view = _duplicates()
    first, second, other = (e.id for e in view.experiences())
    report = run_sleep(view)
    (merge,) = report.of_kind("merge")
    assert set(merge.experience_ids) == {first, second} and other not in merge.experience_ids
    assert report.summary["lessons"] == 3 and report.made_at == 0
    result = apply_report(view, report, only=[merge.id])
    assert result.applied == [merge.id]
    assert [e.kind for e in view.written] == ["merge", "applied"] and view.synced >= 2
    again = apply_report(view, report, only=[merge.id])
    assert again.applied == [] and again.skipped == [(merge.id, "already applied")]


def test_the_state_view_works_out_each_evidence_once_until_the_fold_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar import Lamar
    from lamar.state.view import StateView
    from tests.state.seam import folded

    lam = Lamar(":memory:", seed=1)
    exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="app")))
    computed: list[str] = []
    real = LessonState.evidence

    def counted(self: LessonState, policy: Any, n: int) -> Any:
        computed.append(self.experience.id)
        return real(self, policy, n)

    monkeypatch.setattr(LessonState, "evidence", counted)
    view = StateView(folded(lam))
    first = view.experiences()
    first.clear()  # a caller's list is its own
    assert [e.id for e in view.experiences()] == [exp_id]
    assert view.evidence(exp_id) == view.evidence(exp_id) and computed == [exp_id]
    view.sync()
    view.evidence(exp_id)
    assert computed == [exp_id, exp_id]
