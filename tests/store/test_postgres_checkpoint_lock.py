"""A checkpoint's exclusive lock on a namespace (fold mode) when its connection is lost: while
the checkpoint runs, while it waits for the lock, and across a half-open link."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from lamar import Experience, Lamar, LamarError, Signal, StoreError
from lamar.state.follower import Follower
from lamar.store.postgres import PostgresStore, locks
from tests.state.seam import folded
from tests.store.relay import Link, Relay, send
from tests.store.test_postgres import (
    _database,
    _kill_waiting_writer,
    drop_namespaces,
    namespace_url,
    terminate,
    unique_namespace,
    wait_until_waiting,
)
from tests.store.test_postgres_fold import _late_episode

_LOCK_HOLDERS = """SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s::oid
    AND objid = hashtext(%s)::oid AND mode = 'ExclusiveLock'"""


@pytest.fixture
def namespace(postgres_url: str) -> Iterator[str]:
    name = unique_namespace("ckpt")
    yield name
    drop_namespaces(postgres_url, name)


def _engine(url: str | PostgresStore, episodes: int = 5) -> Lamar:
    lam = Lamar(url, k=2, seed=1)
    lam.add(Experience("case", "do"))
    for _ in range(episodes):
        lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    return lam


def _end_the_lock(postgres_url: str, namespace: str) -> None:
    """Terminate the backend holding the checkpoint's exclusive lock (this test's own)."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        pids = [row[0] for row in conn.execute(_LOCK_HOLDERS + " AND granted", (locks.ROWS_LOCK, namespace))]
    assert len(pids) == 1
    terminate(postgres_url, pids)


def _writer(other: Lamar) -> tuple[threading.Thread, list[BaseException | str]]:
    """A thread whose recall writes through `other`, and what it got: an episode id or the error."""
    writes: list[BaseException | str] = []

    def write() -> None:
        try:
            writes.append(other.recall({"task": "x"}).episode_id)
        except BaseException as exc:  # noqa: BLE001 - the test asserts on it
            writes.append(exc)

    return threading.Thread(target=write, daemon=True), writes


def _checkpointer(lam: Lamar) -> tuple[threading.Thread, list[StoreError | bool]]:
    """A thread that checkpoints `lam`, and what it got: the checkpoint's answer or its StoreError."""
    outcome: list[StoreError | bool] = []

    def checkpoint() -> None:
        try:
            outcome.append(lam.checkpoint())
        except StoreError as exc:
            outcome.append(exc)

    return threading.Thread(target=checkpoint, daemon=True), outcome


def _start_queued(writer: threading.Thread, postgres_url: str, app: str) -> None:
    """Start `writer` and wait until its write queues for the checkpoint's lock."""
    writer.start()
    wait_until_waiting(postgres_url, app, "the write never queued for the lock")


def _during_checkpoint(monkeypatch: pytest.MonkeyPatch, lam: Lamar, before: Any) -> None:
    """Call `before()` inside the checkpoint, once the lock is held and before the log is folded."""
    follower = folded(lam)
    rewrite = Follower._rewrite  # what the checkpoint does under its lock

    def patched(store: Any, *built: Any) -> bool:
        before()
        return rewrite(follower, store, *built)

    monkeypatch.setattr(follower, "_rewrite", patched)


