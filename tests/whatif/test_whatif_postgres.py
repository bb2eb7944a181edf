"""whatif over the real PostgreSQL server, in the log mode and the fold mode: the same log gives the
same report as in SQLite (nothing of the fold is cached for PostgreSQL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar
from lamar.store import Event, open_store
from lamar.whatif.cache import cache_path
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
        assert cache_path(url) is None
        assert {**found, "store": None} == {**expected, "store": None}
    finally:
        source.close()
        target.close()
        drop_namespaces(postgres_url, namespace)
