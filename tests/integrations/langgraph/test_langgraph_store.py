"""LangGraphStore over real LangGraph stores: the core conformance suite, writers racing, layout."""

from __future__ import annotations

import doctest
import json
import sqlite3
import subprocess
import threading
import time
import unittest
import uuid
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

import lamar_langgraph.store
from lamar import EventConflict, Experience, InvalidArgument, Lamar, Scope, Signal, StoreError
from lamar.conformance import StoreConformance
from lamar.store import Event
from lamar_langgraph import LangGraphStore, sanitize_namespace
from tests.conftest import POSTGRES_URL, require_service

# What every worker process does once its store is open: say so (READY), then wait for the
# start signal (GO), so that the test controls when writing begins. Importing langgraph takes
# 1-4 s on a busy 2-core machine, longer than the suite waits before its SIGKILL.
START_LINE = """
import os, pathlib, time
READY = GO = None

def at_start_line():
    if READY:
        pathlib.Path(READY).touch()
    while GO and not os.path.exists(GO):
        time.sleep(0.01)
"""

# How a worker opens the SQLite-backed LangGraph store. A lease shorter than the default 30 s
# lets a worker go on within the test after the suite SIGKILLs one that held the lock.
SQLITE_OPENER = START_LINE + """
import sqlite3
from langgraph.store.sqlite import SqliteStore
from lamar_langgraph import LangGraphStore

def open_store(location):
    conn = sqlite3.connect(location, check_same_thread=False, isolation_level=None, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")  # no fsync per put; a killed process loses nothing
    store = SqliteStore(conn)
    store.setup()
    at_start_line()
    return LangGraphStore(store, ("lamar", "conformance"), lease=5.0, location=location)
"""

POSTGRES_OPENER = START_LINE + """
import psycopg
from psycopg.rows import dict_row
from langgraph.store.postgres import PostgresStore
from lamar_langgraph import LangGraphStore

def open_store(location):
    url, label = location.split("#")
    conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
    conn.execute("SET synchronous_commit = off")  # like SQLite's synchronous=NORMAL
    store = PostgresStore(conn)
    store.setup()
    at_start_line()
    return LangGraphStore(store, ("lamar", label), lease=5.0, location=location)
"""


def run_opener(opener: str, location: str) -> LangGraphStore:
    scope: dict[str, Any] = {}
    exec(opener, scope)  # noqa: S102 - the very code the worker processes run
    return scope["open_store"](location)  # type: ignore[no-any-return]


class ProcessesFromTheStartLine(StoreConformance):
    """Workers count as started once their store is open; `together` holds them at the start
    line until all are ready, so that their writes overlap."""

    rewritable = False  # LangGraphStore has no rewrite(): its log keeps growing (documented)

    together = False

    def worker(self, log: Path, seed: int, episodes: int) -> subprocess.Popen[bytes]:
        ready = self.folder / f"ready-{uuid.uuid4().hex}"
        go = self.folder / "go"
        line = f"\nREADY = {str(ready)!r}\nGO = {str(go) if self.together else None!r}\n"
        base = self.opener
        self.opener = base + line
        try:
            worker = super().worker(log, seed, episodes)
        finally:
            self.opener = base
        deadline = time.monotonic() + 60
        while not ready.exists() and worker.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        return worker


class TestLangGraphStoreOverInMemoryStore(StoreConformance, unittest.TestCase):
    """An InMemoryStore lives in one process; reopening wraps the same object again."""

    rewritable = False  # LangGraphStore has no rewrite(): its log keeps growing (documented)

    processes = False

    def location(self, folder: Path) -> str:
        return f"memory:{folder}"

    def open(self, location: str) -> LangGraphStore:
        shared = _IN_MEMORY.setdefault(location, InMemoryStore())
        return LangGraphStore(shared, location=location)

    def stored_bytes(self, store: Any) -> bytes:
        return memory_items(_IN_MEMORY[self.loc], ("lamar",))


_IN_MEMORY: dict[str, InMemoryStore] = {}


def memory_items(base: InMemoryStore, prefix: tuple[str, ...]) -> bytes:
    """Every item an InMemoryStore holds under `prefix`, its values as JSON."""
    items = base.search(prefix, limit=1_000_000)
    return "\n".join(json.dumps([item.namespace, item.key, item.value]) for item in items).encode("utf-8")


def postgres_rows(prefix: str) -> bytes:
    """Every row of LangGraph's `store` table whose prefix is LIKE `prefix`, as PostgreSQL prints it."""
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        rows = conn.execute("SELECT s::text FROM store s WHERE prefix LIKE %s", (prefix,)).fetchall()
    return "\n".join(row[0] for row in rows).encode("utf-8")


