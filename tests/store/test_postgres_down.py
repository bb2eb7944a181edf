"""A PostgreSQL server that goes away under an open store: calls give up within seconds (callers
that fail open go on), while a busy server that answers is still waited for."""

from __future__ import annotations

import re
import socket
import threading
import time
from contextlib import ExitStack
from typing import Any

import psycopg
import pytest

from lamar import Experience, Lamar, Scope, StoreError
from lamar.store import Event
from lamar.store.postgres import PostgresStore
from tests.pg_role import member_role
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
    sys.stderr.write(f"lamar: {exc}\\n")  # one write: the pool's logging thread may write between two
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
    said = [line for line in lines if line.startswith("lamar: cannot reach")]
    assert len(said) == 1, done.stderr
    if configured == "no":
        assert lines == said, done.stderr
    else:
        # The pool's reconnecting thread goes on logging to the application's handlers until
        # close(), so its lines may come before and after Lamar's.
        pool = [line for line in lines if "connect" in line and not line.startswith("lamar:")]
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


@pytest.mark.parametrize("fold", ["off", "on"], ids=["log", "fold"])
def test_a_server_out_of_connection_slots_is_waited_for_once_and_says_what_to_do(
        postgres_url: str, fold: str) -> None:
    """The role's only slot is its store's pooled connection, held by another part of the program:
    a read and a write each wait out `timeout` once (not a second time through a retry, and not
    taken for a server that is down), then say the server has no slot left and what to do; a
    second store opened meanwhile says so at once."""
    namespace = unique_namespace("slots")
    url = namespace_url(postgres_url, namespace, lamar_fold=fold)
    PostgresStore(url).close()  # the schema, migrated by the tests' role
    full = (r"within 1.5 s: the server has no connection slot left \(.*too many connections for role.*\); "
            r"nothing was sent, so nothing of this call was kept\. Close idle connections of other clients.*"
            r"raise the role's CONNECTION LIMIT or the server's max_connections")
    try:
        with member_role(postgres_url, "lamar_slots", 1) as role:
            store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold=fold, user=role), pool_size=2,
                                  timeout=1.5)
            assert store.read() == []  # its pooled connection takes the role's only slot
            with store.connections.connection():
                for call in (lambda: store.append([Event("applied", {"proposal": "a"}, key="a")]), store.read):
                    started = time.monotonic()
                    with pytest.raises(StoreError, match=full):
                        call()
                    assert 1.4 < time.monotonic() - started < 2.9
                with pytest.raises(StoreError, match="cannot open .*too many connections for role.*CONNECTION LIMIT"):
                    PostgresStore(namespace_url(postgres_url, namespace, lamar_fold=fold, user=role))
            assert store.read() == []
            store.close()
    finally:
        drop_namespaces(postgres_url, namespace)


class _German:
    """psycopg, whose connect refused says the real server's words as its German catalogue does (a
    server whose lc_messages is de_DE): the refusal and its SQLSTATE stay the server's own."""

    def __getattr__(self, name: str) -> Any:
        return getattr(psycopg, name)

    @staticmethod
    def connect(*args: Any, **kwargs: Any) -> psycopg.Connection:
        try:
            return psycopg.connect(*args, **kwargs)
        except psycopg.OperationalError as exc:
            english = str(exc)
            german = re.sub(r'too many connections for role "(.*)"', r"zu viele Verbindungen von Rolle »\1«", english)
            assert german != english
            raise psycopg.OperationalError(german) from None


