"""`Lamar.erase` over `LangGraphStore` on real LangGraph stores: the lesson's text and its
episodes' contexts leave every item and every byte the database keeps (an InMemoryStore's items,
a SqliteStore's file and write-ahead log, the rows of a PostgresStore's table), every verdict stays,
and a new engine on the same BaseStore folds the same; what cannot be erased is refused unchanged."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Op, PutOp, Result
from langgraph.store.memory import InMemoryStore

import lamar_langgraph.store
from lamar import Experience, Lamar, Scope, Signal, StoreError
from lamar.state import erasure
from lamar.store import Event
from lamar_langgraph import LangGraphStore
from tests.conftest import POSTGRES_URL, require_service
from tests.integrations.langgraph.test_langgraph_store import (
    POSTGRES_OPENER,
    SQLITE_OPENER,
    _drop_label,
    memory_items,
    postgres_rows,
    run_opener,
)

SECRET = "Quillon Marrowdale"  # in the lesson's text
CONTEXT = "Vespertine"  # in the contexts of the episodes it was eligible in


class Backend:
    """A real BaseStore, a way to open a LangGraphStore over it again, and every byte it keeps."""

    def __init__(self, open_store: Callable[..., LangGraphStore], stored: Callable[[], bytes],
                 vacuums: Callable[[], int] | None = None) -> None:
        self.open = open_store
        self.stored = stored
        self.vacuums = vacuums  # how many times PostgreSQL has vacuumed LangGraph's table


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "memory":
        base = InMemoryStore()
        yield Backend(lambda **kw: LangGraphStore(base, **kw), lambda: memory_items(base, ("lamar",)))
    elif request.param == "sqlite":
        path = tmp_path / "lg.db"  # opened in WAL mode, as the conformance suite does
        yield Backend(lambda **kw: _reopen(run_opener(SQLITE_OPENER, str(path)), kw),
                      lambda: b"".join(p.read_bytes() for p in sorted(tmp_path.glob("lg.db*"))))
    else:
        require_service("PostgreSQL", "127.0.0.1", 5432)
        label = f"t{uuid.uuid4().hex}"
        yield Backend(lambda **kw: _reopen(run_opener(POSTGRES_OPENER, f"{POSTGRES_URL}#{label}"), kw),
                      lambda: postgres_rows(f"lamar.{label}.%"), _vacuums)
        _drop_label(label)


def _vacuums() -> int:
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        # The schema too: another schema's table named store (another agent's PostgresStore) hid this one.
        row = conn.execute("SELECT vacuum_count FROM pg_stat_user_tables "
                           "WHERE relname = 'store' AND schemaname = current_schema()").fetchone()
    assert row is not None, "LangGraph's store table is missing"
    return int(row[0])


def _reopen(store: LangGraphStore, options: dict[str, Any]) -> LangGraphStore:
    return LangGraphStore(store.store, store.namespace, location=store.location, **options) if options else store


def _evidence(lam: Lamar) -> dict[str, tuple[Any, ...]]:
    return {e.id: (ev.verdict, ev.lift, ev.lower, ev.upper, ev.randomized, ev.injected, ev.eligible)
            for e in lam.experiences() for ev in [lam.evidence(e.id)]}


def _lessons_and_episodes(lam: Lamar, episodes: int = 120) -> str:
    secret = lam.add(Experience(f"{SECRET}'s deploy fails", f"page {SECRET}", rationale=f"{SECRET} asked",
                                scope=Scope(task="t0")))
    for i in range(3):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
    lam.edit(secret, rationale=f"{SECRET} asked twice", evidence="keep")  # an edit event holds the text too
    rng = random.Random(7)
    for n in range(episodes):
        rec = lam.recall({"task": f"t{n % 2}", "user": CONTEXT if n % 2 == 0 else "plain"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
    return secret


def test_erase_leaves_no_text_in_the_database_and_every_verdict_as_it_was(backend: Backend) -> None:
    lam = Lamar(backend.open(), k=2, seed=3)
    secret = _lessons_and_episodes(lam)
    lam.close()  # saves the engine's state beside the log: one more copy of the text
    lam = Lamar(backend.open(), k=2, seed=3)
    assert SECRET.encode() in backend.stored() and CONTEXT.encode() in backend.stored()
    before, vacuums = _evidence(lam), backend.vacuums() if backend.vacuums else 0
    erased = lam.erase(secret, contexts=True, by="ops", reason="a request")
    if backend.vacuums:  # the old row versions are gone from the table's pages too, not only its rows
        assert backend.vacuums() > vacuums
    assert len(erased.episodes) == 60 and erased.events == 62  # 60 episodes, the lesson, its edit
    stored = backend.stored()
    for word in (SECRET, "Quillon", "Marrowdale", CONTEXT):
        assert word.encode() not in stored, f"{word} is still stored"
    assert b"plain" in stored and b"case 1" in stored  # what was not erased stays
    assert _evidence(lam) == before
    assert (lam.get(secret).action, lam.get(secret).status.value) == ("[erased]", "retired")
    repeat = lam.erase(secret)  # finishes what cleanup the first left, as the first: no second event
    assert (repeat.again, repeat.by, repeat.episodes) == (True, "ops", erased.episodes)
    assert sum(e.kind == "erase" for e in lam.store.read()) == 1
    lam.close()
    again = Lamar(backend.open(), k=2, seed=3)  # a new engine on the same BaseStore folds the log anew
    assert _evidence(again) == before
    assert again.get(secret).action == "[erased]" and again.episode(erased.episodes[0]).context == {}
    assert [e.kind for e in again.store.read()][-1] == "erase"
    again.close()


def test_a_scrub_naming_an_event_wrongly_changes_nothing(backend: Backend) -> None:
    store = backend.open()
    written = store.append([Event("status", {"id": f"s{i}", "status": "active", "reason": f"{SECRET} {i}"},
                                  key=f"k{i}", time=float(i + 1)) for i in range(3)])
    store.save_state(written[-1].seq, f"a state quoting {SECRET}")
    first = Event("status", {"id": "s0", "status": "active"}, "k0", written[0].seq, 1.0)
    for wrong in (Event("outcome", {"id": "s2"}, "k2", written[2].seq, 3.0),  # another kind
                  Event("status", {"id": "s2"}, "k2", written[1].seq, 3.0),  # another seq
                  Event("status", {"id": "s2"}, "k2", written[2].seq, 9.0),  # another time
                  Event("status", {"id": "s2"}, "k9", written[2].seq, 3.0),  # another key
                  Event("status", {"id": "s2"}, "k2", written[2].seq + 1, 3.0)):  # past the head
        with pytest.raises(ValueError, match="nothing was changed"):
            store.scrub([first, wrong])  # the first is named rightly: it is not replaced either
        assert [e.data for e in store.read()] == [e.data for e in written]
        assert store.load_state() == f"a state quoting {SECRET}"
    assert store.scrub([Event(e.kind, {"id": e.data["id"]}, e.key, e.seq, e.time) for e in written]) == 3
    assert [e.data for e in store.read()] == [{"id": "s0"}, {"id": "s1"}, {"id": "s2"}]
    assert store.load_state() is None and SECRET.encode() not in backend.stored()


def test_compact_runs_after_the_backends_own_step(backend: Backend) -> None:
    calls: list[str] = []
    lam = Lamar(backend.open(compact=lambda: calls.append("compact")), k=1, seed=1)
    secret = lam.add(Experience(f"{SECRET}'s build fails", "read the log", scope=Scope(task="t")))
    lam.erase(secret)
    # Once as the saved state is dropped before the erase event, once after the scrub behind it.
    assert calls == ["compact", "compact"] and SECRET.encode() not in backend.stored()
    lam.close()


class OtherStore(BaseStore):
    """A BaseStore Lamar knows nothing of (here it keeps its items in an InMemoryStore)."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.inner = InMemoryStore()
        self.fail_at = fail_at  # the how-many-th batch that puts events fails, once
        self.event_puts = 0

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if any(isinstance(op, PutOp) and op.namespace[-1] == "events" for op in ops):
            self.event_puts += 1
            if self.event_puts == self.fail_at:
                self.fail_at = None
                raise ConnectionError("the database went away")
        return self.inner.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return self.batch(ops)


