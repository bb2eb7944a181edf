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
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace, wait_until_waiting


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
    # A second of timeout, and under two for the call: a second run would take two, and a busy machine
    # has room to schedule the one run.
    store = _store(postgres_url, namespace, options=f"-c {option}=1000")
    runs = _counted(store)
    with psycopg.connect(postgres_url) as other:
        other.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_REWRITE_LOCK, namespace))
        started = time.monotonic()
        with pytest.raises(StoreError, match=f"cannot rewrite .*{said}") as raised:
            store.rewrite(1, store.read()[0])
        took = time.monotonic() - started
    assert "lost the connection" not in str(raised.value) and "reconnects" not in str(raised.value)
    assert runs[0] == 1 and took < 1.9
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
        wait_until_waiting(postgres_url, app, "the rewrite never waited for the rows")
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
        wait_until_waiting(postgres_url, app, "the append never waited for the key")
        other.execute("SELECT 1 FROM lamar_namespaces WHERE namespace = %s FOR UPDATE", (namespace,))
        other.rollback()
    thread.join(30)
    assert len(done) == 1 and not isinstance(done[0], BaseException), done
    assert [(e.seq, e.key) for e in store.read()][2:] == [(3, "e-1")]
    store.close()


_TOUCH = "UPDATE lamar_namespaces SET last_seq = last_seq + %s WHERE namespace = %s"


def _serialization_failure(postgres_url: str, namespace: str, fail: int) -> tuple[Any, list[str]]:
    """A body that updates the namespace's row in a REPEATABLE READ transaction, after another
    session updated that row since the body's snapshot (on its first `fail` runs): the server
    aborts it with a real serialization failure. Returns the body and the SQLSTATE of each run."""
    states: list[str] = []

    def body(run: Any) -> bool:
        run("BEGIN ISOLATION LEVEL REPEATABLE READ")
        run("SELECT last_seq FROM lamar_namespaces WHERE namespace = %s", (namespace,))  # the snapshot
        if len(states) < fail:
            with psycopg.connect(postgres_url, autocommit=True) as other:
                other.execute(_TOUCH, (0, namespace))
        try:
            run(_TOUCH, (1, namespace))
            run("COMMIT")
        except psycopg.Error as exc:
            states.append(exc.sqlstate or "")
            raise
        states.append("ok")
        return True

    return body, states


def _last_seq(postgres_url: str, namespace: str) -> int:
    with psycopg.connect(postgres_url) as conn:
        return int(conn.execute("SELECT last_seq FROM lamar_namespaces WHERE namespace = %s",
                                (namespace,)).fetchone()[0])  # type: ignore[index]


@pytest.mark.parametrize("path", ["read", "write"])
def test_a_real_serialization_failure_is_run_again_once_after_a_pause(
        postgres_url: str, namespace: str, path: str) -> None:
    """The store's own transactions cannot meet one (below), so a transaction of the test's on the
    store's connection meets a real one: a read (`run`) or a write (`transact`, through `retrying`)
    that the server aborts with SQLSTATE 40001 runs again once, 50 ms later, and its update is
    applied once."""
    store = _store(postgres_url, namespace)
    db = store.connections
    before = _last_seq(postgres_url, namespace)
    body, states = _serialization_failure(postgres_url, namespace, fail=1)
    started = time.monotonic()
    if path == "read":
        assert db.run(lambda conn: body(conn.execute)) is True
    else:
        assert db.retrying(lambda: db.transact(lambda cur, xid: body(cur.execute), lambda seqs: False, [])) is True
    assert states == ["40001", "ok"] and time.monotonic() - started >= 0.05
    assert _last_seq(postgres_url, namespace) == before + 1
    store.close()


@pytest.mark.parametrize("path", ["read", "write"])
def test_a_second_serialization_failure_is_reported_with_what_to_do(
        postgres_url: str, namespace: str, path: str) -> None:
    store = _store(postgres_url, namespace)
    db = store.connections
    before = _last_seq(postgres_url, namespace)
    body, states = _serialization_failure(postgres_url, namespace, fail=2)
    said = r"could not serialize access.*aborted it twice against concurrent transactions \(a serialization failure\)"
    with pytest.raises(StoreError, match=said) as raised:
        if path == "read":
            db.run(lambda conn: body(conn.execute))
        else:
            db.retrying(lambda: db.transact(lambda cur, xid: body(cur.execute), lambda seqs: False, []))
    assert "lost the connection" not in str(raised.value)
    assert states == ["40001", "40001"] and _last_seq(postgres_url, namespace) == before
    store.close()


@pytest.mark.parametrize("fold", ["off", "on"], ids=["log", "fold"])
def test_a_stricter_default_isolation_of_the_database_aborts_none_of_the_stores_writes(
        postgres_url: str, namespace: str, fold: str) -> None:
    """A database or role whose default_transaction_isolation is serializable (set here in the
    URL's options): the store's writes, which wait for row locks and then read what committed
    meanwhile, still run at READ COMMITTED, so 4 threads recalling and reporting on the same
    lessons meet no serialization failure, and a write that waited for the namespace's row that
    another session updated is written at its first try."""
    from lamar import Experience, Lamar, Scope

    app = unique_namespace("app")
    url = namespace_url(postgres_url, namespace, lamar_fold=fold, application_name=app,
                        options=r"-c default_transaction_isolation=serializable")
    lam = Lamar(url, k=3, seed=0)
    for i in range(4):
        lam.add(Experience(f"the build fails {i}", f"clear the cache {i}", scope=Scope(project="p")))
    failed: list[BaseException] = []

    def agent(seed: int) -> None:
        mine = Lamar(url, k=3, seed=seed)
        for _ in range(15):
            try:
                mine.report(mine.recall({"project": "p"}).episode_id, 1.0)
            except BaseException as exc:  # noqa: BLE001 - the test asserts on it
                failed.append(exc)
        mine.close()

    threads = [threading.Thread(target=agent, args=(seed,)) for seed in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert failed == [] and lam.stats()["reports"] == 60
    if fold == "off":  # the log mode's writes take turns on the namespace's row
        db, tries = lam.store.connections, [0]  # type: ignore[attr-defined]
        transact = db.transact

        def counted(*args: Any, **kwargs: Any) -> Any:
            tries[0] += 1
            return transact(*args, **kwargs)

        db.transact = counted
        with psycopg.connect(postgres_url) as other:
            other.execute(_TOUCH, (0, namespace))
            thread = threading.Thread(target=lambda: lam.store.append([Event("applied", {"proposal": "a"})]))
            thread.start()
            wait_until_waiting(postgres_url, app, "the append never waited for the row")
            other.commit()
        thread.join(30)
        assert tries == [1]
        assert [e.kind for e in lam.store.read()][-1] == "applied"
    lam.close()
