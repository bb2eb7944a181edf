"""A PostgreSQL role of a test's own, for what a role's settings do to a store: the `pg_role` fixture
(tests/conftest.py) makes one, `set_timeout` changes its statement_timeout, `member_role` shares the schema."""

from __future__ import annotations

import time
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


@contextmanager
def member_role(postgres_url: str, prefix: str, slots: int | None = None) -> Iterator[str]:
    """A login role of its own, a member of the tests' role so it may use their schema, with `slots`
    connections at most (its CONNECTION LIMIT; the server's settings are left alone); dropped after,
    allowed to log in again first should the test have refused it."""
    import psycopg

    role = f"{prefix}_{uuid.uuid4().hex[:10]}"
    limit = "" if slots is None else f" CONNECTION LIMIT {int(slots)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        owner = conn.execute("SELECT current_user").fetchone()[0]  # type: ignore[index]
        conn.execute(f'CREATE ROLE "{role}" LOGIN{limit}')
        conn.execute(f'GRANT "{owner}" TO "{role}"')
    try:
        yield role
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'ALTER ROLE "{role}" LOGIN')
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
            for _ in range(100):  # DROP ROLE fails while one of its backends is still ending
                if not conn.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = %s",
                                    (role,)).fetchone()[0]:  # type: ignore[index]
                    break
                time.sleep(0.05)
            conn.execute(f'DROP ROLE "{role}"')