def test_an_unknown_base_store_without_compact_refuses_to_erase_and_changes_nothing() -> None:
    base = OtherStore()
    lam = Lamar(LangGraphStore(base), k=1, seed=1)
    secret = lam.add(Experience(f"{SECRET}'s deploy fails", "page them", scope=Scope(task="deploy")))
    lam.report(lam.recall({"task": "deploy"}).episode_id, Signal.SHIPPED)
    lam.close()
    lam = Lamar(LangGraphStore(base), k=1, seed=1)
    items = memory_items(base.inner, ("lamar",))
    with pytest.raises(StoreError, match="compact="):
        lam.erase(secret)
    assert memory_items(base.inner, ("lamar",)) == items  # not a value, not the saved state
    assert lam.get(secret).action == "page them" and lam.get(secret).status.value == "active"
    with pytest.raises(StoreError, match="compact="):
        lam.store.scrub([])  # type: ignore[attr-defined]
    calls: list[int] = []
    erasing = Lamar(LangGraphStore(base, compact=lambda: calls.append(1)), k=1, seed=1)
    erasing.erase(secret)
    assert calls == [1, 1] and SECRET.encode() not in memory_items(base.inner, ("lamar",))
    with pytest.raises(TypeError, match="compact"):
        LangGraphStore(base, compact="VACUUM")  # type: ignore[arg-type]


