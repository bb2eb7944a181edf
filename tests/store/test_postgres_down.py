"""A PostgreSQL server that goes away under an open store: calls give up within seconds (callers
that fail open go on), while a busy server that answers is still waited for."""

from __future__ import annotations

import socket
import threading
import time

import psycopg
import pytest

from lamar import Experience, Lamar, Scope, StoreError
from tests.store.test_postgres import (
    DroppingProxy,
    _database,
    backends,
    drop_namespaces,
    namespace_url,
    terminate,
    unique_namespace,
)


def _down(proxy: DroppingProxy, postgres_url: str, app: str) -> None:
    """Nothing listens on the proxy's port any more, and the store's open connections are cut."""
    proxy.refusing = True
    proxy._listener.shutdown(socket.SHUT_RDWR)  # wakes its accept(), which then lets the port go
    proxy.close()
    time.sleep(0.2)
    terminate(postgres_url, backends(postgres_url, app))
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", proxy.port), timeout=1).close()


@pytest.mark.parametrize("fold", ["off", "on"], ids=["log", "fold"])
def test_a_server_gone_away_fails_calls_within_seconds_not_the_pool_timeout(postgres_url: str, fold: str) -> None:
    namespace, app = unique_namespace("down"), unique_namespace("app")
    proxy = DroppingProxy()
    url = namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}", namespace,
                        sslmode="disable", application_name=app, lamar_fold=fold)
    try:
        lam = Lamar(url, k=3)  # the default timeout: 30 s
        lam.add(Experience(precondition="p", action="a", rationale="r", scope=Scope(project="x")))
        rec = lam.recall({"project": "x"})
        _down(proxy, postgres_url, app)
        waits = []
        for call in (lambda: lam.recall({"project": "x"}), lambda: lam.report(rec.episode_id, 1.0),
                     lambda: lam.recall({"project": "x"})):
            started = time.monotonic()
            with pytest.raises(StoreError, match="cannot reach.*the next call tries again"):
                call()
            waits.append(time.monotonic() - started)
        assert waits[0] < 5, waits  # a short wait for the pool, then a refused connection
        assert max(waits[1:]) < 0.5, waits  # the server is remembered as down: no wait at all
        lam.close()
    finally:
        proxy.close()
        drop_namespaces(postgres_url, namespace)


def test_a_busy_server_is_still_waited_for_past_the_first_second(postgres_url: str) -> None:
    """One pooled connection, held for 2.5 s by one thread: another thread's read waits for it
    (the server answers a connection of its own) and succeeds."""
    namespace = unique_namespace("busy")
    url = namespace_url(postgres_url, namespace, lamar_fold="off")
    try:
        lam = Lamar(url, k=3)
        lam.add(Experience(precondition="p", action="a", rationale="r", scope=Scope(project="x")))
        lam.close()
        from lamar.store.postgres import PostgresStore

        store = PostgresStore(url, pool_size=1)
        held = threading.Event()

        def hold() -> None:
            def slow(conn: psycopg.Connection) -> None:
                held.set()
                conn.execute("SELECT pg_sleep(2.5)")
            store.connections.run(slow)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(5)
        started = time.monotonic()
        assert len(store.read()) == 1
        assert 1.5 < time.monotonic() - started < 10
        holder.join()
        store.close()
    finally:
        drop_namespaces(postgres_url, namespace)


@pytest.mark.parametrize("fold", ["off", "on"], ids=["log", "fold"])
def test_a_checkpoint_after_the_server_ended_the_pooled_connections_works(postgres_url: str, fold: str) -> None:
    namespace, app = unique_namespace("ended"), unique_namespace("app")
    url = namespace_url(postgres_url, namespace, lamar_fold=fold, application_name=app)
    try:
        lam = Lamar(url, seed=0)
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
        lam.report(lam.recall({"project": "demo"}).episode_id, "shipped")
        terminate(postgres_url, backends(postgres_url, app))  # a server restart, as the pool sees it
        assert lam.checkpoint()
        assert [e.kind for e in lam.store.read(0)] == ["snapshot"]
        lam.close()
    finally:
        drop_namespaces(postgres_url, namespace)


_GONE_AWAY = """
import logging, sys
from lamar import Experience, Lamar, Scope, StoreError
from tests.store.test_postgres import DroppingProxy, _database, namespace_url
from tests.store.test_postgres_down import _down

postgres_url, namespace, app, configured = sys.argv[1:]
if configured == "yes":
    logging.basicConfig(level=logging.WARNING, format="logged %(name)s: %(message)s")
proxy = DroppingProxy()
url = namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}", namespace,
                    sslmode="disable", application_name=app, lamar_fold="off")
lam = Lamar(url, k=3)
lam.add(Experience(precondition="p", action="a", rationale="r", scope=Scope(project="x")))
lam.recall({"project": "x"})
_down(proxy, postgres_url, app)
try:
    lam.recall({"project": "x"})
except StoreError as exc:
    print("lamar:", exc, file=sys.stderr)
lam.close()
"""


@pytest.mark.parametrize("configured", ["no", "yes"], ids=["no-logging", "app-logging"])
def test_a_server_gone_away_is_said_once_by_lamar_not_by_the_pools_threads(postgres_url: str,
                                                                          configured: str) -> None:
    """A CLI, hook or server prints Lamar's StoreError, not the pool's per-attempt warnings that
    Python's last-resort handler would write to stderr; an application that configures logging
    still receives them."""
    import subprocess
    import sys
    from pathlib import Path

    namespace, app = unique_namespace("quiet"), unique_namespace("app")
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run([sys.executable, "-c", _GONE_AWAY, postgres_url, namespace, app, configured],
                              capture_output=True, text=True, timeout=60, cwd=root, check=False,
                              env={**__import__("os").environ, "PYTHONPATH": str(root)})
    finally:
        drop_namespaces(postgres_url, namespace)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines and lines[-1].startswith("lamar: cannot reach"), done.stderr
    pool = [line for line in lines if "connect" in line and not line.startswith("lamar:")]
    if configured == "no":
        assert lines == [lines[-1]], done.stderr
    else:
        assert any(line.startswith("logged psycopg.pool:") for line in pool), done.stderr


@pytest.mark.parametrize("fold", ["off", "on"], ids=["log", "fold"])
def test_an_erase_whose_commit_stalls_on_a_half_open_link_ends_that_backend_and_finishes(
        postgres_url: str, fold: str) -> None:
    """The scrub's COMMIT never reaches the server, which keeps its transaction open, holding the
    namespace's locks: the retry must not wait behind them for ever."""
    namespace, app = unique_namespace(), unique_namespace("app")
    proxy = DroppingProxy()
    url = namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}", namespace,
                        sslmode="disable", lamar_fold=fold, application_name=app)
    try:
        lam = Lamar(url, k=1)
        exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
        proxy.cuts = ["stall"]  # the scrub's COMMIT: erase's first
        done: list[object] = []
        eraser = threading.Thread(target=lambda: done.append(lam.erase(exp_id)), daemon=True)
        eraser.start()
        eraser.join(timeout=30)
        assert done, "erase still waits behind the stalled transaction's locks"
        assert lam.get(exp_id).action == "[erased]"
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            kinds = [row[0] for row in conn.execute("SELECT kind FROM lamar_events WHERE namespace = %s "
                                                    "AND kind = 'erase'", (namespace,)).fetchall()]
        assert kinds == ["erase"]
        lam.close()
    finally:
        terminate(postgres_url, backends(postgres_url, app))
        proxy.close()
        drop_namespaces(postgres_url, namespace)
