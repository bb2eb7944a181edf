"""whatif over the real PostgreSQL server, in the log mode and the fold mode: the same log gives the
same report as in SQLite, and the cache keeps the fold of the settled log only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.store import Event, open_store
from lamar.whatif.cache import cache_path
from lamar.whatif.log import read_log
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.mark.parametrize("fold", ["off", "on"])
def test_the_same_log_gives_the_same_report(logged: Path, postgres_url: str, fold: str) -> None:
    namespace = unique_namespace("whatif")
    url = namespace_url(postgres_url, namespace, lamar_fold=fold)
    source = open_store(str(logged))
    target = open_store(url)
    try:
        events = source.read(0)
        for start in range(0, len(events), 500):
            target.append([Event(e.kind, e.data, e.key, time=e.time) for e in events[start:start + 500]])
        policies = ["logged", "none", "holdout:0.3", "without:gym-deploy_service-0"]
        with Lamar(str(logged)) as lam:
            expected = lam.whatif(policies).to_dict()
        with Lamar(url) as lam:
            found = lam.whatif(policies).to_dict()
            cached = lam.whatif(policies).to_dict()
            path = cache_path(lam.store.location)
        assert path is not None and path.exists()
        assert {**found, "store": None} == {**expected, "store": None} == {**cached, "store": None}
    finally:
        source.close()
        target.close()
        drop_namespaces(postgres_url, namespace)


def _play(lam: Lamar, n: int) -> None:
    for i in range(n):
        rec = lam.recall({"task": "flaky"})
        lam.report(rec.episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)


def test_the_fold_mode_caches_only_what_is_settled(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    namespace = unique_namespace("whatif")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    lam = Lamar(url, k=2, seed=4)
    try:
        for action in ("pin the seeds", "mock the clock", "retry the network"):
            lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
        _play(lam, 30)
        rows = lam.store.rows
        assert rows is not None
        events = lam.store.read(0)
        middle = events[len(events) // 2].seq
        # A write that took seqs above `middle` may still be in flight: nothing past it is cached.
        monkeypatch.setattr(rows, "settled", lambda: middle)
        assert read_log(lam.store) == read_log(lam.store, cache=False)
        path = cache_path(lam.store.location)
        assert path is not None
        assert json.loads(path.read_text())["seq"] == middle
        monkeypatch.undo()
        _play(lam, 10)
        assert read_log(lam.store) == read_log(lam.store, cache=False)
        assert json.loads(path.read_text())["seq"] == middle  # fewer than SAVE_AFTER events since
        path.unlink()
        # A write in flight did not end in time: the fold is answered, and nothing is cached.
        monkeypatch.setattr(rows, "settled", lambda: None)
        assert read_log(lam.store) == read_log(lam.store, cache=False)
        assert not path.exists()
    finally:
        lam.close()
        drop_namespaces(postgres_url, namespace)