def test_a_checkpoint_that_lost_its_lock_writes_no_snapshot_over_a_write_in_flight(
        postgres_url: str, namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its lock gone, a write takes a seq and stalls, and a later one commits: a snapshot through
    the later seq would hide the stalled one's event for good once it commits."""
    url = namespace_url(postgres_url, namespace)
    lam, other = _engine(url), Lamar(url, k=2, seed=2)
    in_flight: list[Any] = []

    def lose_the_lock() -> None:
        _end_the_lock(postgres_url, namespace)
        in_flight.extend(_late_episode(url, other))
        other.report(other.recall({"task": "x"}).episode_id, Signal.SHIPPED)

    _during_checkpoint(monkeypatch, lam, lose_the_lock)
    with pytest.raises(StoreError) as raised:
        lam.checkpoint()
    conn, late = in_flight
    conn.commit()
    conn.close()
    fresh = Lamar(url, k=2, seed=3)
    assert fresh.stats()["episodes"] == 7 and late in folded(fresh).cache.episodes
    assert "snapshot" not in {e.kind for e in lam.store.read()}
    assert "nothing was rewritten: checkpoint again" in str(raised.value)
    monkeypatch.undo()
    assert lam.checkpoint() is True
    fresh.close()
    fresh = Lamar(url, k=2, seed=3)
    assert fresh.stats()["episodes"] == 7 and late in folded(fresh).cache.episodes
    for engine in (lam, other, fresh):
        engine.close()


def test_a_checkpoint_whose_lock_is_lost_with_no_write_in_flight_keeps_its_snapshot(
        postgres_url: str, namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The log it folds is settled all the same, so its snapshot is right: the call says so,
    rather than raising over a rewrite it made."""
    url = namespace_url(postgres_url, namespace)
    lam = _engine(url)
    _during_checkpoint(monkeypatch, lam, lambda: _end_the_lock(postgres_url, namespace))
    assert lam.checkpoint() is True
    assert lam.store.read()[0].kind == "snapshot"
    fresh = Lamar(url, k=2, seed=3)
    assert fresh.stats()["episodes"] == 5
    for engine in (lam, fresh):
        engine.close()


def test_a_checkpoint_on_a_pool_of_one_connection_runs_on_the_connection_holding_its_lock(
        postgres_url: str, namespace: str) -> None:
    """Its calls under the lock run on the connection that holds it: none waits for a second
    connection, which a pool of one would never hand out."""
    url = namespace_url(postgres_url, namespace)
    lam = _engine(PostgresStore(url, pool_size=1, timeout=5.0))
    started = time.monotonic()
    assert lam.checkpoint() is True
    # A call that waited for a second connection would wait out the pool's 5 s timeout.
    assert time.monotonic() - started < 4.0 and lam.store.read()[0].kind == "snapshot"
    lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)  # the lock was released
    fresh = Lamar(url, k=2, seed=3)
    assert fresh.stats()["episodes"] == 6
    for engine in (lam, fresh):
        engine.close()


def test_a_checkpoint_goes_on_while_the_pools_other_connections_wait_for_its_lock(
        postgres_url: str, namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine sharing the store object writes while the checkpoint holds the lock: its write
    waits for the lock on the pool's other connection, and the checkpoint needs none but its own."""
    app = unique_namespace("app")
    url = namespace_url(postgres_url, namespace, application_name=app)
    store = PostgresStore(url, pool_size=2, timeout=2.0)
    lam, other = _engine(store), Lamar(store, k=2, seed=2)
    writer, writes = _writer(other)

    def wait_for_the_writer() -> None:
        _start_queued(writer, postgres_url, app)

    _during_checkpoint(monkeypatch, lam, wait_for_the_writer)
    assert lam.checkpoint() is True
    writer.join(timeout=10)
    assert not writer.is_alive() and len(writes) == 1 and isinstance(writes[0], str)
    fresh = Lamar(url, k=2, seed=3)
    assert fresh.stats()["episodes"] == 6
    for engine in (lam, other, fresh):
        engine.close()


def test_a_wait_for_the_lock_lost_twice_says_nothing_was_written(postgres_url: str, namespace: str) -> None:
    """The checkpoint queues behind a write in flight; its connection is ended while it waits,
    then again on the retry."""
    app = unique_namespace("app")
    url = namespace_url(postgres_url, namespace)
    lam = _engine(url)
    waiting = Lamar(namespace_url(postgres_url, namespace, application_name=app), k=2, seed=2)
    conn, _ = _late_episode(url, lam)  # holds the namespace's write lock shared
    thread, outcome = _checkpointer(waiting)
    thread.start()
    killed: set[int] = set()
    for _ in range(2):
        _kill_waiting_writer(postgres_url, app, killed)
    thread.join(timeout=30)
    conn.rollback()
    conn.close()
    assert not thread.is_alive()
    (error,) = outcome
    assert "twice while waiting for its write lock" in str(error) and "nothing was written" in str(error)
    assert "snapshot" not in {e.kind for e in lam.store.read()}
    assert waiting.checkpoint() is True
    for engine in (lam, waiting):
        engine.close()


class _HalfOpen(Relay):
    """A TCP relay to PostgreSQL that, at the first statement taking the namespace's write lock,
    passes it on and hangs up on the client only: the server keeps the connection (a half-open
    link), so its backend goes on waiting for the lock, and holds it once granted."""

    def __init__(self) -> None:
        self._armed = True
        super().__init__()

    def forward(self, link: Link, data: bytes) -> bool:
        if self._armed and b"pg_advisory_lock($1, hashtext($2))" in data:
            self._armed = False
            link.hang_up_on_client()  # first: the server's answer, once granted, must never reach it
            send(link.server, data)
            return False
        return super().forward(link, data)


def test_a_wait_for_the_lock_lost_on_a_half_open_link_leaves_no_backend_holding_it(
        postgres_url: str, namespace: str) -> None:
    """The backend left behind would get the lock once the write in flight ends, then keep it:
    the retry, and every fold-mode write of the namespace, would wait behind it for ever."""
    url = namespace_url(postgres_url, namespace)
    lam = _engine(url)
    proxy = _HalfOpen()
    through = namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}",
                            namespace, sslmode="disable")
    waiting = Lamar(through, k=2, seed=2)
    conn, _ = _late_episode(url, lam)
    thread, outcome = _checkpointer(waiting)
    thread.start()
    deadline = time.monotonic() + 30
    while proxy._armed and time.monotonic() < deadline:  # until the checkpoint asked for the lock
        thread.join(timeout=0.05)
    conn.commit()
    conn.close()
    thread.join(timeout=30)
    hung = thread.is_alive()
    if hung:  # free the namespace for the cleanup: end the backends this test left holding it
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            terminate(postgres_url, [row[0] for row in admin.execute(_LOCK_HOLDERS, (locks.ROWS_LOCK, namespace))])
        thread.join(timeout=30)
    proxy.close()
    assert not hung and outcome == [True]
    lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    assert Lamar(url, k=2, seed=3).stats()["episodes"] == 7
    for engine in (lam, waiting):
        engine.close()


