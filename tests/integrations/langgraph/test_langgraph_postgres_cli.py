"""The `lamar` command pointed at a PostgreSQL schema where Lamar's log lives inside LangGraph's
PostgresStore (LangGraphStore) says so, and how to reach its lessons, as it does for a SqliteStore."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest

from lamar import Experience, ExperienceStore, Lamar
from lamar_langgraph import LangGraphStore


@pytest.fixture
def app_url(postgres_url: str) -> Iterator[str]:
    """A schema of the test's own, holding a LangGraph PostgresStore with Lamar's log in it."""
    import psycopg
    from langgraph.store.postgres import PostgresStore

    schema = f"lamar_lg_cli_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = f"{postgres_url}?options=-csearch_path%3D{schema}"
    try:
        with PostgresStore.from_conn_string(url) as store:
            store.setup()
            with Lamar(LangGraphStore(store, namespace=("lamar", "team.prod"))) as lam:
                lam.add(Experience("the build fails", "read the first error"))
            yield url
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _ls(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "--store", url, "ls"], check=False,
                          capture_output=True, text=True, timeout=60)


HINT = ("LangGraph PostgresStore (table store) holds Lamar's log under namespace ('lamar', 'team.prod'), which only "
        "Python opens, as Lamar(LangGraphStore(store, namespace=('lamar', 'team.prod')))")


def test_a_schema_with_only_langgraphs_store_names_the_log_inside_it(app_url: str) -> None:
    done = _ls(app_url)
    assert done.returncode == 2
    assert HINT in done.stderr and "transfer(LangGraphStore(store, namespace=('lamar', 'team.prod'))" in done.stderr


def test_a_namespace_missing_beside_lamars_tables_names_it_too(app_url: str) -> None:
    ExperienceStore(app_url, namespace="other").close()  # Lamar's own tables in the same schema
    with Lamar(ExperienceStore(app_url, namespace="other")) as lam:
        lam.add(Experience("a", "b"))
    done = _ls(f"{app_url}&lamar_namespace=prod")
    assert done.returncode == 2
    assert "namespace 'prod' holds no events" in done.stderr and HINT in done.stderr