class EphemeralStore(OtherStore):
    """An unknown BaseStore whose name is read with "an"."""


def test_the_refusal_names_the_unknown_store_with_its_article() -> None:
    lam = Lamar(LangGraphStore(EphemeralStore()), k=1, seed=1)
    with pytest.raises(StoreError, match="cannot tell how an EphemeralStore drops the values it replaces"):
        lam.store.scrub([])  # type: ignore[attr-defined]
    lam.close()


def _reported_lesson(episodes: int) -> tuple[OtherStore, Lamar, str]:
    """A lesson on an `OtherStore`, and that many reported episodes whose contexts name the secret."""
    base = OtherStore()
    lam = Lamar(LangGraphStore(base, compact=lambda: None), k=1, seed=2)
    secret = lam.add(Experience(f"{SECRET}'s deploy fails", "page them", scope=Scope(task="t")))
    for n in range(episodes):
        lam.report(lam.recall({"task": "t", "user": CONTEXT}).episode_id, Signal.SHIPPED if n % 3 else Signal.REVERTED)
    return base, lam, secret


def test_a_scrub_cut_short_keeps_every_verdict_and_erase_again_finishes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # A scrub of many events takes several batches (500 here instead of 5000, for speed); over an
    # unknown BaseStore even one batch need not be atomic. The second batch fails: 120 are left.
    monkeypatch.setattr(lamar_langgraph.store, "_SCRUB_BATCH", 500)
    base, lam, secret = _reported_lesson(620)
    before = _evidence(lam)
    base.event_puts, base.fail_at = 0, 3  # the erase event is the first put, the scrub's batches follow
    with pytest.raises(StoreError, match="went away"):
        lam.erase(secret, contexts=True)
    stored = memory_items(base.inner, ("lamar",))
    assert CONTEXT.encode() in stored and SECRET.encode() in stored  # the lesson's event goes last
    # The erase event went first: every read shows the lesson erased, with its evidence kept.
    assert _evidence(lam) == before and lam.get(secret).action == "[erased]"
    assert Lamar(LangGraphStore(base), k=1, seed=2).get(secret).action == "[erased]"
    erased = lam.erase(secret, contexts=True)  # again: what is left is scrubbed
    assert erased.events == 121  # the 120 episodes of the failed batch and the lesson's event
    stored = memory_items(base.inner, ("lamar",))
    assert CONTEXT.encode() not in stored and SECRET.encode() not in stored
    assert _evidence(lam) == before
    assert _evidence(Lamar(LangGraphStore(base), k=1, seed=2)) == before


