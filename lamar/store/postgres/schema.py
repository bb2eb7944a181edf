"""The PostgreSQL store's schema: its version, and the migrations that create or upgrade it, read
from the `.sql` files beside this module."""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING, Any

from lamar._errors import StoreError

if TYPE_CHECKING:
    from psycopg import Connection

SCHEMA_VERSION = 8
MIGRATION_LOCK = 0x4C414D4152  # b"LAMAR": one migrator per database at a time
# The scripts that take a schema from version k to k + 1 (version 0: the unversioned layout of
# early builds). A new database runs create.sql, then every step from version 1 on.
_STEPS: dict[int, tuple[str, ...]] = {
    0: ("to_v1.sql",),
    1: ("to_v2.sql",),
    2: ("append.sql",),
    3: ("to_v4.sql", "functions.sql"),
    4: ("functions.sql", "to_v5.sql"),
    5: ("to_v6.sql",),
    6: ("to_v7.sql", "functions.sql"),
    7: ("to_v8.sql",),
}


@functools.cache
def script(name: str) -> str:
    """The text of one of the package's `.sql` files (package data, shipped in the wheel)."""
    return resources.files("lamar.store.postgres").joinpath("sql", name).read_text(encoding="utf-8")


def scripts(version: int | None) -> list[str]:
    """The scripts that bring a schema at `version` (None: an empty database) to SCHEMA_VERSION."""
    names = ["create.sql"] if version is None else []
    for step in range(1 if version is None else version, SCHEMA_VERSION):
        names += _STEPS[step]
    return [script(name) for name in names]


def migrate(conn: Connection[Any], location: str) -> None:
    """Create or upgrade the schema. Idempotent; concurrent migrators take turns on a lock."""
    if schema_version(conn) == SCHEMA_VERSION:
        return  # the common case: no lock, no DDL
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        version = schema_version(conn)  # again: another process may have migrated meanwhile
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(f"{location} has Lamar schema version {version}; this Lamar knows "
                             f"{SCHEMA_VERSION}: upgrade lamar")
        if version == SCHEMA_VERSION:
            return
        for text in scripts(version):
            conn.execute(text.encode("utf-8"))  # no parameters: a script of many statements, one message
        conn.execute("CREATE TABLE IF NOT EXISTS lamar_migrations (version integer PRIMARY KEY, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        conn.execute("INSERT INTO lamar_migrations (version) VALUES (%s)", (SCHEMA_VERSION,))


def ensure_table(conn: Connection[Any], table: str, name: str) -> None:
    """Create `table` by the script `name` unless it is there: a table that comes with its first row.

    Creators take turns on the migration lock. Once the table is there nothing creates it: CREATE ...
    IF NOT EXISTS needs CREATE on the schema even then, which an agent's role may lack.
    """
    if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() in (None, (None,)):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute(script(name).encode("utf-8"))


def schema_version(conn: Connection[Any]) -> int | None:
    """The schema's version: None for an empty database, 0 for the unversioned layout.

    It asks pg_class rather than to_regclass(): within a transaction that began before
    another migrator committed, to_regclass() can still answer from a stale cache.
    """
    tables = {row[0] for row in conn.execute(
        "SELECT relname FROM pg_catalog.pg_class WHERE relname IN ('lamar_migrations', 'lamar_events') "
        "AND relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace "
        "WHERE nspname = ANY (current_schemas(false)))").fetchall()}
    if "lamar_migrations" in tables:
        found = conn.execute("SELECT max(version) FROM lamar_migrations").fetchone()
        return int(found[0]) if found and found[0] is not None else None
    return 0 if "lamar_events" in tables else None


__all__ = ["MIGRATION_LOCK", "SCHEMA_VERSION", "ensure_table", "migrate", "schema_version", "script", "scripts"]