@pytest.mark.parametrize("pool_size", [1, 4])
def test_a_network_drop_mid_checkpoint_leaves_no_backend_holding_its_lock(
        postgres_url: str, namespace: str, monkeypatch: pytest.MonkeyPatch, pool_size: int) -> None:
    """The link drops while the checkpoint holds its lock: the server keeps the backend, whose
    session lock would outlive the checkpoint and hold off every fold-mode write for ever."""
    url = namespace_url(postgres_url, namespace)
    lam = _engine(url)
    proxy = Relay()
    through = namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}",
                            namespace, sslmode="disable")
    cut = Lamar(PostgresStore(through, pool_size=pool_size, timeout=2.0), k=2, seed=2)
    _during_checkpoint(monkeypatch, cut, proxy.sever)
    with contextlib.suppress(StoreError):  # a pool of one has no other connection to finish on
        cut.checkpoint()
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        left = [row[0] for row in admin.execute(_LOCK_HOLDERS, (locks.ROWS_LOCK, namespace))]
    terminate(postgres_url, left)  # free the namespace for what follows, whatever the outcome
    proxy.close()
    assert left == []
    writer = Lamar(namespace_url(postgres_url, namespace, options="-c lock_timeout=2000"), k=2, seed=3)
    writer.report(writer.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    for engine in (lam, cut, writer):
        engine.close()


def _hang_up_on_the_lock(proxy: Relay, postgres_url: str, namespace: str) -> None:
    """Hang up on the client of the link whose backend holds the checkpoint's lock, only."""
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        row = admin.execute("SELECT client_port FROM pg_stat_activity WHERE pid IN (" + _LOCK_HOLDERS + " AND granted)",
                            (locks.ROWS_LOCK, namespace)).fetchone()
    assert row is not None

    def port(link: Link) -> int | None:
        with contextlib.suppress(OSError):
            return int(link.server.getsockname()[1])
        return None

    (link,) = [link for link in proxy.links if port(link) == row[0]]
    link.hang_up_on_client()


def test_a_checkpoint_whose_lock_link_drops_while_the_pools_others_wait_for_it_does_not_wait_out_timeout(
        postgres_url: str, namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Across the half-open link the lost backend keeps the lock, which the pool's other
    connection waits for with a write: ended at once, the write finishes and frees its
    connection for the checkpoint, which would otherwise get none within `timeout`."""
    url = namespace_url(postgres_url, namespace)
    _engine(url).close()
    proxy = Relay()
    app = unique_namespace("app")
    through = namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}",
                            namespace, sslmode="disable", application_name=app)
    # A timeout well past what the test allows the checkpoint: a loaded machine's stalls stay inside it.
    store = PostgresStore(through, pool_size=2, timeout=6.0)
    lam, other = Lamar(store, k=2, seed=2), Lamar(store, k=2, seed=3)
    writer, writes = _writer(other)

    def drop_the_lock_while_the_writer_waits() -> None:
        _start_queued(writer, postgres_url, app)
        _hang_up_on_the_lock(proxy, postgres_url, namespace)

    _during_checkpoint(monkeypatch, lam, drop_the_lock_while_the_writer_waits)
    started = time.monotonic()
    with contextlib.suppress(StoreError):
        lam.checkpoint()
    took = time.monotonic() - started
    writer.join(timeout=10)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        left = [row[0] for row in admin.execute(_LOCK_HOLDERS, (locks.ROWS_LOCK, namespace))]
    terminate(postgres_url, left)
    proxy.close()
    assert took < 4.0 and left == [] and len(writes) == 1 and isinstance(writes[0], str), (took, writes)
    fresh = Lamar(url, k=2, seed=4)
    assert fresh.stats()["episodes"] == 6
    for engine in (lam, other, fresh):
        engine.close()


def test_a_pool_of_one_whose_lock_connection_drops_mid_checkpoint_fails_at_once(
        postgres_url: str, namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's one connection is the lost one, handed back only once the checkpoint ends: a
    call that waited on the pool for another would wait out its timeout, twice, and get none.
    The next checkpoint reconnects."""
    url = namespace_url(postgres_url, namespace)
    _engine(url).close()
    proxy = Relay()
    through = namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}",
                            namespace, sslmode="disable")
    cut = Lamar(PostgresStore(through, pool_size=1, timeout=3.0), k=2, seed=2)
    _during_checkpoint(monkeypatch, cut, proxy.sever)
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"lost the connection .* its pool's only one \(pool_size=1\)"):
        cut.checkpoint()
    took = time.monotonic() - started
    monkeypatch.undo()
    assert took < 2.5 and cut.checkpoint() is True  # under one wait of the pool's 3 s: a busy machine has room
    assert cut.store.read()[0].kind == "snapshot"
    proxy.close()
    fresh = Lamar(url, k=2, seed=3)
    assert fresh.stats()["episodes"] == 5
    for engine in (cut, fresh):
        engine.close()


