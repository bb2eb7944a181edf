"""A PostgreSQL role of a test's own, for what a role's settings do to a store: the `pg_role` fixture
(tests/conftest.py) makes one, and `set_timeout` changes its statement_timeout."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def own_role(postgres_url: str) -> Iterator[str]:
    """A role of its own, which owns a schema of its own (its tables go there), dropped afterwards."""
    import psycopg

    name = f"pgtimeout_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN")
        conn.execute(f"CREATE SCHEMA {name} AUTHORIZATION {name}")
    yield name
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (name,))
        conn.execute(f"DROP SCHEMA {name} CASCADE")
        conn.execute(f"DROP OWNED BY {name}")
        conn.execute(f"DROP ROLE {name}")


def set_timeout(postgres_url: str, role: str, setting: str) -> None:
    """Set the role's statement_timeout, and end its sessions: the store's next connections have it."""
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {role} {setting}")
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
