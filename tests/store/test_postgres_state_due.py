"""A fold-mode engine saves the state it folded once its own namespace has enough events past the
saved one: the namespaces of a database share one sequence, whose seqs the others take meanwhile."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.store import Event
from lamar.store.postgres import PostgresStore
from tests.state.seam import folded
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.fixture
def busy(postgres_url: str) -> Iterator[PostgresStore]:
    """Another namespace of the same database, whose writes take seqs of the shared sequence."""
    namespace = unique_namespace("pgtimeout-busy")
    store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="on"))
    yield store
    store.close()
    drop_namespaces(postgres_url, namespace)


def test_the_state_is_due_after_the_namespaces_own_events_not_its_seqs(fold_url: str, busy: PostgresStore) -> None:
    busy.append([Event("applied", {"proposal": f"p{i}"}) for i in range(600)])
    lam = Lamar(fold_url, k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    for _ in range(10):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert lam.store.read(0)[-1].seq > 600  # the busy namespace's seqs lie among its own
    lam.stats()  # folds the log's 21 events: far from due
    assert lam.store.load_state() is None and folded(lam).unsaved == 21
    folded(lam).save()
    saved = lam.store.load_state()
    assert saved is not None and folded(lam).unsaved == 0
    busy.append([Event("applied", {"proposal": f"q{i}"}) for i in range(600)])
    lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    lam.stats()  # 2 events past the saved state, 600 seqs and more
    assert lam.store.load_state() == saved and folded(lam).unsaved == 2
    lam.close()
