"""What a checkpoint does while it holds a fold-mode namespace's write lock exclusively (every writer
waits): the fold of what was written since it folded the log and the rewrite, not the whole fold or the
state's save."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope
from tests.state.seam import folded
from tests.store.held_lock import watch_exclusive
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace
from tests.store.test_postgres_replace import _folds_of


@pytest.fixture
def url(postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("pgfold-ckpt-hold")
    yield namespace_url(postgres_url, namespace, options="-c synchronous_commit=off") + "&lamar_fold=on"
    drop_namespaces(postgres_url, namespace)


def test_a_checkpoint_resumed_from_a_saved_state_folds_and_saves_outside_the_lock(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lam = Lamar(url, k=2, seed=1)
    for i in range(6):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project=f"p{i % 2}"), id=f"L{i}"))
    rng = random.Random(1)
    for _ in range(300):
        lam.report(lam.recall({"project": f"p{rng.randrange(2)}"}).episode_id, rng.choice([1.0, -1.0]))
    want = lam.stats()  # folds the log: the engine, which wrote, saves its state at close
    lam.close()
    during: list[str] = []
    held = watch_exclusive(monkeypatch)
    checkpointer = Lamar(url, k=2, seed=1)
    seqs = _folds_of(folded(checkpointer).cache)
    fold = folded(checkpointer).cache.fold
    save_state = checkpointer.store.save_state  # type: ignore[attr-defined]

    def fold_watched(*args: Any) -> None:
        if held[0]:
            during.append("fold")
        fold(*args)

    def save_watched(*args: Any) -> None:
        if held[0]:
            during.append("save")
        save_state(*args)

    folded(checkpointer).cache.fold = fold_watched  # type: ignore[method-assign]
    monkeypatch.setattr(checkpointer.store, "save_state", save_watched)
    assert checkpointer.checkpoint() is True
    assert len(seqs) > 600  # the whole log folded once (the state saved holds no episode a snapshot needs)
    assert during == []  # nothing was written meanwhile: nothing to fold under the lock, and the save after it
    checkpointer.close()
    fresh = Lamar(url, k=2, seed=1)
    assert fresh.stats() == want  # the snapshot, the state saved with it, and the log agree
    fresh.close()