class TestLangGraphStoreOverSqliteStore(ProcessesFromTheStartLine, unittest.TestCase):
    """A SqliteStore file shared by several processes, each with its own connection."""

    opener = SQLITE_OPENER

    def location(self, folder: Path) -> str:
        return str(folder / "langgraph-store.db")

    def open(self, location: str) -> LangGraphStore:
        return run_opener(SQLITE_OPENER, location)


class TestLangGraphStoreOverPostgresStore(ProcessesFromTheStartLine, unittest.TestCase):
    """A PostgresStore; each test gets its own namespace. The suite's process tests (300
    episodes, three SIGKILL rounds) take 30-50 s over PostgreSQL on this machine, so a shorter
    run of two processes replaces them; SIGKILL safety is the same code as over SQLite."""

    opener = POSTGRES_OPENER
    processes = False
    together = True

    def location(self, folder: Path) -> str:
        require_service("PostgreSQL", "127.0.0.1", 5432)
        label = f"t{uuid.uuid4().hex}"
        self.addCleanup(_drop_label, label)  # leave the shared database clean
        return f"{POSTGRES_URL}#{label}"

    def open(self, location: str) -> LangGraphStore:
        return run_opener(POSTGRES_OPENER, location)

    def stored_bytes(self, store: Any) -> bytes:
        return postgres_rows(f"lamar.{self.loc.split('#')[1]}.%")

    def test_two_processes_writing_at_once_over_postgres_lose_nothing(self) -> None:
        lam = self.seeded()
        logs = [self.folder / f"w{i}.log" for i in range(2)]
        workers = [self.worker(log, seed, 15) for seed, log in enumerate(logs)]
        (self.folder / "go").touch()  # both are at the start line: off they go
        for worker in workers:
            _, err = worker.communicate(timeout=300)
            assert worker.returncode == 0, err.decode()[-2000:]
        done = [line for log in logs for line in log.read_text().split()]
        assert len(set(done)) == 30
        assert lam.stats()["episodes"] == 30 and lam.stats()["reports"] == 30
        seqs = [e.seq for e in lam.store.read()]
        assert seqs == list(range(1, len(seqs) + 1))

    def test_lessons_added_at_once_by_two_processes_are_listed_in_one_order(self) -> None:
        self.processes = True  # two writers of 12 adds each: a short run, unlike the suite's others
        super().test_lessons_added_at_once_by_two_processes_are_listed_in_one_order()


