"""The holders: in PostgreSQL's fold mode recall and report go through the store's rows, while
one sleep reads every lesson, status and evidence from the one fold of the log."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope, Signal, UnknownExperience
from lamar.state.cache import FoldCache
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.fixture
def fold_url(postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("holder")
    yield namespace_url(postgres_url, namespace) + "&lamar_fold=on"
    drop_namespaces(postgres_url, namespace)


def test_one_sleep_in_the_fold_mode_reads_one_holder_of_the_state(fold_url: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    lam = Lamar(fold_url, k=2, seed=1)
    rows = getattr(lam.store, "rows", None)
    assert rows is not None
    ids = [lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t"))),
           lam.add(Experience("The build fails!", "Clear the cache.", scope=Scope(task="t"))),
           lam.add(Experience("the tests hang", "kill the stale server", scope=Scope(task="t")))]
    rng = random.Random(1)
    for _ in range(60):
        lam.report(lam.recall({"task": "t"}).episode_id, rng.choice(list(Signal)))
    lam.retire(ids[2])
    reads: list[str] = []
    for name in ("lessons", "eligible"):
        real = getattr(rows, name)

        def counted(*args: Any, real: Any = real, name: str = name) -> Any:
            reads.append(name)
            return real(*args)

        monkeypatch.setattr(rows, name, counted)
    report = lam.sleep()
    assert reads == []  # statuses and evidence both from the fold of the log, none from the rows
    (merge,) = report.of_kind("merge")
    assert set(merge.experience_ids) == set(ids[:2])  # the retired third is not proposed
    assert report.summary["lessons"] == 3
    assert lam.apply(report, only=[merge.id]).applied == [merge.id]
    lam.close()


@pytest.mark.parametrize("backend", ["sqlite", "fold"])
def test_an_unknown_lesson_id_is_refused_without_a_fold_of_the_log(backend: str, tmp_path: Path,
                                                                   request: pytest.FixtureRequest,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The MCP server tries every id it is given whole before it reads it as the start of one: a miss
    # looks the id up as an episode's by key, where it had folded the whole log (a cache resumed from
    # a saved state refolds on a miss; in the fold mode the cache is empty after each build).
    location = str(tmp_path / "s.db") if backend == "sqlite" else request.getfixturevalue("fold_url")
    with Lamar(location, k=2, seed=3) as agent:
        lesson = agent.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
        episodes = [agent.recall({"task": "t"}).episode_id for _ in range(80)]
        for episode in episodes:
            agent.report(episode, Signal.SHIPPED)
    folds: list[int] = []
    real = FoldCache.fold_log

    def counted(cache: FoldCache, *args: Any, **kwargs: Any) -> Any:
        folds.append(1)
        return real(cache, *args, **kwargs)

    lam = Lamar(location, k=2, seed=3)
    assert lam.get(lesson).id == lesson
    monkeypatch.setattr(FoldCache, "fold_log", counted)
    for given, held_as in ((episodes[0], "episode"), (lesson[:8], None), ("ep_\x00", None)):
        with pytest.raises(UnknownExperience) as info:
            lam.get(given)
        assert info.value.held_as == held_as, given
    assert folds == []
    if backend == "sqlite":  # the checkpoint drops the episodes' keys; the fold here still holds them
        lam.checkpoint()
        with pytest.raises(UnknownExperience) as info:
            lam.get(episodes[-1])
        assert info.value.held_as == "episode"
    lam.close()
