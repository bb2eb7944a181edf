"""Replaced outcomes: the state after any series of replacements equals the fold of the whole
log, on every local backend."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.policy.config import Policy
from lamar.state.cache import FoldCache
from lamar.state.snapshot import snapshot_of
from lamar.store import open_store


def _refolded(lam: Lamar) -> FoldCache:
    cache = FoldCache(Policy(), "test")
    cache.fold_log(lam.store.read(0))
    return cache


@pytest.mark.parametrize("backend", ["memory", "sqlite", "json"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_replacements_leave_the_state_a_refold_gives(tmp_path: Path, backend: str, seed: int) -> None:
    location = {"memory": ":memory:", "sqlite": str(tmp_path / "s.db"), "json": str(tmp_path / "s.json")}[backend]
    rng = random.Random(seed)
    lam = Lamar(open_store(location), k=2, seed=seed)
    lam.add(Experience("always", "everywhere"))  # eligible in every episode: its detector watches past its warm-up
    for i in range(6):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project="ab"[i % 2])))
    episodes: list[str] = []
    for step in range(400):
        if episodes and rng.random() < 0.3:  # replace an outcome, old or recent, once or again
            target = rng.choice(episodes[-5:] if rng.random() < 0.5 else episodes)
            lam.report(target, rng.choice([1.0, -1.0, 0.5]), replace=True)
        else:
            rec = lam.recall({"project": rng.choice("ab")})
            lam.report(rec.episode_id, rng.choice([1.0, -1.0, 0.0]) if rng.random() < 0.8 else 1.0)
            episodes.append(rec.episode_id)
        if step % 50 == 49:
            assert snapshot_of(lam._holder._log.cache) == snapshot_of(_refolded(lam))  # type: ignore[attr-defined]
    cache = lam._holder._log.cache  # type: ignore[attr-defined]
    assert max(s.detector.watched for s in cache.lessons.values()) > 50  # the spread's reader was exercised
    assert snapshot_of(cache) == snapshot_of(_refolded(lam))
    fresh = Lamar(open_store(location) if backend != "memory" else lam.store, k=2)  # folds the log in a new process's way
    assert [lam.evidence(i) for i in cache.lessons] == [fresh.evidence(i) for i in cache.lessons]
    fresh.close()
    lam.close()