@pytest.mark.parametrize("refusal", ["slots-in-german", "no-login"])
def test_a_connection_the_server_refuses_in_any_words_is_waited_for_not_taken_for_down(
        postgres_url: str, refusal: str) -> None:
    """Refused in words Lamar does not read (out of slots in German; a role no longer allowed to log
    in), the connection is still the server's answer (libpq's ping tells it by its SQLSTATE): the read
    waits out `timeout` once and quotes the server's words, with what to do if they say no slot is left."""
    namespace = unique_namespace("slots")
    url = namespace_url(postgres_url, namespace, lamar_fold="off")
    PostgresStore(url).close()
    try:
        with member_role(postgres_url, "lamar_slots", 1) as role:  # its store's pooled connection takes the one slot
            store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="off", user=role), pool_size=2,
                                  timeout=1.5)
            assert store.read() == []
            if refusal == "slots-in-german":
                store.connections.pg = _German()  # type: ignore[assignment]
                words = "zu viele Verbindungen von Rolle ».*«"
            else:
                with psycopg.connect(postgres_url, autocommit=True) as conn:
                    conn.execute(f'ALTER ROLE "{role}" NOLOGIN')
                words = "role .* is not permitted to log in"
            refused = (rf"within 1\.5 s: the server refused a connection \(.*{words}\); nothing was sent, so nothing "
                       r"of this call was kept\. If its words say it has no connection slot left, "
                       r"close idle connections"
                       r".*max_connections; otherwise set right what they name \(the role's LOGIN or password, the "
                       r"server's pg_hba\.conf\)$")
            with store.connections.connection():
                started = time.monotonic()
                with pytest.raises(StoreError, match=refused):
                    store.read()
                assert 1.4 < time.monotonic() - started < 2.9
            assert store.read() == []
            store.close()
    finally:
        drop_namespaces(postgres_url, namespace)


def test_a_connection_slot_freed_within_timeout_lets_the_waiting_write_through(postgres_url: str) -> None:
    """Out of slots is not down: the write waits, and takes the slot another client frees."""
    namespace = unique_namespace("slots")
    url = namespace_url(postgres_url, namespace, lamar_fold="off")
    PostgresStore(url).close()
    try:
        with member_role(postgres_url, "lamar_slots", 3) as role, ExitStack() as stack:
            store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="off", user=role), pool_size=3)
            assert store.read() == []
            others: list[psycopg.Connection] = []
            for _ in range(100):  # other clients take the slots the store's pool left (its open's ends first)
                try:
                    others.append(psycopg.connect(postgres_url, user=role))
                except psycopg.OperationalError:
                    if len(_role_backends(postgres_url, role)) >= 3:
                        break
                    time.sleep(0.05)
            pooled = 3 - len(others)
            for _ in range(pooled):  # the pool's own, held by other parts of the program
                stack.enter_context(store.connections.connection())
            threading.Timer(1.5, others[0].close).start()
            started = time.monotonic()
            store.append([Event("applied", {"proposal": "a"}, key="a")])
            assert time.monotonic() - started > 1.4
            stack.close()
            assert [e.key for e in store.read()] == ["a"]
            for other in others:
                other.close()
            store.close()
    finally:
        drop_namespaces(postgres_url, namespace)


def _role_backends(postgres_url: str, role: str) -> list[int]:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        return [row[0] for row in conn.execute("SELECT pid FROM pg_stat_activity WHERE usename = %s", (role,))]


@pytest.mark.parametrize("key", ["a", None], ids=["one-message", "two-messages"])
def test_a_lost_commit_with_no_slot_to_settle_it_on_says_so_long_before_settle_timeout(
        postgres_url: str, key: str | None) -> None:
    """A COMMIT lost on a half-open link, whose backend keeps the role's only slot: no connection can
    ask whether the write was kept. After one `timeout` the error says so, that the server has no
    slot left and what to do, and to read the store first; it does not ask again until
    `settle_timeout`, each ask waiting out `timeout` for a slot."""
    namespace = unique_namespace("slots")
    PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="off")).close()
    proxy = DroppingProxy()
    try:
        with member_role(postgres_url, "lamar_slots", 1) as role:
            url = namespace_url(f"postgresql://{role}@127.0.0.1:{proxy.port}/{_database(postgres_url)}", namespace,
                                sslmode="disable", lamar_fold="off")
            store = PostgresStore(url, pool_size=1, timeout=1.5, settle_timeout=30.0)
            assert store.read() == []
            proxy.cuts = ["stall"]
            started = time.monotonic()
            unknown = (r"could not learn whether the write was kept .*: the server has no connection slot left to ask "
                       r"on \(.*too many connections for role.*read the store before writing it again; to free a "
                       r"slot, close idle connections")
            with pytest.raises(StoreError, match=unknown):
                store.append([Event("applied", {"proposal": "a"}, key=key)])
            assert time.monotonic() - started < 5  # settle_timeout is 30 s
            store.close()
    finally:
        proxy.close()
        drop_namespaces(postgres_url, namespace)