def test_a_scrub_of_more_events_than_one_batch_holds(backend: Backend) -> None:
    # 6000 events: two batches, each one SQL statement within SQLite's and PostgreSQL's bounds. The
    # default lease (30 s), not the conformance's short one: a 2 000-event write on a loaded machine
    # can take longer than half of 5 s, and this test is of the scrub, not of a writer taken for dead.
    store = backend.open(lease=30.0)
    written = [e for start in range(0, 6000, 2000)
               for e in store.append([Event("status", {"id": f"s{i}", "reason": f"{SECRET} {i}"}, time=1.0)
                                      for i in range(start, start + 2000)])]
    assert store.scrub([Event(e.kind, {"id": e.data["id"]}, e.key, e.seq, e.time) for e in written]) == 6000
    assert [e.data for e in store.read()] == [{"id": f"s{i}"} for i in range(6000)]
    assert SECRET.encode() not in backend.stored()


def test_a_sqlite_store_whose_journal_can_keep_old_pages_refuses_to_erase(tmp_path: Path) -> None:
    import sqlite3

    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(tmp_path / "persist.db", check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=PERSIST")
    base = SqliteStore(conn)
    base.setup()
    lam = Lamar(LangGraphStore(base), k=1, seed=1)
    secret = lam.add(Experience(f"{SECRET}'s deploy fails", "page them", scope=Scope(task="deploy")))
    events = [e.data for e in lam.store.read()]
    with pytest.raises(StoreError, match="PERSIST"):
        lam.erase(secret)
    assert [e.data for e in lam.store.read()] == events and lam.get(secret).action == "page them"
    conn.close()


def test_an_erase_a_reader_keeps_from_compacting_says_nothing_was_scrubbed(tmp_path: Path) -> None:
    import sqlite3

    from langgraph.store.sqlite import SqliteStore

    path = tmp_path / "busy.db"
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=0.2)  # not 30 s of waiting
    conn.execute("PRAGMA journal_mode=WAL")
    base = SqliteStore(conn)
    base.setup()
    lam = Lamar(LangGraphStore(base, location=str(path)), k=1, seed=1)
    secret = lam.add(Experience(f"{SECRET}'s deploy fails", "page them", scope=Scope(task="deploy")))
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM store").fetchone()  # a read transaction pins the write-ahead log
    with pytest.raises(StoreError) as refused:
        lam.erase(secret)
    # The erase's first step scrubs no event: the refusal neither says it did nor asks for a scrub.
    assert str(refused.value) == (f"lesson {secret} was not erased: {path}: readers kept its write-ahead log from "
                                  "being emptied; wait until no one reads it; then erase it again")
    assert lam.get(secret).action == "page them" and not any(e.kind == "erase" for e in lam.store.read())
    reader.execute("COMMIT")
    reader.close()
    lam.erase(secret)  # once no one reads it
    assert lam.get(secret).action == "[erased]"
    assert SECRET.encode() not in b"".join(p.read_bytes() for p in sorted(tmp_path.glob("busy.db*")))
    conn.close()