def test_a_wait_for_the_lock_the_server_times_out_is_not_called_a_lost_connection(
        postgres_url: str, namespace: str) -> None:
    """A lock_timeout (or statement_timeout) the application set ends the wait on a connection
    that is still there: the error names the timeout, and says nothing was written."""
    url = namespace_url(postgres_url, namespace)
    lam = _engine(url)
    waiting = Lamar(namespace_url(postgres_url, namespace, options="-c lock_timeout=300"), k=2, seed=2)
    conn, _ = _late_episode(url, lam)  # holds the namespace's write lock shared
    with pytest.raises(StoreError) as raised:
        waiting.checkpoint()
    conn.commit()
    conn.close()
    assert "lock timeout" in str(raised.value) and "nothing was written" in str(raised.value)
    assert "lost the connection" not in str(raised.value)
    assert "snapshot" not in {e.kind for e in lam.store.read()}
    assert waiting.checkpoint() is True
    for engine in (lam, waiting):
        engine.close()


def _divide_by_zero(conn: psycopg.Connection[Any]) -> None:
    conn.execute("SELECT 1/0")


def _time_out(conn: psycopg.Connection[Any]) -> None:
    with conn.transaction():
        conn.execute("SET LOCAL statement_timeout = 50")
        conn.execute("SELECT pg_sleep(1)")


@pytest.mark.parametrize(("work", "error"), [(_divide_by_zero, "division by zero"), (_time_out, "statement timeout")])
def test_a_statement_that_fails_under_the_lock_is_reported_as_itself_not_as_the_lock(
        postgres_url: str, namespace: str, work: Any, error: str) -> None:
    """The lock was taken and the work under it failed (an SQL error, a timeout on a connection
    still there): the error says so, not that the lock could not be taken or its connection was
    lost, and the lock is released."""
    url = namespace_url(postgres_url, namespace)
    _engine(url).close()
    store = PostgresStore(url)
    with (pytest.raises(StoreError) as raised, locks.exclusive(store.connections),
          store.connections.connection() as conn):
        work(conn)
    assert error in str(raised.value) and "under the write lock" in str(raised.value)
    assert "cannot lock" not in str(raised.value) and "lost the connection" not in str(raised.value)
    writer = Lamar(namespace_url(postgres_url, namespace, options="-c lock_timeout=2000"), k=2, seed=3)
    writer.report(writer.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    for closing in (store, writer):
        closing.close()


def test_a_release_that_fails_after_the_work_failed_does_not_hide_the_works_error(
        postgres_url: str, namespace: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The work's own error says what went wrong; the release's failure closed the connection,
    lock and all."""
    url = namespace_url(postgres_url, namespace)
    _engine(url).close()
    store = PostgresStore(url)
    release = locks._unlock

    def failing(conn: psycopg.Connection[Any], key: tuple[int, str]) -> None:
        release(conn, key)
        raise psycopg.OperationalError("the release failed")

    monkeypatch.setattr(locks, "_unlock", failing)
    with pytest.raises(LamarError, match="the work failed"), locks.exclusive(store.connections):
        raise LamarError("the work failed")
    store.close()
