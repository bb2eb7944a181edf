"""A role whose statement_timeout is shorter than the set-up each new pooled connection runs: every
call fails at once saying what to do, with nothing of it written, and the store works again once
the timeout is raised."""

from __future__ import annotations

import time

import psycopg
import pytest

from lamar import Lamar, StoreError
from lamar.store import Event
from lamar.store.postgres import PostgresStore
from tests.pg_role import set_timeout
from tests.store.test_postgres import namespace_url

_SAID = r"refused to set up a new one \(canceling statement due to statement timeout\).*nothing of this call was kept"
_FIX = r"raise it for the role \(ALTER ROLE name SET statement_timeout"


@pytest.mark.parametrize("fold", ["off", "on"], ids=["log", "fold"])
def test_a_statement_timeout_too_short_for_the_set_up_fails_each_call_at_once(
        postgres_url: str, pg_role: str, fold: str) -> None:
    """Each call fails well within one wait of the pool's `timeout`, rather than waiting it out (twice:
    for a connection, then again as a lost one) while the pool retries the set-up in the background."""
    base = postgres_url.replace("postgres@", f"{pg_role}@", 1)
    url = namespace_url(base, "pgtimeout", lamar_fold=fold, options=f"-c search_path={pg_role}")
    store = PostgresStore(url, timeout=30)
    store.append([Event("status", {"id": "a", "status": "active"})])
    # The set-up is one short query, under the smallest statement_timeout (1 ms) on a quick server, where the
    # write after it would be refused instead: compiled by the server's JIT each time, it takes far longer.
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for knob in ("jit = on", "jit_above_cost = 0", "jit_inline_above_cost = 0", "jit_optimize_above_cost = 0"):
            conn.execute(f"ALTER ROLE {pg_role} SET {knob}")
    set_timeout(postgres_url, pg_role, "SET statement_timeout = 1")
    append = lambda: store.append([Event("status", {"id": "b", "status": "active"})])
    read = lambda: store.connections.run(lambda conn: conn.execute("SELECT 1"))  # read() may answer from its cache
    for call in (append, read, append):
        started = time.monotonic()
        with pytest.raises(StoreError, match=_SAID) as raised:
            call()
        assert time.monotonic() - started < 10  # well short of one wait of `timeout`
        assert raised.value.advice.startswith("; the role's or the URL's statement_timeout is too short")
        assert "lost the connection" not in str(raised.value)
    with pytest.raises(StoreError, match=_FIX):
        Lamar(store).stats()
    set_timeout(postgres_url, pg_role, "RESET statement_timeout")
    deadline = time.monotonic() + 60
    while True:  # the pool sets up a connection again on its own, without the store being reopened
        try:
            events = store.read()
            break
        except StoreError:
            assert time.monotonic() < deadline, "the store never worked again"
            time.sleep(0.2)
    assert [e.data["id"] for e in events] == ["a"]  # the refused append wrote nothing
    store.close()


def test_a_statement_timeout_too_short_for_the_migration_says_what_to_do(postgres_url: str, pg_role: str) -> None:
    """The first open creates the tables, which takes longer than a statement_timeout of 1 ms."""
    base = postgres_url.replace("postgres@", f"{pg_role}@", 1)
    url = namespace_url(base, "pgtimeout", options=f"-c search_path={pg_role} -c statement_timeout=1")
    with pytest.raises(StoreError, match=f"cannot open .*statement timeout; .*{_FIX}"):
        PostgresStore(url)


def test_a_busy_pool_after_a_refused_set_up_waits_for_its_own_connection(postgres_url: str, pg_role: str) -> None:
    """Connections set up before the timeout was lowered still work: a call that finds them busy while
    the pool's new set-up is refused waits for one, as for any busy pool, rather than failing on it."""
    import threading

    base = postgres_url.replace("postgres@", f"{pg_role}@", 1)
    url = namespace_url(base, "pgtimeout", options=f"-c search_path={pg_role}")
    store = PostgresStore(url, timeout=30, pool_size=8)
    store.append([Event("status", {"id": "a", "status": "active"})])
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # new sessions only: the pool's keep 0
        conn.execute(f"ALTER ROLE {pg_role} SET statement_timeout = 1")
    held, release = threading.Semaphore(0), threading.Event()

    def hold(conn: psycopg.Connection) -> None:
        held.release()
        release.wait(20)

    opened = store.connections._pool.get_stats()["pool_size"]  # each set up before the timeout was lowered
    holders = [threading.Thread(target=store.connections.run, args=(hold,)) for _ in range(opened)]
    for holder in holders:
        holder.start()
    for _ in holders:
        assert held.acquire(timeout=10)
    threading.Timer(3, release.set).start()  # freed after the call's first wait, and before its timeout
    try:
        row = store.connections.run(lambda conn: conn.execute("SELECT 1").fetchone())
    finally:
        release.set()
        for holder in holders:
            holder.join()
        store.close()
    assert row == (1,)