def test_the_text_a_checkpointer_keeps_goes_only_with_its_threads(tmp_path: Path) -> None:
    """Erase reaches Lamar's store, not a checkpointer: the recall node's `lamar_prompt` keeps the
    lesson's text in the thread's checkpoints until the thread is deleted and the file compacted,
    as docs/langgraph.md ("Erasing a lesson") says to do."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from lamar_langgraph import LamarState, recall_node
    from tests.integrations.langgraph.graphs import in_line

    lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    slip = lam.add(Experience(f"{SECRET}'s deploy fails", f"page {SECRET}", scope=Scope(task="deploy")))
    graph = in_line(LamarState, ("recall", recall_node(lam)))
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    saver = SqliteSaver(conn)
    graph.compile(checkpointer=saver).invoke({"lamar_context": {"task": "deploy"}},
                                             {"configurable": {"thread_id": "t1"}})

    def kept() -> bool:
        return any(SECRET.encode() in p.read_bytes() for p in tmp_path.glob("checkpoints.db*"))

    lam.erase(slip, by="the DPO", reason="a person's name")
    assert kept() and not any(SECRET.encode() in p.read_bytes() for p in tmp_path.glob("lessons.db*"))
    saver.delete_thread("t1")
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert not kept()


def test_a_state_read_before_the_erase_and_saved_after_it_is_not_kept(backend: Backend) -> None:
    """An engine that folded the lesson reads the log to save its state, and another erases the
    lesson before that save lands: the store does not keep that state (it holds the text)."""
    writer = Lamar(backend.open(), k=2, seed=1)
    secret = writer.add(Experience(f"{SECRET}'s build fails", "read the log", scope=Scope(task="t")))
    for _ in range(40):  # enough writes since its last save for close to save the state
        writer.report(writer.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    saving, go = threading.Event(), threading.Event()
    save_state = writer.store.save_state  # type: ignore[attr-defined]

    def paused(seq: int, text: str) -> None:
        saving.set()
        assert go.wait(60)
        save_state(seq, text)

    writer.store.save_state = paused  # type: ignore[attr-defined]
    closing = threading.Thread(target=writer.close)
    closing.start()
    assert saving.wait(60)  # it read the log: the erase comes before it saves
    eraser = Lamar(backend.open(), k=2, seed=2)
    eraser.erase(secret)
    go.set()
    closing.join(60)
    assert SECRET.encode() not in backend.stored()
    eraser.close()


def test_a_scrub_cut_short_leaves_the_erase_pending_for_the_next_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    # 499 episodes and the erase event fill the first batch, the lesson's event is the second,
    # which fails: the erase event has to stay pending, or no writer finishes the scrub.
    monkeypatch.setattr(lamar_langgraph.store, "_SCRUB_BATCH", 500)
    base, lam, secret = _reported_lesson(499)
    base.event_puts, base.fail_at = 0, 3  # the erase event, then the scrub's two batches
    with pytest.raises(StoreError, match="went away"):
        lam.erase(secret, contexts=True)
    left = SECRET.encode() in memory_items(base.inner, ("lamar",))
    pending = [e.data.get("pending") for e in lam.store.read(0) if e.kind == "erase"]
    assert pending == [True] or not left, "the scrub was cut short after it cleared the erase's marker"
    monkeypatch.setattr(erasure, "GRACE", 0.0)
    lam.recall({"task": "t"})  # the next write finishes the scrub
    assert SECRET.encode() not in memory_items(base.inner, ("lamar",))
    assert [e.data.get("pending") for e in lam.store.read(0) if e.kind == "erase"] == [None]


class _Cut:
    """Makes the how-many-th batch that puts events fail, after the part of it that `partly` lets land."""

    def __init__(self) -> None:
        self.at: int | None = None
        self.puts = 0
        self.partly: Callable[[list[Op]], list[Op]] = lambda ops: []

    def ops(self, ops: Iterable[Op]) -> list[Op]:
        ops = list(ops)
        if self.at is not None and any(isinstance(op, PutOp) and op.namespace[-1] == "events" for op in ops):
            self.puts += 1
            if self.puts == self.at:
                self.at = None
                raise ConnectionError("the database went away")
        return ops


@pytest.mark.parametrize("kind", ["memory", "postgres"])
def test_an_erase_cut_at_any_batch_stays_pending_and_erasing_again_finishes_it(kind: str, monkeypatch:
                                                                                pytest.MonkeyPatch) -> None:
    # The real stores' own batches (each of their scrub batches one transaction), cut between them: after the
    # erase event (the first batch), at each of the scrub's batches (7 events each here, not 5000) and at the
    # one that clears the erase's pending marker. Every cut leaves the lesson erased in every read, every verdict
    # as it was, and the erase pending while any text is left; `erase` again (or the next writer) finishes it.
    from langgraph.store.postgres import PostgresStore

    monkeypatch.setattr(lamar_langgraph.store, "_SCRUB_BATCH", 7)
    cut = _Cut()

    class CutMemory(InMemoryStore):
        def batch(self, ops: Iterable[Op]) -> list[Result]:
            return super().batch(cut.ops(ops))

    class CutPostgres(PostgresStore):
        def batch(self, ops: Iterable[Op]) -> list[Result]:
            return super().batch(cut.ops(ops))

    label = f"t{uuid.uuid4().hex}"
    if kind == "postgres":
        require_service("PostgreSQL", "127.0.0.1", 5432)
        import psycopg
        from psycopg.rows import dict_row

        conn = psycopg.connect(POSTGRES_URL, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        postgres = CutPostgres(conn)  # type: ignore[arg-type]
        postgres.setup()
        base: BaseStore = postgres

        def stored() -> bytes:
            return postgres_rows(f"lamar.{label}.%")
    else:
        base = CutMemory()

        def stored() -> bytes:
            return memory_items(base, ("lamar", label))  # type: ignore[arg-type]

    def opened() -> LangGraphStore:  # its batch hands the ops on whole and in order, as the real store's does
        return LangGraphStore(base, ("lamar", label), ordered_batch=True)

    try:
        for at in range(2, 6):
            lam = Lamar(opened(), k=1, seed=2)
            secret = lam.add(Experience(f"{SECRET}'s deploy fails", "page them", scope=Scope(task="t")))
            for n in range(20):
                lam.report(lam.recall({"task": "t", "user": CONTEXT}).episode_id, Signal.SHIPPED if n % 3 else 0.0)
            before = _evidence(lam)
            cut.at, cut.puts = at, 0
            with pytest.raises(StoreError, match="went away"):
                lam.erase(secret, contexts=True)
            left = SECRET.encode() in stored() or CONTEXT.encode() in stored()
            pending = [e.data.get("pending") for e in lam.store.read(0) if e.kind == "erase"]
            assert pending == [True], (at, pending)
            # 21 events to scrub (20 contexts and the lesson's event, which goes last): three batches, then the
            # one that clears the marker, cut after everything was scrubbed.
            assert left == (at < 5), at
            fresh = Lamar(opened(), k=1, seed=2)
            assert fresh.get(secret).action == "[erased]" and _evidence(fresh) == _evidence(lam) == before, at
            if at % 2:
                assert lam.erase(secret, contexts=True).again is True
            else:  # the next write of another engine, past the grace an eraser has to finish its own scrub
                monkeypatch.setattr(erasure, "GRACE", 0.0)
                fresh.recall({"task": "t"})
                monkeypatch.setattr(erasure, "GRACE", 60.0)
            assert SECRET.encode() not in stored() and CONTEXT.encode() not in stored(), at
            assert [e.data.get("pending") for e in lam.store.read(0) if e.kind == "erase"] == [None], at
            assert _evidence(Lamar(opened(), k=1, seed=2)) == before, at
            fresh.close()
            lam.close()
            if kind == "postgres":
                _drop_label(label)
            else:
                base = CutMemory()
    finally:
        if kind == "postgres":
            _drop_label(label)
            conn.close()
