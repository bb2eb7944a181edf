"""A fold-mode checkpoint builds its snapshot before it takes the namespace's write lock: a writer on its own
connections writes in between, and what it wrote stays after the snapshot, or (a replacement, which the snapshot
would seal) has the snapshot built again under the lock. Either way the log folds as the checkpointer folded it."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope
from tests.state.seam import folded
from tests.store.held_lock import watch_exclusive


@pytest.fixture
def reported(fold_url: str) -> list[str]:
    """6 lessons and 200 reported episodes, whose state a `stats()` saved; the episodes' ids."""
    ids = []
    with Lamar(fold_url, k=2, seed=1) as lam:
        for i in range(6):
            lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project=f"p{i % 2}"), id=f"L{i}"))
        rng = random.Random(1)
        for _ in range(200):
            ids.append(lam.recall({"project": f"p{rng.randrange(2)}"}).episode_id)
            lam.report(ids[-1], rng.choice([1.0, -1.0]))
        lam.stats()
    return ids


def checkpoint_with(url: str, monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], None]) -> tuple[Lamar, int]:
    """A new engine's checkpoint, `meanwhile` run (by another engine) just before it takes the lock; the
    engine and the snapshots it built under the lock."""
    snapshot_of, built = sys.modules["lamar.state.snapshot"].snapshot_of, [0]
    held = watch_exclusive(monkeypatch, meanwhile)  # once: the writer's replacement takes the lock too

    def counted(*args: Any, **kwargs: Any) -> Any:
        built[0] += held[0]
        return snapshot_of(*args, **kwargs)

    for module in [m for name, m in sys.modules.items() if name.startswith("lamar.state.")]:
        if getattr(module, "snapshot_of", None) is snapshot_of:
            monkeypatch.setattr(module, "snapshot_of", counted)
    checkpointer = Lamar(url, k=2, seed=1)
    assert checkpointer.checkpoint() is True
    monkeypatch.undo()
    return checkpointer, built[0]


def folds_alike(checkpointer: Lamar, url: str) -> None:
    """The checkpointer's fold is a whole fold of the log as it now stands (the snapshot, then the rest)."""
    fresh = Lamar(url, k=2, seed=1)
    folded(fresh).refold()
    ours, theirs = folded(checkpointer).cache, folded(fresh).cache
    assert checkpointer.stats() == fresh.stats()
    assert {i: s.to_dict() for i, s in ours.lessons.items()} == {i: s.to_dict() for i, s in theirs.lessons.items()}
    assert {i: (r.reward, r.sealed, i in ours.pinned) for i, r in ours.episodes.items()} == {
        i: (r.reward, r.sealed, i in theirs.pinned) for i, r in theirs.episodes.items()}
    fresh.close()


def test_episodes_written_between_the_build_and_the_lock_stay_after_the_snapshot(
        fold_url: str, reported: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    writer = Lamar(fold_url, k=2, seed=2)
    pending = [writer.recall({"project": "p0"}).episode_id]  # recalled before the build, reported after it
    late: list[str] = []

    def write() -> None:
        writer.report(pending[0], 1.0)
        for _ in range(3):
            late.append(writer.recall({"project": "p1"}).episode_id)
        writer.report(late[0], -1.0)

    checkpointer, built = checkpoint_with(fold_url, monkeypatch, write)
    assert built == 0  # the lock was held for the rewrite, not for the snapshot's build
    log = checkpointer.store.read(0)
    assert log[0].kind == "snapshot" and [e.kind for e in log[1:]] == ["outcome", "episode", "episode", "episode",
                                                                          "outcome"]
    folds_alike(checkpointer, fold_url)
    # An episode the snapshot held unreported takes its report once; one written after it, a replacement.
    writer.report(late[0], 1.0, replace=True)
    assert writer.stats() == checkpointer.stats()
    folds_alike(checkpointer, fold_url)
    writer.close()
    checkpointer.close()


def test_a_replacement_between_the_build_and_the_lock_has_the_snapshot_built_again(
        fold_url: str, reported: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # The snapshot built before it seals the outcome replaced: left in front of the replacement, it would
    # make every process that folds the log refuse a replacement the lesson rows counted.
    writer = Lamar(fold_url, k=2, seed=2)
    checkpointer, built = checkpoint_with(fold_url, monkeypatch, lambda: writer.report(reported[-1], 0.5, replace=True))
    assert built == 1
    assert [e.kind for e in checkpointer.store.read(0)] == ["snapshot"]
    assert checkpointer.episode(reported[-1]).reward == 0.5
    folds_alike(checkpointer, fold_url)
    writer.close()
    checkpointer.close()
