"""A PostgreSQL server that refused the store's connections for a while and takes them again: the store's
next call connects, however long the refusals went on (the pool's tries stop after `RECONNECTS_FOR`)."""

from __future__ import annotations

import logging
import threading

import psycopg
import pytest

from lamar import StoreError
from lamar.store.postgres import PostgresStore
from tests.pg_role import member_role
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


class _PoolTries(logging.Handler):
    """The failed tries of one pool to connect, and whether it gave up, as psycopg_pool logs them."""

    def __init__(self, pool: str) -> None:
        super().__init__(logging.WARNING)
        self.pool, self.failed, self.gave_up = repr(pool), 0, threading.Event()
        self.changed = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()
        if self.pool not in text:
            return
        with self.changed:
            if text.startswith("error connecting"):
                self.failed += 1
            elif text.startswith("reconnection attempt"):
                self.gave_up.set()
            self.changed.notify_all()

    def wait(self, tries: int, timeout: float) -> None:
        """Until the pool failed `tries` times or gave up."""
        with self.changed:
            assert self.changed.wait_for(lambda: self.failed >= tries or self.gave_up.is_set(), timeout)


def test_the_first_call_after_a_long_refusal_connects(postgres_url: str) -> None:
    """The role may not log in until the pool failed 4 tries: with its doubling wait the next would come
    7 to 9 s later, longer than the call's `timeout` (1.5 s), which fails meanwhile with nothing to say;
    the pool stops trying by then, and the call that comes once the role may log in again connects."""
    namespace = unique_namespace("pg-reconnect")
    PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="off")).close()  # the schema, migrated
    tries = _PoolTries(f"lamar:{namespace}")
    log = logging.getLogger("psycopg.pool")
    log.addHandler(tries)
    try:
        with member_role(postgres_url, "lamar_pg_reconnect") as role:
            store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="off", user=role), pool_size=1,
                                  timeout=1.5)
            try:
                assert store.read() == []
                with psycopg.connect(postgres_url, autocommit=True) as conn:
                    conn.execute(f'ALTER ROLE "{role}" NOLOGIN')
                    conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
                with pytest.raises(StoreError, match="is not permitted to log in"):
                    store.read()  # its connection lost: the pool tries to replace it, refused
                tries.wait(4, timeout=30)
                with psycopg.connect(postgres_url, autocommit=True) as conn:
                    conn.execute(f'ALTER ROLE "{role}" LOGIN')
                assert store.read() == []
            finally:
                store.close()
    finally:
        log.removeHandler(tries)
        drop_namespaces(postgres_url, namespace)
