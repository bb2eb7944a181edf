"""A close leaves a saved state that covers what the engine folded and wrote, in both PostgreSQL modes, so the
next process resumes from it and folds (almost) nothing: counted as the events the next open folds."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from lamar import Experience, Lamar, Scope, Signal
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.fixture(params=["off", "on"])
def url(request: pytest.FixtureRequest, postgres_url: str) -> Iterator[str]:
    """A fresh namespace in the log mode, then the fold mode."""
    namespace = unique_namespace("pgstate-close")
    yield namespace_url(postgres_url, namespace, lamar_fold=request.param)
    drop_namespaces(postgres_url, namespace)


def work(url: str, episodes: int, seed: int, then: Callable[[Lamar], object] = lambda lam: None) -> None:
    """One process's engine: `episodes` recalls and reports, then `then`, then a normal close."""
    with Lamar(url, k=1, seed=seed) as lam:
        for _ in range(episodes):
            lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
        then(lam)


def next_open(url: str, folds: list[int]) -> int:
    """The events a new process's engine folds for its first `stats()`."""
    folds[0] = 0
    with Lamar(url, k=1, seed=9) as lam:
        lam.stats()
        return folds[0]


@pytest.fixture
def saved(url: str) -> str:
    """A namespace of 20 lessons and 300 episodes whose state a `stats()` saved (past 512 events)."""
    with Lamar(url, k=1, seed=1) as lam:
        for i in range(20):
            lam.add(Experience(f"step {i} fails", f"do {i}", scope=Scope(task="t")))
    work(url, 300, 1, then=lambda lam: lam.stats())
    return url


def test_a_writer_that_folded_then_wrote_leaves_its_writes_in_the_state(saved: str, counted_folds: list[int]) -> None:
    # The fold mode folds the log only for a call that needs it: the episodes written after that
    # call were not folded at close, and the next process folded all 368 of their events.
    with Lamar(saved, k=1, seed=2) as lam:
        lam.stats()
        for _ in range(184):
            lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert next_open(saved, counted_folds) == 0


def test_a_reader_that_folded_a_tail_leaves_it_in_the_state(saved: str, counted_folds: list[int]) -> None:
    work(saved, 184, 2)  # a writer that never folds in the fold mode, and saves at close in the log mode
    first = next_open(saved, counted_folds)
    again = next_open(saved, counted_folds)
    # The fold mode: the first reader folds the writer's 368 events; less than a save's due, it left
    # no state at close, and each reader after it folded them again.
    assert (first, again) in ((0, 0), (368, 0))
