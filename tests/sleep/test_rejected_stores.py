"""A rejection survives a restart on every backend, and a checkpoint (a compaction) that folds its record
away: the id the store holds as applied carries everything sleep checks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.fixture(params=["json", "sqlite", "postgres", "postgres-fold"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "json":
        yield str(tmp_path / "lessons.json")
    elif request.param == "sqlite":
        yield str(tmp_path / "lessons.db")
    else:
        postgres_url = request.getfixturevalue("postgres_url")
        namespace = unique_namespace("reject")
        fold = "&lamar_fold=on" if request.param == "postgres-fold" else ""
        try:
            yield namespace_url(postgres_url, namespace) + fold
        finally:
            drop_namespaces(postgres_url, namespace)


def test_a_rejection_outlives_a_restart_and_a_checkpoint(location: str) -> None:
    with Lamar(location, seed=1) as lam:
        for action in ("raise the test timeout", "run the failing test alone first"):
            lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))
        for _ in range(30):
            lam.report(lam.recall({"project": "trace"}).episode_id, 0.5)
        report = lam.sleep(keep_last=5)
        (contradiction,) = report.of_kind("contradiction")
        assert lam.reject(report, [contradiction.id]) == [contradiction.id]
    with Lamar(location, seed=2) as lam:  # a fresh process: its saved state, or the log
        again = lam.sleep(keep_last=5)
        assert [p.kind for p in again] == ["compact"] and again.summary["rejected"] == [contradiction.id]
        (held,) = lam.rejections()
        assert (held.kind, held.proposal, held.count) == ("contradiction", contradiction.id, None)
        assert lam.apply(again).applied == [again.proposals[0].id]  # the checkpoint folds the record's event
    with Lamar(location, seed=3) as lam:
        assert lam.sleep().proposals == [] and lam.sleep().summary["rejected"] == [contradiction.id]
        (held,) = lam.rejections()
        # What the person saw went with the record's event into the checkpoint; its grounds stay in its id.
        assert (held.proposal, held.kind, held.lessons, held.time) == (contradiction.id, "", (), None)
        assert [r.proposal for r in lam.unreject(contradiction.id)] == [contradiction.id]
    with Lamar(location, seed=4) as lam:
        assert [p.id for p in lam.sleep()] == [contradiction.id] and lam.rejections() == []
