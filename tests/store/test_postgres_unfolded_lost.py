"""A copy's unfolded append into a fold-mode namespace keeps the write lock it runs under, even when the
connection holding that lock is lost: its retry takes the lock again before it writes."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from lamar import Experience, Lamar
from lamar.store.base import Event
from lamar.store.postgres import PostgresStore
from lamar.store.postgres.locks import ROWS_LOCK
from lamar.store.postgres.wire import events_json
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

pytestmark = pytest.mark.postgres

_HOLDER = """SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND mode = 'ExclusiveLock' AND granted
    AND classid = %s::oid AND objid = hashtext(%s)::oid AND objsubid = 2"""
_WAITING = """SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
    AND classid = %s::oid AND objid = hashtext(%s)::oid AND objsubid = 2"""


def _events(lesson: str, *, retired: bool = False) -> list[Event]:
    with Lamar(":memory:") as lam:
        exp_id = lam.add(Experience(f"when {lesson} fails", "retry it"))
        if retired:  # a status event has no key: the write begins its transaction first
            lam.retire(exp_id, reason="superseded")
        return [Event(kind=e.kind, data=e.data, key=e.key, time=e.time) for e in lam.store.read(0)]


@pytest.mark.parametrize("retired", [False, True], ids=["keyed", "unkeyed"])
def test_a_retry_after_the_lock_holder_is_lost_waits_for_a_fold_write_in_flight(postgres_url: str,
                                                                                 retired: bool) -> None:
    # The server ends the connection that holds the namespace's write lock just before the copy's append is
    # sent; a fold-mode write (lamar_log, as a writer elsewhere runs it) then takes the lock shared and its seq,
    # and has not committed when the append is retried. The retry must take the lock again, so the copy's
    # events go after that write's seq and commit after it, as a settled reader counts on.
    ns = unique_namespace("suspects")
    url = namespace_url(postgres_url, ns) + "&lamar_fold=on"
    store = PostgresStore(url)
    side = psycopg.connect(postgres_url, autocommit=True)
    writer = psycopg.connect(postgres_url)
    appended = threading.Event()
    committed: list[float] = []
    fold_seq: list[int] = []
    committer = threading.Thread(target=lambda: commit_when_waited_for(), daemon=True)
    real = store._append_once

    def lost_before_sending(*args, **kwargs):  # type: ignore[no-untyped-def]
        if not fold_seq:
            (pid,) = side.execute(_HOLDER, (ROWS_LOCK, ns)).fetchone() or (None,)
            assert pid is not None, "the append runs under the write lock"
            side.execute("SELECT pg_terminate_backend(%s, 5000)", (pid,))
            row = writer.execute("SELECT lamar_log(%s, %s, %s::json)", (ns, ROWS_LOCK, events_json(_events("b"))))
            fold_seq.append(int(row.fetchone()[0]))
            committer.start()
        return real(*args, **kwargs)

    def commit_when_waited_for() -> None:
        while not appended.is_set() and not side.execute(_WAITING, (ROWS_LOCK, ns)).fetchone()[0]:
            time.sleep(0.01)
        committed.append(time.monotonic())
        writer.commit()

    store._append_once = lost_before_sending  # type: ignore[method-assign]
    try:
        copied = store.append_unfolded(_events("a", retired=retired))
        returned = time.monotonic()
        appended.set()
        committer.join()
        assert [e.seq for e in copied if e.seq < fold_seq[0]] == []  # the copy went after the fold write
        assert committed[0] < returned  # the fold write committed first
        assert [e.seq for e in store.read(0)] == sorted([fold_seq[0], *(e.seq for e in copied)])
    finally:
        appended.set()
        if committer.is_alive():
            committer.join()
        writer.close()
        side.close()
        store.close()
        drop_namespaces(postgres_url, ns)
