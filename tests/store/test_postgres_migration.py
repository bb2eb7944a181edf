"""PostgresStore's schema: created on first use, migrated from version 0, raced, refused if newer.

Each test gets its own PostgreSQL schema (via search_path in the URL), so "an empty database"
is really empty and the shared tables of other tests are not touched.
"""

from __future__ import annotations

import json
import random
import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from lamar import EventConflict, Experience, Lamar, Scope, Signal, StoreError
from lamar.store import Event, MemoryStore
from lamar.store.postgres import SCHEMA_VERSION, PostgresStore, row_text, schema
from tests.state.seam import folded

# The single-namespace layout of early builds, as it was created.
V0_LAYOUT = """
CREATE TABLE lamar_events (
    seq  bigserial PRIMARY KEY,
    kind text NOT NULL,
    key  text UNIQUE,
    time double precision NOT NULL,
    data text NOT NULL
)
"""


@pytest.fixture
def schema_url(postgres_url: str) -> Iterator[str]:
    """A URL whose connections live in a fresh, empty schema (dropped afterwards)."""
    schema = f"lamar_mig_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    yield f"{postgres_url}?options=-c%20search_path%3D{schema}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _sql(url: str, query: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(query, params)
        return cur.fetchall() if cur.description else []


def _tables(url: str) -> set[str]:
    rows = _sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    return {str(name) for (name,) in rows}


def _functions(url: str) -> set[str]:
    rows = _sql(url, "SELECT proname FROM pg_proc WHERE pronamespace = current_schema()::regnamespace")
    return {str(name) for (name,) in rows}


FUNCTIONS = {"lamar_append", "lamar_view", "lamar_fold_inputs", "lamar_write", "lamar_log", "lamar_enqueue",
             "lamar_turn", "lamar_held_key"}


def test_an_empty_database_gets_the_current_schema_once(schema_url: str) -> None:
    assert _tables(schema_url) == set()
    store = PostgresStore(schema_url)
    assert _tables(schema_url) == {"lamar_events", "lamar_namespaces", "lamar_migrations", "lamar_lessons",
                                   "lamar_rewards", "lamar_inbox"}
    assert _functions(schema_url) == FUNCTIONS
    store.append([Event("status", {"id": "a", "status": "active"})])
    store.close()
    PostgresStore(schema_url).close()  # opening again changes nothing
    assert _sql(schema_url, "SELECT version FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    with PostgresStore(schema_url) as again:
        assert [e.data["id"] for e in again.read()] == ["a"]


def test_a_version_0_store_is_migrated_with_its_history_intact(schema_url: str) -> None:
    # Build a history in memory, then lay it down in the version-0 table as early builds did.
    memory = Lamar(MemoryStore(), k=2, seed=4)
    ids = [memory.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t"))) for i in range(3)]
    rng = random.Random(2)
    for _ in range(30):
        memory.report(memory.recall({"task": "t"}).episode_id, rng.choice(list(Signal)))
    _sql(schema_url, V0_LAYOUT)
    for event in memory.store.read():
        _sql(schema_url, "INSERT INTO lamar_events (kind, key, time, data) VALUES (%s, %s, %s, %s)",
             (event.kind, event.key, event.time, event.data_json()))

    migrated = Lamar(PostgresStore(schema_url), k=2, seed=4)
    assert {i: migrated.evidence(i) for i in ids} == {i: memory.evidence(i) for i in ids}
    assert migrated.stats()["reports"] == 30
    assert [e.seq for e in migrated.store.read()] == [e.seq for e in memory.store.read()]
    next_seq = migrated.store.read()[-1].seq + 1
    rec = migrated.recall({"task": "t"})  # the old events sit in namespace "default"; it goes on
    migrated.report(rec.episode_id, Signal.SHIPPED)
    # numbered after every old event (the fold mode's seqs increase; its row builds take some too)
    assert [(e.kind, e.seq >= next_seq) for e in migrated.store.read(next_seq - 1)] == [("episode", True),
                                                                                        ("outcome", True)]
    assert _sql(schema_url, "SELECT version FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    migrated.close()


def test_a_version_2_store_gains_the_functions_and_works_in_the_fold_mode(schema_url: str) -> None:
    # Version 2 had every table of version 3 and sent the fold mode's statements as they were.
    _sql(schema_url, schema.script("create.sql"))
    _sql(schema_url, schema.script("to_v2.sql"))
    _sql(schema_url, "CREATE TABLE lamar_migrations (version integer PRIMARY KEY, "
         "applied_at timestamptz NOT NULL DEFAULT now()); INSERT INTO lamar_migrations (version) VALUES (2)")
    assert _functions(schema_url) == set()

    url = f"{schema_url}&lamar_namespace=team&lamar_fold=on"
    lam = Lamar(url, k=2, seed=1)
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    assert _functions(schema_url) == FUNCTIONS
    memory = Lamar(MemoryStore(), k=2, seed=1)
    ids = [engine.add(Experience("case", "do", scope=Scope(task="t"), id="lesson-a")) for engine in (lam, memory)]
    for n in range(12):
        for engine in (lam, memory):
            engine.report(engine.recall({"task": "t"}).episode_id, list(Signal)[n % len(Signal)])
    assert lam.evidence(ids[0]) == memory.evidence(ids[1])
    # built from the log once, above its last seq (the add, 1: version 2), then one version more per report
    assert _sql(schema_url, "SELECT version FROM lamar_lessons WHERE id = 'lesson-a'") == [(14,)]
    lam.close()


def test_a_version_3_store_gets_its_lesson_counts_and_the_scope_index(schema_url: str) -> None:
    """Version 4 counts the lessons not retired in the counter shards: a version-3 store gets each
    namespace's count there, and the fold mode goes on from its rows as the in-process engine does."""
    url = f"{schema_url}&lamar_namespace=team&lamar_fold=on"
    lam, memory = Lamar(url, k=2, seed=1), Lamar(MemoryStore(), k=2, seed=1)
    ids = [f"lesson-{i}" for i in range(4)]
    for engine in (lam, memory):
        for i, exp_id in enumerate(ids):
            engine.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t"), id=exp_id))
    for engine in (lam, memory):
        engine.retire(ids[3])
        engine.report(engine.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    lam.close()
    # Back to version 3's layout: no count column, no scope index, version 3's functions gone.
    _sql(schema_url, "DROP FUNCTION lamar_fold_inputs, lamar_view, lamar_write, lamar_enqueue, lamar_turn; "
         "DROP TABLE lamar_inbox; "
         "DROP INDEX lamar_lessons_scope; ALTER TABLE lamar_rewards DROP COLUMN active; "
         "UPDATE lamar_migrations SET version = 3")
    _sql(schema_url, "DROP FUNCTION IF EXISTS lamar_fold_inputs(text, text[], text[], boolean, integer); "
         "DROP FUNCTION IF EXISTS lamar_view(text, jsonb, text[])")  # version 3's signatures: none is left

    lam, memory = Lamar(url, k=2, seed=1), Lamar(memory.store, k=2, seed=1)  # both reopened: the same draws
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    assert _functions(schema_url) == FUNCTIONS
    assert _sql(schema_url, "SELECT sum(active) FROM lamar_rewards WHERE namespace = 'team'") == [(3,)]
    assert "lamar_lessons_scope" in {str(name) for (name,) in _sql(
        schema_url, "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()")}
    for n in range(12):
        for engine in (lam, memory):
            engine.report(engine.recall({"task": "t"}).episode_id, list(Signal)[n % len(Signal)])
    assert [e.data["fold"]["active"] for e in lam.store.read() if e.kind == "outcome"] == [3] * 13
    assert {i: lam.evidence(i) for i in ids} == {i: memory.evidence(i) for i in ids}
    lam.close()


def test_a_version_4_store_gets_functions_whose_plans_never_scan(schema_url: str) -> None:
    """Version 5 runs every function with enable_seqscan off (a plan made on a tiny table must not
    scan it once it has grown; test_postgres_fold.py counts the scans): a version-4 store's
    functions get the setting, and both modes go on."""
    url = f"{schema_url}&lamar_namespace=team&lamar_fold=on"
    lam = Lamar(url, k=2, seed=1)
    exp_id = lam.add(Experience("case", "do", scope=Scope(task="t")))
    lam.close()
    settings = "SELECT proname, proconfig FROM pg_proc WHERE pronamespace = current_schema()::regnamespace"
    assert all("enable_seqscan=off" in config for _, config in _sql(schema_url, settings))
    for name in sorted(FUNCTIONS):
        _sql(schema_url, f"ALTER FUNCTION {name} RESET enable_seqscan")
    _sql(schema_url, "UPDATE lamar_migrations SET version = 4")
    assert all("enable_seqscan=off" not in (config or ()) for _, config in _sql(schema_url, settings))

    lam = Lamar(url, k=2, seed=1)
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    assert sorted(name for name, config in _sql(schema_url, settings) if "enable_seqscan=off" in config) == \
        sorted(FUNCTIONS)
    lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert lam.evidence(exp_id).eligible == 1
    lam.close()
    log = Lamar(url.replace("lamar_fold=on", "lamar_fold=off"), k=2, seed=1)
    log.report(log.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert log.evidence(exp_id).eligible == 2
    log.close()


def test_a_version_5_store_gets_a_stable_view_read_in_one_snapshot(schema_url: str) -> None:
    """Version 6 marks lamar_view STABLE: its statements all read the calling query's snapshot,
    which lets a recall's read be one statement (no REPEATABLE READ transaction around it). It
    also stores lesson rows uncompressed up to 8160 bytes."""
    url = f"{schema_url}&lamar_namespace=team&lamar_fold=on"
    volatility = ("SELECT provolatile FROM pg_proc WHERE proname = 'lamar_view' "
                  "AND pronamespace = current_schema()::regnamespace")
    lam = Lamar(url, k=2, seed=1)
    exp_id = lam.add(Experience("case", "do", scope=Scope(task="t")))
    lam.close()
    options = "SELECT reloptions FROM pg_class WHERE oid = 'lamar_lessons'::regclass"
    assert _sql(schema_url, volatility) == [("s",)] and "toast_tuple_target=8160" in _sql(schema_url, options)[0][0]
    _sql(schema_url, "ALTER FUNCTION lamar_view VOLATILE")
    _sql(schema_url, "ALTER TABLE lamar_lessons RESET (toast_tuple_target)")
    _sql(schema_url, "UPDATE lamar_migrations SET version = 5")
    assert "toast_tuple_target=8160" not in _sql(schema_url, options)[0][0]

    lam = Lamar(url, k=2, seed=1)
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    assert _sql(schema_url, volatility) == [("s",)] and "toast_tuple_target=8160" in _sql(schema_url, options)[0][0]
    rec = lam.recall({"task": "t"})
    assert rec.eligible == (exp_id,)
    lam.report(rec.episode_id, Signal.SHIPPED)
    assert lam.evidence(exp_id).eligible == 1
    lam.close()


def test_a_version_6_store_gets_its_inbox_in_slots_and_the_functions_that_tell_a_reporter_its_turn(
        schema_url: str) -> None:
    """Version 7 changed what lamar_enqueue returns and what lamar_write takes, and keeps the
    inbox in slots rewritten in place: a version-6 store's two functions are replaced (not left
    beside the new ones), an outcome its inbox held moves to a slot and is folded by the next
    report, and its rows, one JSON object each, are read and packed by their next fold."""
    url = f"{schema_url}&lamar_namespace=team&lamar_fold=on"
    signatures = ("SELECT oid::regprocedure::text FROM pg_proc WHERE pronamespace = current_schema()::regnamespace "
                  "AND proname IN ('lamar_enqueue', 'lamar_write') ORDER BY 1")
    lam = Lamar(url, k=2, seed=1)
    exp_id = lam.add(Experience("case", "do", scope=Scope(task="t")))
    lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)  # the rows are built
    left = lam.recall({"task": "t"}).episode_id  # its report was queued, then its reporter died
    lam.close()
    current = _sql(schema_url, signatures)
    _sql(schema_url, "DROP FUNCTION lamar_enqueue, lamar_write")
    _sql(schema_url, "CREATE FUNCTION lamar_enqueue(p_ns text, p_key text, p_time double precision, p_data json) "
                     "RETURNS TABLE (status text, ticket bigint) LANGUAGE sql AS $$ SELECT 'taken', NULL::bigint $$")
    _sql(schema_url, "CREATE FUNCTION lamar_write(text, integer, boolean, json, integer, text[], text, json, json, "
                     "integer, bigint, double precision, double precision, bigint, boolean, json, bigint[], boolean) "
                     "RETURNS SETOF bigint LANGUAGE sql AS $$ SELECT NULL::bigint WHERE false $$")
    _sql(schema_url, "DROP TABLE lamar_inbox; CREATE TABLE lamar_inbox (namespace text NOT NULL, "
                     "ticket bigint NOT NULL, key text NOT NULL, time double precision NOT NULL, data text NOT NULL, "
                     "lessons text[] NOT NULL, PRIMARY KEY (namespace, ticket), UNIQUE (namespace, key))")
    outcome = {"episode": left, "reward": -1.0, "signal": None, "replace": False}
    _sql(schema_url, "INSERT INTO lamar_inbox VALUES ('team', nextval('lamar_seq'), %s, 5.0, %s, %s)",
         (f"outcome:{left}", json.dumps(outcome), [exp_id]))
    ((text,),) = _sql(schema_url, "SELECT state FROM lamar_lessons")
    original = json.dumps(row_text.stored(row_text.decode(text, lambda line: Experience.from_dict(json.loads(line)))))
    _sql(schema_url, "UPDATE lamar_lessons SET state = %s", (original,))
    _sql(schema_url, "UPDATE lamar_migrations SET version = 6")
    assert _sql(schema_url, signatures) != current

    lam = Lamar(url, k=2, seed=1)
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    assert _sql(schema_url, signatures) == current
    assert _sql(schema_url, "SELECT key, slot = ticket FROM lamar_inbox") == [(f"outcome:{left}", True)]
    lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)  # finds it queued: folds both
    assert (lam.store.counters.queued, lam.store.counters.combined) == (1, 2)  # type: ignore[attr-defined]
    assert lam.evidence(exp_id).eligible == 3
    assert _sql(schema_url, "SELECT count(*) FROM lamar_inbox WHERE ticket IS NOT NULL") == [(0,)]
    assert [e.data["episode"] for e in lam.store.read() if e.kind == "outcome"][1] == left
    ((text,),) = _sql(schema_url, "SELECT state FROM lamar_lessons")
    assert "\n" in text and "\n" not in original
    lam.close()


@pytest.mark.parametrize("start", ["empty", "version 0"])
def test_racing_migrators_migrate_once_and_all_open(schema_url: str, start: str) -> None:
    if start == "version 0":
        _sql(schema_url, V0_LAYOUT)
        _sql(schema_url, "INSERT INTO lamar_events (kind, key, time, data) VALUES ('status', 'k', 1.0, '{}')")
    barrier = threading.Barrier(8)
    opened: list[PostgresStore] = []
    errors: list[BaseException] = []

    def open_at_once() -> None:
        barrier.wait()
        try:
            opened.append(PostgresStore(schema_url, pool_size=1))
        except BaseException as exc:  # noqa: BLE001 - collected and shown by the assert
            errors.append(exc)

    threads = [threading.Thread(target=open_at_once) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(opened) == 8
    assert _sql(schema_url, "SELECT version FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    written = [s.append([Event("status", {"id": str(i), "status": "active"})])[0].seq for i, s in enumerate(opened)]
    before = 1 if start == "version 0" else 0
    assert sorted(written) == list(range(before + 1, before + 9))
    for store in opened:
        store.close()


def test_a_schema_newer_than_this_lamar_is_refused_untouched(schema_url: str) -> None:
    PostgresStore(schema_url).close()
    _sql(schema_url, "INSERT INTO lamar_migrations (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="upgrade lamar"):
        PostgresStore(schema_url)
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION + 1,)]


# The version-1 layout: namespaces with their counter, no lesson rows.
V1_LAYOUT = """
CREATE TABLE lamar_namespaces (namespace text PRIMARY KEY, last_seq bigint NOT NULL);
CREATE TABLE lamar_events (namespace text NOT NULL, seq bigint NOT NULL, kind text NOT NULL, key text,
    time double precision NOT NULL, data text NOT NULL, PRIMARY KEY (namespace, seq), UNIQUE (namespace, key));
CREATE TABLE lamar_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
INSERT INTO lamar_migrations (version) VALUES (1)
"""


def test_a_version_1_store_is_migrated_and_its_rows_built_from_its_log_once(schema_url: str) -> None:
    memory = Lamar(MemoryStore(), k=2, seed=4)
    ids = [memory.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}"))) for i in range(4)]
    rng = random.Random(3)
    for n in range(120):
        memory.report(memory.recall({"task": f"t{n % 2}"}).episode_id, rng.choice(list(Signal)))
    memory.retire(ids[3])
    _sql(schema_url, V1_LAYOUT)
    events = memory.store.read()
    for event in events:
        _sql(schema_url, "INSERT INTO lamar_events (namespace, seq, kind, key, time, data) "
             "VALUES ('team', %s, %s, %s, %s, %s)", (event.seq, event.kind, event.key, event.time, event.data_json()))
    _sql(schema_url, "INSERT INTO lamar_namespaces VALUES ('team', %s)", (events[-1].seq,))
    url = f"{schema_url}&lamar_namespace=team&lamar_fold=on"  # a store that opts into the fold mode

    migrated = Lamar(url, k=2, seed=4)
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    assert _functions(schema_url) == FUNCTIONS
    assert {i: migrated.evidence(i) for i in ids} == {i: memory.evidence(i) for i in ids}
    rows = dict(_sql(schema_url, "SELECT id, state FROM lamar_lessons WHERE namespace = 'team'"))
    stored = {i: {k: v for k, v in folded(memory).lesson(i).to_dict().items() if k != "history"} for i in ids}
    decoded = {i: row_text.decode(rows[i], lambda line: Experience.from_dict(json.loads(line))) for i in ids}
    assert {i: row_text.stored(decoded[i]) for i in ids} == stored  # the rows keep no history
    built = _sql(schema_url, "SELECT folded FROM lamar_namespaces WHERE namespace = 'team'")[0][0]
    assert built is not None
    rec = migrated.recall({"task": "t0"})  # new seqs follow the old ones
    migrated.report(rec.episode_id, Signal.SHIPPED)
    assert min(e.seq for e in migrated.store.read(events[-1].seq)) > events[-1].seq
    migrated.close()

    versions = _sql(schema_url, "SELECT id, version FROM lamar_lessons WHERE namespace = 'team' ORDER BY id")
    again = Lamar(url, k=2, seed=4)  # built once: a second engine reads the rows as they are
    again.evidence(ids[0])
    again.recall({"task": "t1"})
    assert _sql(schema_url, "SELECT id, version FROM lamar_lessons WHERE namespace = 'team' ORDER BY id") == versions
    assert _sql(schema_url, "SELECT folded FROM lamar_namespaces WHERE namespace = 'team'")[0][0] == built
    again.close()


def test_a_version_7_store_gets_the_trigger_that_refuses_a_key_its_checkpoint_holds(schema_url: str) -> None:
    """Version 8 adds a trigger: a checkpoint takes applied proposals' events out of the log, and
    with them their keys from the unique index; the trigger refuses the keys its snapshot lists."""
    url = f"{schema_url}&lamar_namespace=team&lamar_fold=off"
    store = PostgresStore(url)
    store.close()
    _sql(schema_url, "DROP TRIGGER lamar_held_keys ON lamar_events")
    _sql(schema_url, "DROP FUNCTION lamar_held_key()")
    _sql(schema_url, "UPDATE lamar_migrations SET version = 7")

    store = PostgresStore(url)
    assert _sql(schema_url, "SELECT max(version) FROM lamar_migrations") == [(SCHEMA_VERSION,)]
    applied = Event("applied", {"proposal": "merge_1", "kind": "merge"}, key="proposal:merge_1")
    (written,) = store.append([applied])
    store.append([Event("status", {"id": "x", "status": "retired"})])
    assert store.rewrite(written.seq, Event("snapshot", {"applied": ["merge_1"]}))
    with pytest.raises(EventConflict, match="held by the checkpoint"):
        store.append([applied])
    assert store.append([Event("applied", {"proposal": "merge_2", "kind": "merge"}, key="proposal:merge_2")])
    store.close()
