"""A PostgreSQL store written by the last release (tables, server functions and rows, as pg_dump
kept them: tests/store/fixtures/make_release_postgres.py) opens in a fresh schema, folds as that
release folded it, and takes new writes through the functions that release created."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from lamar import Lamar
from lamar.store import Event, MemoryStore, open_store
from tests.store.fixtures.make_release_postgres import DUMP, EXPECTED, NAMESPACES, SCHEMA, schema_url
from tests.store.test_release_stores import expected_of, folded, same_evidence


def load_dump(url: str, schema: str) -> None:
    """The fixture's dump, its schema renamed to `schema` (psql's own meta-commands left out)."""
    text = gzip.decompress(DUMP.read_bytes()).decode("utf-8")
    assert text.count(SCHEMA) > 10 and schema not in text
    sql = "\n".join(line for line in text.replace(SCHEMA, schema).splitlines() if not line.startswith("\\"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.encode("utf-8"))  # no parameters: one message of many statements


@pytest.fixture
def restored(postgres_url: str) -> Iterator[str]:
    """The name of a fresh schema holding the released store."""
    schema = f"lamar_rel_{uuid.uuid4().hex[:10]}"
    load_dump(postgres_url, schema)
    yield schema
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _expected(namespace: str) -> dict[str, Any]:
    return json.loads(EXPECTED.read_text())[namespace]  # type: ignore[no-any-return]


def test_the_fixture_holds_the_json_release_fixtures_events_in_both_modes() -> None:
    assert _expected("log") == _expected("fold") == expected_of("release-0.1.0.json")
    assert _expected("fold-live")["events"] > _expected("fold")["events"]


@pytest.mark.parametrize("namespace", list(NAMESPACES))
@pytest.mark.parametrize("state", [True, False], ids=["with-state", "log-only"])
def test_a_released_postgres_store_opens_and_folds_as_its_release_folded_it(
        postgres_url: str, restored: str, namespace: str, state: bool) -> None:
    if not state:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DELETE FROM {restored}.lamar_state")
    lam = Lamar(schema_url(postgres_url, restored, namespace, NAMESPACES[namespace]), k=2, seed=1)
    got = folded(lam)
    lam.close()
    expected = _expected(namespace)
    assert got["lessons"] == expected["lessons"] and got["events"] == expected["events"]
    assert same_evidence(got["evidence"], expected["evidence"])


@pytest.mark.parametrize("namespace", ["fold", "fold-live"])
def test_the_released_lesson_rows_are_built_again_from_the_log(postgres_url: str, restored: str,
                                                               namespace: str) -> None:
    """The rows the release folded (the live ones through its report path) hold another design's
    states under that design's knobs: they are not read, and the first engine builds them again,
    to exactly what a fresh fold of the same log writes."""
    url = schema_url(postgres_url, restored, namespace, "on")
    store = open_store(url)
    old = store.rows.lessons()  # type: ignore[attr-defined]
    assert old.tuning is None and old.states == []  # the release's rows: seen as not built
    lam = Lamar(store, k=2, seed=1)
    ids = [e.id for e in lam.experiences()]  # builds the rows
    built = store.rows.lessons()  # type: ignore[attr-defined]
    assert built.tuning is not None and len(built.states) == len(ids) > 0
    replayed = Lamar(MemoryStore(), k=2, seed=1)
    replayed.store.append([Event(e.kind, e.data, e.key, time=e.time) for e in store.read()])
    assert {i: lam.evidence(i) for i in ids} == {i: replayed.evidence(i) for i in ids}
    lam.rebuild()
    again = store.rows.lessons()  # type: ignore[attr-defined]
    lam.close()
    assert (built.active, built.sigma) == (again.active, pytest.approx(again.sigma, rel=1e-12))
    assert [s.to_dict() for s in built.states] == [s.to_dict() for s in again.states]


@pytest.mark.parametrize("namespace", list(NAMESPACES))
def test_a_released_postgres_store_takes_new_writes(postgres_url: str, restored: str, namespace: str) -> None:
    url = schema_url(postgres_url, restored, namespace, NAMESPACES[namespace])
    lam = Lamar(url, k=2, seed=3)
    before = lam.stats()
    for j in range(12):
        rec = lam.recall({"project": "app", "task": "build", "language": "swift" if j % 2 else "python"})
        lam.report(rec.episode_id, 1.0 if j % 3 else -0.6)
    after = lam.stats()
    live = {e.id: lam.evidence(e.id) for e in lam.experiences()}
    lam.close()
    assert (after["episodes"], after["reports"]) == (before["episodes"] + 12, before["reports"] + 12)
    again = Lamar(url, k=2, seed=3)
    again.rebuild()
    assert {e.id: again.evidence(e.id) for e in again.experiences()} == live
    again.close()
