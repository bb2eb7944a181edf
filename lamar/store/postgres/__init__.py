"""PostgreSQL: one event log shared by a fleet of agents, with isolated namespaces per database.
Needs psycopg 3 and psycopg_pool (the `postgres` extra) and PostgreSQL 13 or later."""

from __future__ import annotations

from lamar.store.postgres.counters import WriteCounters
from lamar.store.postgres.schema import SCHEMA_VERSION
from lamar.store.postgres.store import PostgresStore
from lamar.store.postgres.url import DEFAULT_NAMESPACE, URL_FOLD, URL_NAMESPACE

__all__ = ["DEFAULT_NAMESPACE", "SCHEMA_VERSION", "URL_FOLD", "URL_NAMESPACE", "PostgresStore", "WriteCounters"]
