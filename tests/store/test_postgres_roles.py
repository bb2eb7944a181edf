"""A role without CREATE: what it is told before the grants, and that an agent works after the
grants docs/postgres.md gives ("A role without CREATE"), saving its state too."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest

from lamar import Experience, ExperienceStore, Lamar, Scope, Signal, StoreError
from tests.store.test_postgres import namespace_url


@pytest.fixture
def schema_and_role(postgres_url: str) -> Iterator[tuple[str, str]]:
    import psycopg

    name = f"lamar_role_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
        conn.execute(f"CREATE ROLE {name} LOGIN")
    yield name, name
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {name} CASCADE")
        conn.execute(f"DROP OWNED BY {name}")
        conn.execute(f"DROP ROLE {name}")


def _url(postgres_url: str, user: str, schema: str) -> str:
    base = postgres_url.replace("postgres@", f"{user}@", 1)
    return namespace_url(base, "roles", options=f"-c search_path={schema}")


def test_a_role_without_create_is_told_what_to_grant_then_works(postgres_url: str,
                                                               schema_and_role: tuple[str, str]) -> None:
    import psycopg

    schema, role = schema_and_role
    owner, agent_url = _url(postgres_url, "postgres", schema), _url(postgres_url, role, schema)
    with pytest.raises(StoreError, match="A role without CREATE"):  # no tables yet, none to create
        ExperienceStore(agent_url)
    ExperienceStore(owner).close()  # the owner's first open creates the tables
    with pytest.raises(StoreError, match="A role without CREATE"):  # tables it may not see
        ExperienceStore(agent_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
    with pytest.raises(StoreError, match="lacks a privilege on Lamar's tables"):
        ExperienceStore(agent_url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # the docs' lines, as written
        conn.execute(f"SET search_path = {schema}")
        conn.execute("CREATE TABLE IF NOT EXISTS lamar_state "
                     "(namespace text PRIMARY KEY, seq bigint NOT NULL, body text NOT NULL)")
        conn.execute("CREATE TABLE IF NOT EXISTS lamar_notes (namespace text NOT NULL, name text NOT NULL, "
                     "body text NOT NULL, PRIMARY KEY (namespace, name))")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}")
        conn.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}")
        conn.execute(f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {schema} TO {role}")
    lam = Lamar(agent_url)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="p")))
    lam.report(lam.recall({"project": "p"}).episode_id, Signal.SHIPPED)
    lam.close()
    store = ExperienceStore(agent_url)
    try:
        store.save_state(7, "a state")  # refused for want of CREATE on the schema before the fix
        assert store.load_state() == "a state"
        store.save_note("last-sleep", "{}")  # a sleep's figures, which every user's `lamar stats` reads
        assert store.load_note("last-sleep") == "{}"
    finally:
        store.close()


def _stats(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "--store", url, "stats"], capture_output=True,
                          text=True, check=False, timeout=60)


def test_a_search_path_naming_no_schema_says_to_create_the_schema(postgres_url: str) -> None:
    # docs/postgres.md keeps the tables in a schema of their own "(create the schema first)": a URL
    # whose search_path names a schema not created yet was told to grant a role what it lacks.
    missing = f"lamar_none_{uuid.uuid4().hex[:10]}"
    url = namespace_url(postgres_url, "roles", options=f"-c search_path={missing}")
    with pytest.raises(StoreError, match="CREATE SCHEMA") as raised:
        ExperienceStore(url)
    assert "correct the search_path in the URL" in str(raised.value)
    done = _stats(url)  # the command line reads without creating: it was told of a namespace typo
    assert done.returncode == 2, done.stderr
    assert f"no schema on its search_path ({missing}) holds Lamar's tables" in done.stderr
    assert "lamar_namespace for a typo" not in done.stderr


def test_a_namespace_missing_from_a_schemas_tables_names_that_schema(postgres_url: str,
                                                                     schema_and_role: tuple[str, str]) -> None:
    # A second process that left the search_path out of its URL reads public's tables (another
    # team's), where its namespace is missing: the schema it read is named, not only the namespace.
    schema, _ = schema_and_role
    ExperienceStore(_url(postgres_url, "postgres", schema)).close()
    url = namespace_url(postgres_url, f"walk-{uuid.uuid4().hex[:8]}", options=f"-c search_path={schema}")
    done = _stats(url)
    assert done.returncode == 2, done.stderr
    assert f"holds no events in Lamar's tables in schema {schema}" in done.stderr
    assert "check lamar_namespace, or the search_path in the URL, for a typo" in done.stderr
