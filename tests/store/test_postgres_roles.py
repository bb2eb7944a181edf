"""A role without CREATE: what it is told before the grants, and that an agent works after the
grants docs/postgres.md gives ("A role without CREATE"), saving its state too."""

from __future__ import annotations

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
    finally:
        store.close()