def _drop_label(label: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        # A test skipped before its first open never created LangGraph's table on a fresh database.
        if conn.execute("SELECT to_regclass('store')").fetchone() == (None,):
            return
        conn.execute("DELETE FROM store WHERE prefix LIKE %s", (f"lamar.{label}.%",))


def _episodes(lam: Lamar, count: int, seed: int) -> list[str]:
    done = []
    for i in range(count):
        rec = lam.recall({"task": f"t{(i + seed) % 2}"})
        lam.report(rec.episode_id, Signal.SHIPPED if (i * 7 + seed) % 3 else Signal.REVERTED)
        done.append(rec.episode_id)
    return done


def test_two_writers_in_threads_over_one_in_memory_store_lose_nothing() -> None:
    shared = InMemoryStore()
    seed_lam = Lamar(LangGraphStore(shared), k=2, seed=0)
    for i in range(4):
        seed_lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
    results: dict[int, list[str]] = {}
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:  # each thread is its own writer: its own LangGraphStore and its own engine
            results[n] = _episodes(Lamar(LangGraphStore(shared), k=2, seed=n), 150, n)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    done = results[0] + results[1]
    assert len(set(done)) == 300
    stats = seed_lam.stats()
    assert stats["episodes"] == 300 and stats["reports"] == 300
    seqs = [e.seq for e in seed_lam.store.read()]
    assert seqs == list(range(1, len(seqs) + 1))  # dense, in order, nothing lost or doubled


def test_racing_writers_claim_a_unique_key_exactly_once() -> None:
    shared = InMemoryStore()
    stores = [LangGraphStore(shared) for _ in range(6)]
    barrier = threading.Barrier(len(stores))
    outcomes: list[str] = []

    def claim(store: LangGraphStore, n: int) -> None:
        barrier.wait()
        try:
            store.append([Event("outcome", {"episode": "ep_1", "writer": n}, key="outcome:ep_1")])
            outcomes.append("won")
        except EventConflict:
            outcomes.append("lost")

    threads = [threading.Thread(target=claim, args=(s, n)) for n, s in enumerate(stores)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(outcomes) == ["lost"] * 5 + ["won"]
    assert [e.key for e in stores[0].read()] == ["outcome:ep_1"]


def test_a_writer_killed_before_its_commit_leaves_nothing_visible_and_blocks_nobody() -> None:
    shared = InMemoryStore()
    store = LangGraphStore(shared, lease=1.0)
    store.append([Event("status", {"id": "a", "status": "active"})])
    # What a writer killed between its event puts and its head put leaves behind: an entry
    # in the lock, an event and a key claim past the head.
    dead = LangGraphStore(shared, lease=1.0)
    dead._lock.acquire()
    dead._run([lamar_langgraph.store.PutOp(dead._events, "000000000002", {"seq": 2}),
               lamar_langgraph.store.PutOp(dead._keys, "outcome:e", {"seq": 2})])
    assert [e.data["id"] for e in store.read()] == ["a"]
    written = store.append([Event("outcome", {"episode": "e"}, key="outcome:e")])  # waits out the lease
    assert [e.seq for e in written] == [2]
    assert [e.key for e in store.read()] == [None, "outcome:e"]
    with pytest.raises(EventConflict):
        store.append([Event("outcome", {"episode": "e"}, key="outcome:e")])


class SlowEventPuts(InMemoryStore):
    """An InMemoryStore whose event puts stall, as a frozen writer would."""

    stall = 0.0

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        if any(isinstance(op, lamar_langgraph.store.PutOp) and op.namespace[-1] == "events" for op in ops):
            time.sleep(self.stall)
        return super().batch(ops)


def test_a_writer_that_stalls_past_half_its_lease_commits_nothing() -> None:
    # A write of more events than one commit batch holds puts its events, checks, then commits.
    many = [Event("status", {"id": f"l{i}", "status": "active"}) for i in range(lamar_langgraph.store._ONE_BATCH)]
    base = SlowEventPuts()
    store = LangGraphStore(base, lease=1.0)
    base.stall = 0.6  # over half the lease: another writer may have taken us for dead
    with pytest.raises(StoreError, match="nothing was committed"):
        store.append([*many, Event("outcome", {"episode": "e"}, key="outcome:e")])
    assert store.read() == []
    base.stall = 0.0
    assert [e.seq for e in store.append([Event("outcome", {"episode": "e"}, key="outcome:e")])] == [1]
    assert [e.key for e in store.read()] == ["outcome:e"]


class CountedBatches(InMemoryStore):
    """An InMemoryStore that counts its batches: each is a round trip on a database-backed store."""

    batches = 0

    def batch(self, ops: Any) -> Any:
        self.batches += 1
        return super().batch(ops)


def test_a_recall_and_its_report_cost_sixteen_store_round_trips() -> None:
    # Per write: the engine's read before it, four for the lock, the head with the key claims, one batch
    # for the events, the head and the lock's end, and the read after it with the next events beside
    # the head.
    base = CountedBatches()
    lam = Lamar(LangGraphStore(base, ordered_batch=True))  # its `batch` hands the ops to InMemoryStore's whole
    lam.add(Experience("the build fails", "read the log", scope=Scope(project="p")))
    lam.report(lam.recall({"project": "p"}).episode_id, Signal.SHIPPED)  # warm: the first write saves more
    base.batches = 0
    lam.report(lam.recall({"project": "p"}).episode_id, Signal.SHIPPED)
    assert base.batches == 16


def test_items_follow_the_documented_layout(tmp_path: Path) -> None:
    store = run_opener(SQLITE_OPENER, str(tmp_path / "layout.db"))
    store.append([Event("episode", {"id": "ep_9"}, key="episode:ep_9", time=12.5)])
    base = store.store
    head = base.get(("lamar", "conformance", "head"), "head")
    event = base.get(("lamar", "conformance", "events"), "000000000001")
    claim = base.get(("lamar", "conformance", "keys"), "episode:ep_9")
    assert head is not None and head.value["seq"] == 1
    assert event is not None and event.value["kind"] == "episode" and event.value["data"] == '{"id":"ep_9"}'
    assert claim is not None and claim.value == {"seq": 1}
    # the lock is released: the write's own entry is left idle (no ticket, nobody waits for it)
    assert [(w.key, w.value["ticket"], w.value["choosing"]) for w in base.search(("lamar", "conformance", "writers"))
            ] == [(store._writer, 0, False)]


def test_two_namespaces_in_one_base_store_are_two_lamar_stores() -> None:
    shared = InMemoryStore()
    a, b = LangGraphStore(shared, ("lamar", "a")), LangGraphStore(shared, ("lamar", "a.b"))
    a.append([Event("status", {"id": "x", "status": "active"}, key="k")])
    b.append([Event("status", {"id": "y", "status": "active"}, key="k")])
    assert [e.data["id"] for e in a.read()] == ["x"] and [e.data["id"] for e in b.read()] == ["y"]


def test_namespaces_are_sanitised_or_refused() -> None:
    assert sanitize_namespace("team.prod") == ("team%2Eprod",)
    assert sanitize_namespace(("a%2E", "b.c")) == ("a%252E", "b%2Ec")  # escapes stay distinct
    for bad in [(), ("lamar", ""), ("langgraph", "x"), ("lamar", 3), None, 3]:
        with pytest.raises(InvalidArgument):  # a LamarError, and still the ValueError it was
            sanitize_namespace(bad)  # type: ignore[arg-type]


def test_bad_arguments_are_lamar_errors_that_say_what_to_pass() -> None:
    shared = InMemoryStore()
    for build, words in [
        (lambda: LangGraphStore("app-store.db"), "wraps a langgraph BaseStore"),  # type: ignore[arg-type]
        (lambda: LangGraphStore(shared, namespace=None), "a namespace is a label"),  # type: ignore[arg-type]
        (lambda: LangGraphStore(shared, lease="30"), "lease is a positive number of seconds"),  # type: ignore[arg-type]
        (lambda: LangGraphStore(shared, timeout=0), "timeout is a positive number of seconds"),
        (lambda: LangGraphStore(shared, lease=float("nan")), "lease is a positive number of seconds"),
        (lambda: LangGraphStore(shared, compact="VACUUM"), "compact is a function"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(InvalidArgument, match=words):
            build()


def test_a_closed_store_refuses_work_and_leaves_the_base_store_open() -> None:
    shared = InMemoryStore()
    store = LangGraphStore(shared)
    store.append([Event("status", {"id": "x", "status": "active"})])
    store.close()
    with pytest.raises(StoreError):
        store.read()
    assert len(LangGraphStore(shared).read()) == 1


def test_backend_errors_become_store_errors(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "gone.db", check_same_thread=False, isolation_level=None)
    base = SqliteStore(conn)
    base.setup()
    store = LangGraphStore(base)
    conn.close()
    with pytest.raises(StoreError) as info:
        store.append([Event("status", {"id": "x", "status": "active"})])
    assert isinstance(info.value, OSError)


def test_a_langgraph_store_given_to_lamar_as_it_is_is_refused_with_the_wrapper_to_use(tmp_path: Path) -> None:
    """Lamar(InMemoryStore()) is the first thing a LangGraph user tries: the refusal names
    LangGraphStore, and the wrapped store works."""
    conn = sqlite3.connect(tmp_path / "graph.db", check_same_thread=False, isolation_level=None)
    for base in (InMemoryStore(), SqliteStore(conn)):
        with pytest.raises(StoreError, match=r"Lamar\(LangGraphStore\(store\)\)"):
            Lamar(base)
    with pytest.raises(StoreError) as other:
        Lamar(object())
    assert "LangGraphStore" not in str(other.value)
    base = SqliteStore(conn)
    base.setup()
    lam = Lamar(LangGraphStore(base))
    assert lam.get(lam.add(Experience("the build fails", "read the log"))).action == "read the log"
    conn.close()


def test_the_module_examples_run() -> None:
    for module in (lamar_langgraph.store,):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0


async def test_an_async_store_inside_its_event_loop_is_refused_saying_what_to_open() -> None:
    # Its synchronous calls fail inside the loop: said when the store is made, not as a failed read.
    from langgraph.store.sqlite.aio import AsyncSqliteStore

    async with AsyncSqliteStore.from_conn_string(":memory:") as store:
        with pytest.raises(InvalidArgument, match="needs a synchronous store.*open PostgresStore"):
            LangGraphStore(store)


def test_an_async_store_outside_its_event_loop_is_refused_saying_what_to_open(tmp_path: Path) -> None:
    # Outside its loop each synchronous call is handed to that loop, which fails once it is closed
    # and collides with the loop's own transactions: refused when the store is made, as inside.
    import asyncio

    from langgraph.store.sqlite.aio import AsyncSqliteStore

    loop = asyncio.new_event_loop()
    try:
        async def opened() -> AsyncSqliteStore:
            import aiosqlite

            return AsyncSqliteStore(await aiosqlite.connect(tmp_path / "async.db", isolation_level=None))

        store = loop.run_until_complete(opened())
        try:
            with pytest.raises(InvalidArgument, match=r"needs a synchronous store, and AsyncSqliteStore is async: "
                                                      r"open PostgresStore \(or SqliteStore\)"):
                LangGraphStore(store)
        finally:
            loop.run_until_complete(store.conn.close())
    finally:
        loop.close()

