"""The holders: in PostgreSQL's fold mode recall and report go through the store's rows, while
one sleep reads every lesson, status and evidence from the one fold of the log."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope, Signal
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
