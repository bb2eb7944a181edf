"""Errors the server raises on a connection that is still there (a statement_timeout, a
lock_timeout, a deadlock, a full disk): reported as themselves, not as a lost connection, and run
again only where that can succeed."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from lamar import StoreError
from lamar.store import Event
from lamar.store.postgres import PostgresStore
from lamar.store.postgres.store import _REWRITE_LOCK
from tests.store.test_postgres import backends, drop_namespaces, namespace_url, unique_namespace


@pytest.fixture
def namespace(postgres_url: str) -> Iterator[str]:
    name = unique_namespace("srv")
    yield name
    drop_namespaces(postgres_url, name)


def _store(postgres_url: str, namespace: str, **params: str) -> PostgresStore:
    store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="off", **params))
    store.append([Event("status", {"id": i, "status": "active"}) for i in "ab"])
    return store


def _counted(store: PostgresStore) -> list[int]:
    """How many times the store's calls ran their query (a retry runs it again)."""
    db, runs = store.connections, [0]
    run = db.run

    def counting(query: Any, doing: str = "read") -> Any:
        def once(conn: Any) -> Any:
            runs[0] += 1
            return query(conn)
        return run(once, doing)

    db.run = counting  # type: ignore[method-assign]
    return runs


@pytest.mark.parametrize(("option", "said"), [("statement_timeout", "statement timeout; the server cancelled"),
                                              ("lock_timeout", "lock timeout; it waited past its lock_timeout")])
def test_a_timeout_of_the_server_is_reported_as_itself_and_not_run_again(
        postgres_url: str, namespace: str, option: str, said: str) -> None:
    """A rewrite waits for a lock another session holds until the server's timeout ends it: a
    second run would wait as long again, and nothing was lost to reconnect."""
    store = _store(postgres_url, namespace, options=f"-c {option}=300")
    runs = _counted(store)
    with psycopg.connect(postgres_url) as other:
        other.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_REWRITE_LOCK, namespace))
        started = time.monotonic()
        with pytest.raises(StoreError, match=f"cannot rewrite .*{said}") as raised:
            store.rewrite(1, store.read()[0])
        took = time.monotonic() - started
    assert "lost the connection" not in str(raised.value) and "reconnects" not in str(raised.value)
    assert runs[0] == 1 and took < 0.55
    assert [e.kind for e in store.read()] == ["status", "status"]
    assert store.rewrite(1, store.read()[0]) is True  # the lock is free: the same call works
    store.close()


def test_an_error_the_server_raises_on_a_read_says_what_to_do(postgres_url: str, namespace: str) -> None:
    store = _store(postgres_url, namespace)
    runs = _counted(store)
    full = "DO $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$"
    with pytest.raises(StoreError, match=r"cannot read .*could not extend file; the server is short of a resource"):
        store.connections.run(lambda conn: conn.execute(full))
    assert runs[0] == 1
    store.close()


def test_a_rewrite_the_server_aborts_in_a_deadlock_is_run_again(postgres_url: str, namespace: str) -> None:
    """Another session locks the log's rows, then waits for the rewrite's lock while the rewrite
    waits for those rows: the server aborts the rewrite (its deadlock_timeout is the shorter),
    whose transaction then runs again, once the other session has ended."""
    app = unique_namespace("app")
    store = _store(postgres_url, namespace, options="-c deadlock_timeout=400", application_name=app)
    runs = _counted(store)
    first = store.read()[0]
    done: list[BaseException | bool] = []

    def rewrite() -> None:
        try:
            done.append(store.rewrite(1, first))
        except BaseException as exc:  # noqa: BLE001 - the test asserts on it
            done.append(exc)

    with psycopg.connect(postgres_url) as other:
        other.execute("SELECT 1 FROM lamar_events WHERE namespace = %s FOR UPDATE", (namespace,))
        thread = threading.Thread(target=rewrite)
        thread.start()
        deadline = time.monotonic() + 10
        while not backends(postgres_url, app, waiting=True):
            assert time.monotonic() < deadline, "the rewrite never waited for the rows"
            time.sleep(0.01)
        other.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_REWRITE_LOCK, namespace))
        other.rollback()
    thread.join(30)
    assert done == [True] and runs[0] == 2
    assert [e.kind for e in store.read()] == ["snapshot", "status"]
    store.close()


def test_a_write_the_server_aborts_in_a_deadlock_is_written_once_on_the_retry(
        postgres_url: str, namespace: str) -> None:
    """Another session inserts the event's key, then waits for the namespace's row that the append
    holds while the append waits on that key: the server aborts the append, which rolled back
    and is written again once the other session gave up its insert."""
    app = unique_namespace("app")
    store = _store(postgres_url, namespace, options="-c deadlock_timeout=400", application_name=app)
    done: list[BaseException | list[Event]] = []

    def append() -> None:
        try:
            done.append(store.append([Event("episode", {"lessons": []}, key="e-1")]))
        except BaseException as exc:  # noqa: BLE001 - the test asserts on it
            done.append(exc)

    with psycopg.connect(postgres_url) as other:
        other.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) "
                      "VALUES (%s, 1000, 'episode', 'e-1', 0, '{}')", (namespace,))
        thread = threading.Thread(target=append)
        thread.start()
        deadline = time.monotonic() + 10
        while not backends(postgres_url, app, waiting=True):
            assert time.monotonic() < deadline, "the append never waited for the key"
            time.sleep(0.01)
        other.execute("SELECT 1 FROM lamar_namespaces WHERE namespace = %s FOR UPDATE", (namespace,))
        other.rollback()
    thread.join(30)
    assert len(done) == 1 and not isinstance(done[0], BaseException), done
    assert [(e.seq, e.key) for e in store.read()][2:] == [(3, "e-1")]
    store.close()
