"""PostgreSQL: one event log shared by a fleet of agents, with isolated namespaces per database.

Needs psycopg 3 and psycopg_pool (`pip install "lamar[postgres]"`), imported on first use,
and PostgreSQL 13 or later.
"""

from __future__ import annotations

import json
import re
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Self, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

from lamar._errors import CorruptStore, EventConflict, LamarError, StoreError
from lamar.store.base import Event, check_appendable
from lamar.store.postgres_rows import DROP_V3_FUNCTIONS, FUNCTIONS, events_json, keyed, result_parts

if TYPE_CHECKING:
    from psycopg import Connection

    from lamar.store.postgres_rows import LessonRows

SCHEMA_VERSION = 7
DEFAULT_NAMESPACE = "default"
URL_NAMESPACE = "lamar_namespace"  # postgresql://...?lamar_namespace=team-a
URL_FOLD = "lamar_fold"  # ...&lamar_fold=off: every engine folds the log itself (the fold mode is the default)
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_MIGRATION_LOCK = 0x4C414D4152  # b"LAMAR": one migrator per database at a time
_REWRITE_LOCK = 0x4C414D52  # b"LAMR", with the namespace's hash: one rewrite per namespace at a time
_T = TypeVar("_T")

# In the log mode (lamar_fold=off) appends in a namespace serialize on its row here: the upsert
# that allocates their sequence numbers locks it until COMMIT, so a namespace's seq order is its
# commit order. The fold mode (the default) takes seqs from lamar_seq and keeps each lesson's
# folded state in lamar_lessons (lamar/store/postgres_rows.py).
_CREATE = """
CREATE TABLE lamar_namespaces (namespace text PRIMARY KEY, last_seq bigint NOT NULL);
CREATE TABLE lamar_events (
    namespace text NOT NULL,
    seq       bigint NOT NULL,
    kind      text NOT NULL,
    key       text,
    time      double precision NOT NULL,
    data      text NOT NULL,
    PRIMARY KEY (namespace, seq),
    UNIQUE (namespace, key)
)
"""

# Version 0, the single-namespace layout of early builds: lamar_events(seq bigserial PRIMARY
# KEY, kind, key UNIQUE, time, data) and no version table. Its events become the "default"
# namespace with their sequence numbers unchanged.
_FROM_V0 = """
ALTER TABLE lamar_events ADD COLUMN namespace text NOT NULL DEFAULT 'default';
ALTER TABLE lamar_events ALTER COLUMN namespace DROP DEFAULT, ALTER COLUMN seq DROP DEFAULT;
DROP SEQUENCE IF EXISTS lamar_events_seq_seq;
ALTER TABLE lamar_events DROP CONSTRAINT IF EXISTS lamar_events_pkey,
    DROP CONSTRAINT IF EXISTS lamar_events_key_key,
    ADD PRIMARY KEY (namespace, seq), ADD UNIQUE (namespace, key);
CREATE TABLE lamar_namespaces (namespace text PRIMARY KEY, last_seq bigint NOT NULL);
INSERT INTO lamar_namespaces SELECT 'default', max(seq) FROM lamar_events HAVING count(*) > 0
"""

# Version 2, the fold mode: a lesson's row holds `LessonState.to_dict()` (rewritten by every
# report that involves it: half-empty pages let those updates stay on the page, without index
# entries, and be pruned there); `folded` names the
# tuning the rows were folded under (NULL: not built, or stale); the reward spread sits in
# sharded Welford counters. Every namespace's rows are built from its log on first use.
_FROM_V1 = """
ALTER TABLE lamar_namespaces ADD COLUMN folded text;
CREATE TABLE lamar_lessons (
    namespace text NOT NULL,
    id        text NOT NULL,
    added     bigint NOT NULL,
    status    text NOT NULL,
    scope     jsonb NOT NULL,
    state     text NOT NULL,
    version   bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, id)
) WITH (fillfactor = 50);
CREATE TABLE lamar_rewards (
    namespace text NOT NULL,
    shard     integer NOT NULL,
    n         bigint NOT NULL,
    mean      double precision NOT NULL,
    m2        double precision NOT NULL,
    PRIMARY KEY (namespace, shard)
);
CREATE SEQUENCE lamar_seq CACHE 1;
SELECT setval('lamar_seq', greatest(1, coalesce(max(last_seq), 0)), coalesce(max(last_seq), 0) > 0)
    FROM lamar_namespaces
"""

# A write whose events all carry keys (an episode, a first report) is one message: BEGIN, the
# call of `lamar_append` (below), which allocates seqs, inserts and reads what the caller has not
# seen yet, and COMMIT. A COMMIT whose answer is lost is settled by its keys (`_settle_keys`).
# Any other write is two: the first learns the transaction id, by which such a COMMIT is settled
# (`_settle`); the second is the call and COMMIT. Either way the server runs the call and the
# COMMIT back to back, so the namespace row stays locked for server time only, never for a
# client's round trip.
_BEGIN = "BEGIN; SELECT pg_current_xact_id()::text"
_APPEND_ONE = "SELECT part, seq, kind, key, at, data FROM lamar_append(%(ns)s, %(n)s, %(events)s::json, %(since)s, %(tail)s)"
_APPEND = _APPEND_ONE + ";\nCOMMIT"
# The log mode's write, a function so that PostgreSQL plans its statements once per connection;
# the events travel as one JSON text, parsed once (json_to_recordset keeps `data` as sent).
# Part 0 is the seqs this write got, part 1 the log after `p_since` up to them (at most p_tail
# events besides its own). Created by the migration to version 3 (a new body takes a new version).
_APPEND_FUNCTION = """
CREATE OR REPLACE FUNCTION lamar_append(p_ns text, p_n integer, p_events json, p_since bigint, p_tail integer)
    RETURNS TABLE (part integer, seq bigint, kind text, key text, at double precision, data text)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan AS $fn$
DECLARE
    last bigint;
BEGIN
    INSERT INTO lamar_namespaces AS n (namespace, last_seq)
    VALUES (p_ns, (SELECT coalesce(max(e.seq), 0) FROM lamar_events AS e WHERE e.namespace = p_ns) + p_n)
    ON CONFLICT (namespace) DO UPDATE SET last_seq = greatest(n.last_seq + p_n, EXCLUDED.last_seq), folded = NULL
    RETURNING n.last_seq INTO last;
    RETURN QUERY INSERT INTO lamar_events AS e (namespace, seq, kind, key, time, data)
        SELECT p_ns, last - p_n + b.ord, b.kind, b.key, b.time, b.data::text
        FROM ROWS FROM (json_to_recordset(p_events) AS (kind text, key text, time float8, data json))
            WITH ORDINALITY AS b(kind, key, time, data, ord)
        RETURNING 0, e.seq, NULL::text, NULL::text, NULL::float8, NULL::text;
    RETURN QUERY SELECT 1, e.seq, e.kind, e.key, e.time, e.data FROM lamar_events AS e
        WHERE e.namespace = p_ns AND e.seq > p_since AND e.seq > last - p_n - p_tail ORDER BY e.seq;
END
$fn$"""
# Version 3: the writes and the fold mode's reads run as function calls (`lamar_append` above,
# `FUNCTIONS` in postgres_rows.py), so that the server plans their statements once per
# connection rather than on every call. Version 3's fold-mode functions are gone; its
# `lamar_append` is the one above.
_FROM_V2 = _APPEND_FUNCTION
# Version 4, the fold mode's reads touch only the rows they return: the count of lessons not
# retired is a column of the counter shards (each write adds its change; a store at version 3
# gets each namespace's count in shard 0), and an index finds a recall's rows by scope. The
# inbox holds first reports queued where reports contend for the same rows, until a write folds
# them (lamar/store/postgres_rows.py).
_FROM_V3 = DROP_V3_FUNCTIONS + """;
ALTER TABLE lamar_rewards ADD COLUMN active bigint NOT NULL DEFAULT 0;
INSERT INTO lamar_rewards AS r (namespace, shard, n, mean, m2, active)
    SELECT namespace, 0, 0, 0.0, 0.0, count(*) FILTER (WHERE status <> 'retired') FROM lamar_lessons GROUP BY namespace
    ON CONFLICT (namespace, shard) DO UPDATE SET active = EXCLUDED.active;
CREATE INDEX lamar_lessons_scope ON lamar_lessons (namespace, scope) WHERE status <> 'retired';
CREATE TABLE lamar_inbox (
    namespace text NOT NULL,
    ticket    bigint NOT NULL,
    key       text NOT NULL,
    time      double precision NOT NULL,
    data      text NOT NULL,
    lessons   text[] NOT NULL,
    PRIMARY KEY (namespace, ticket),
    UNIQUE (namespace, key)
);
""" + FUNCTIONS
# Version 5: no function's plan scans a table, whatever the table held when a connection planned
# it (postgres_rows.py): the fold mode's functions anew, and the log mode's with the same setting.
_FROM_V4 = FUNCTIONS + """;
ALTER FUNCTION lamar_append(text, integer, json, bigint, integer) SET enable_seqscan = off"""
# Version 6: `lamar_view` is STABLE (one snapshot for its statements), so a recall's read is one
# statement, not a REPEATABLE READ transaction around it. And a lesson row is stored as it is up
# to 8160 bytes: rows are about 2 kB, where PostgreSQL's default starts compressing them on every
# write (docs/postgres.md: server CPU per episode 1.20-1.22 ms compressed, 0.94-0.97 not).
_FROM_V5 = """DO $$ BEGIN
    -- (a store migrated from before version 5 got version 7's lamar_view, STABLE already)
    IF to_regprocedure('lamar_view(text, jsonb, jsonb[], text[])') IS NOT NULL THEN
        ALTER FUNCTION lamar_view(text, jsonb, jsonb[], text[]) STABLE;
    END IF;
END $$;
ALTER TABLE lamar_lessons SET (toast_tuple_target = 8160)"""
# Version 7: a queued report's reporter learns its turn as it queues it, and mostly what became
# of it from the notice of the write that folded it, rather than asking (postgres_rows.py): the
# fold mode's functions anew (`FUNCTIONS` drops those whose signatures changed). And the inbox
# is a set of slots, each rewritten in place for the next queued report once its outcome is
# folded: version 4's table took a row per report and deleted it, and until a VACUUM every read
# of the inbox walked past the index entries of every report folded since (a 20-second run at
# 16 clients made each queuing cost 0.45 ms of server time against 0.21 ms in a 3-second run).
# Outcomes queued when the migration runs move to slots of their own. The inbox is UNLOGGED: an
# outcome waits there only while its reporter waits for its fold (a report returns once the
# outcome is in the log), so a crash that empties it loses no report that returned, and a
# queuing commits without a WAL flush (16 shared clients: 732-781 episodes/s against 708-719).
_FROM_V6 = """CREATE UNLOGGED TABLE lamar_inbox_v7 (
    namespace text NOT NULL,
    slot      bigint NOT NULL,
    ticket    bigint,
    key       text,
    time      double precision,
    data      text,
    lessons   text[],
    PRIMARY KEY (namespace, slot)
) WITH (fillfactor = 50);
INSERT INTO lamar_inbox_v7 (namespace, slot, ticket, key, time, data, lessons)
    SELECT namespace, ticket, ticket, key, time, data, lessons FROM lamar_inbox WHERE ticket IS NOT NULL;
DROP TABLE lamar_inbox;
ALTER TABLE lamar_inbox_v7 RENAME TO lamar_inbox;
ALTER INDEX lamar_inbox_v7_pkey RENAME TO lamar_inbox_slots;
""" + FUNCTIONS
_STEPS = (_FROM_V0, _FROM_V1, _FROM_V2, _FROM_V3, _FROM_V4, _FROM_V5, _FROM_V6)
_MIGRATIONS: dict[int | None, tuple[str, ...]] = {
    None: (_CREATE, *_STEPS[1:]), **{version: _STEPS[version:] for version in range(SCHEMA_VERSION)}}
# The engine's saved state per namespace (a cache beside the log: see Lamar._resume).
_STATE = "CREATE TABLE IF NOT EXISTS lamar_state (namespace text PRIMARY KEY, seq bigint NOT NULL, body text NOT NULL)"
_TAIL = 500  # most events a write reads back besides its own
_NEVER = 2**62  # a seq no namespace reaches
_READ = "SELECT seq, kind, key, time, data FROM lamar_events WHERE namespace = %s AND seq > %s ORDER BY seq"


class _NotWritten(Exception):
    """The connection failed and the write certainly did not commit (safe to retry)."""


class PostgresStore:
    """Events in PostgreSQL, shared by many processes and machines; one namespace each.

    Modes: by default (the fold mode) the store holds every lesson's folded state in rows that
    each write updates (`rows`, lamar/store/postgres_rows.py); seqs come from a SEQUENCE, so an
    event may commit after a reader passed its seq (an engine folds the log only through its
    settled seq: `LessonRows.settled`). With `lamar_fold=off` in the URL (the log mode) every
    engine folds the log itself, and a namespace's writes take turns on its counter row, held
    only while the server runs one INSERT and its COMMIT, so seq order is commit order
    (`read(after)` never skips an event that commits later) and no client, slow or killed,
    holds it across a round trip.
    Isolation: every statement names the namespace; another namespace's ids are not there.
    A lost connection: a write that surely did not commit is retried once on a fresh
    connection; one whose COMMIT went unanswered is settled by asking the server about its
    transaction (pg_xact_status), never by writing it twice. A read is retried once.

    Args:
        url: a libpq URL, postgresql://user@host:port/dbname?options. A query parameter
            `lamar_namespace=name` picks the namespace (so one string locates the store);
            `lamar_fold=off` picks the log mode (`on`, the default: the fold mode).
        namespace: the isolated store inside the database (default "default"); letters,
            digits, "_", "." and "-", at most 63 characters, starting with a letter or digit.
        pool_size: most connections this object opens (threads beyond it wait their turn).
        timeout: seconds to wait for the server or for a free connection.
        settle_timeout: seconds to find out whether a write whose COMMIT got no answer
            committed, before giving up with StoreError.

    Raises:
        StoreError: a bad namespace, an unreachable server, or a schema newer than this Lamar.
    """

    def __init__(self, url: str, *, namespace: str | None = None, pool_size: int = 4,
                 timeout: float = 30.0, settle_timeout: float = 10.0) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise ImportError(f"a PostgreSQL store needs psycopg 3: pip install 'lamar[postgres]' ({exc})") from exc
        self._pg = psycopg
        conninfo, self.namespace, self.location, fold = _parse_url(url, namespace)
        self._settle_timeout = settle_timeout
        self._closed = False
        self._close_lock = threading.Lock()
        self._tail_lock = threading.Lock()
        self._seen = 0  # the highest seq this object has read or written: all below it committed
        self._tail: tuple[int, list[Event]] | None = None  # the log (start, end] as of our last write
        params: dict[str, Any] = {"autocommit": True, "fallback_application_name": "lamar"}
        try:
            if "connect_timeout" not in psycopg.conninfo.conninfo_to_dict(conninfo):
                params["connect_timeout"] = max(1, round(timeout))
            # A direct first connection: its error says what is wrong (no such database...).
            with psycopg.connect(conninfo, **params) as conn:
                _migrate(conn, self.location)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the PostgreSQL store {self.location}: {_reason(exc)}") from exc
        # When each pooled connection's backend started: with its pid, it names that backend to
        # `_settle_keys` (a pid alone may be reused by another connection's backend).
        self._started: weakref.WeakKeyDictionary[Connection[Any], str] = weakref.WeakKeyDictionary()
        self._pool = ConnectionPool(conninfo, kwargs=params, min_size=1, max_size=pool_size, timeout=timeout,
                                    open=True, name=f"lamar:{self.namespace}", configure=self._configure)
        # The fold mode (lamar_fold=on): the engine reads and writes lesson rows through this.
        self.rows: LessonRows | None = None
        if fold:
            from lamar.store.postgres_rows import LessonRows

            self.rows = LessonRows(self)

    # -- the protocol ------------------------------------------------------------------------

    def append(self, events: Sequence[Event]) -> list[Event]:
        check_appendable(events)  # before any lock or transaction: a refusal leaves nothing behind
        batch = list(events)
        if not batch:
            return []
        if self.rows is not None:
            return self._retrying(lambda: self.rows.append(batch))  # type: ignore[union-attr]
        params = {"ns": self.namespace, "n": len(batch), "tail": _TAIL, "events": events_json(batch)}
        first = self._retrying(lambda: self._append_once(params, batch))
        return [e.numbered(first + i) for i, e in enumerate(batch)]

    def _retrying(self, write: Callable[[], _T]) -> _T:
        """Run `write`; once more on a fresh connection if it surely did not commit."""
        for attempt in (1, 2):
            try:
                return write()
            except _NotWritten as exc:
                if attempt == 1:
                    self._replace_dead_connections()
                    continue
                raise StoreError(f"could not write {self.location}: {exc} (connection lost, tried twice); "
                                 "nothing of this write was kept; the next call reconnects") from exc.__cause__
        raise AssertionError("unreachable")

    def _configure(self, conn: Connection[Any]) -> None:
        row = conn.execute("SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()").fetchone()
        if row is not None and row[0] is not None:
            self._started[conn] = str(row[0])

    def _transact(self, body: Callable[[Any, list[str]], _T], committed: Callable[[list[int]], _T],
                  events: Sequence[Event], after: int = 0) -> _T:
        """Run one write transaction of `events`: `body(cursor, xid)` begins it, appends its id
        to `xid` as soon as it knows it, and commits. A write that sends its events, every one
        with a key, in one message never learns its id. A lost connection is settled, by the id or
        else by the keys: `committed(seqs)` answers for a COMMIT that went through unanswered
        (`seqs`: the events', all above `after`); _NotWritten means safe to retry."""
        pg = self._pg
        self._check_open()
        xid: list[str] = []
        pid, started, conn = 0, None, None
        try:
            with self._pool.connection() as conn:
                pid, started = conn.info.backend_pid, self._started.get(conn)
                try:
                    return body(pg.ClientCursor(conn), xid)  # client-side binding: several statements, one message
                except (pg.errors.UniqueViolation, LamarError):  # refused: end the transaction here
                    conn.execute("ROLLBACK")
                    raise
        except pg.errors.UniqueViolation as exc:
            raise EventConflict(f"an event key is already in {self.location} ({exc.diag.message_detail}); "
                                "nothing of this write was kept") from exc
        except pg.OperationalError as exc:
            if conn is not None and not conn.broken:  # a cancel or timeout: rolled back above
                raise StoreError(f"could not write {self.location}: {_reason(exc)}; "
                                 "nothing of this write was kept") from exc
            if xid:
                seqs = self._seqs_of(xid[0], after) if self._settle(xid[0], pid, exc) else None
            elif conn is not None and keyed(events):  # sent as one message: it may have committed
                seqs = self._settle_keys(pid, started, events, exc)
            else:
                seqs = None  # no connection, or lost before it learned its id: it wrote nothing
            if seqs is None:
                raise _NotWritten(_reason(exc)) from exc
            return committed(seqs)
        except pg.Error as exc:
            raise StoreError(f"could not write {self.location}: {_reason(exc)}; "
                             "nothing of this write was kept") from exc

    @staticmethod
    def _begin(cur: Any, xid: list[str]) -> None:
        """Begin a write's transaction and put its id in `xid` (see `_transact`)."""
        cur.execute(_BEGIN)
        cur.nextset()
        xid.append(str(cur.fetchone()[0]))

    @staticmethod
    def _alone(cur: Any, statement: str, params: dict[str, Any]) -> Any:
        """Run one statement as a transaction of its own (the connection is in autocommit): one
        message, its parameters bound by the server; psycopg prepares it once it recurs (the
        server then neither parses nor plans it again). Returns the cursor at its result."""
        return cur.connection.execute(statement, params)

    def _append_once(self, params: dict[str, Any], events: Sequence[Event]) -> int:
        """Write one batch in the log mode; the first seq it got. Raises _NotWritten when safe to retry."""
        with self._tail_lock:
            since = self._seen
            self._tail = None
        # A big batch (an import) reads nothing back: its caller has no use for its own events.
        params["since"] = since if params["n"] <= _TAIL else _NEVER
        tail: list[tuple[Any, ...]] = []

        def body(cur: Any, xid: list[str]) -> int:
            if keyed(events):
                cur = self._alone(cur, _APPEND_ONE, params)
            else:
                self._begin(cur, xid)
                cur.execute(_APPEND, params)
            mine, after = result_parts(cur.fetchall(), 2)
            tail.extend(row[1:] for row in after)
            return int(min(row[1] for row in mine))

        first = self._transact(body, lambda seqs: min(seqs), events, since)
        if not tail:
            return first  # settled after a lost answer: no tail to keep
        # Under the namespace lock every smaller seq had committed, so `tail` is exactly the
        # log from `start` to our last event: the caller's next read is answered from it.
        last = first + params["n"] - 1
        if tail and tail[-1][0] == last:
            start = max(since, last - params["n"] - _TAIL)
            with self._tail_lock:
                if last > self._seen:  # else another thread already saw further: keep its tail
                    self._tail = (start, self._parse(tail))
                    self._seen = last
        return first

    def _settle(self, xid: str, pid: int, cause: Exception) -> bool:
        """Whether transaction `xid`, whose COMMIT went unanswered, committed.

        The backend that ran it may still hold the COMMIT in its input buffer, so an
        "in progress" answer is waited out; after a second it is terminated (it is running
        our transaction and nothing else) so that the outcome becomes final.
        """
        def decide(nudge: bool) -> tuple[bool, bool]:
            status = self._run(lambda conn: conn.execute(
                "SELECT pg_xact_status(%s::xid8)", (xid,)).fetchone()[0])  # type: ignore[index]
            if status == "in progress" and nudge:
                self._run(lambda conn: conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = %s "
                    "AND backend_xid = (%s::xid8::text::bigint %% 4294967296)::text::xid", (pid, xid)))
            return status in ("committed", "aborted"), status == "committed"

        return self._settled(decide, f"transaction {xid}", cause)

    def _settle_keys(self, pid: int, started: str | None, events: Sequence[Event], cause: Exception) -> list[int] | None:
        """The seqs of `events` if the write that sent them, whose connection was lost, committed;
        None if it did not. Every event has a key, unique in the namespace.

        Once the backend that ran it has ended, the write is either committed or rolled back, and
        a fresh snapshot shows which: its first key is there, with its kind and time, or not (the
        time, to the microsecond, tells its event from another writer's under the same key). A
        backend still alive after a second is ended (it ran this write and nothing else); it is
        named by pid and start time, so a reused pid names no one.
        """
        ns, keys = self.namespace, [e.key for e in events]
        alive = ("SELECT count(*) FROM pg_stat_activity WHERE pid = %(pid)s "
                 "AND (%(started)s::timestamptz IS NULL OR backend_start = %(started)s::timestamptz)")

        def decide(nudge: bool) -> tuple[bool, list[int] | None]:
            if self._run(lambda conn: conn.execute(alive, {"pid": pid, "started": started}).fetchone()[0]):  # type: ignore[index]
                if started is not None and nudge:
                    self._run(lambda conn: conn.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = %s "
                        "AND backend_start = %s::timestamptz", (pid, started)))
                return False, None
            found = {key: (seq, kind, at) for seq, kind, key, at in self._run(lambda conn: conn.execute(
                "SELECT seq, kind, key, time FROM lamar_events WHERE namespace = %s AND key = ANY(%s)",
                (ns, keys)).fetchall())}
            first = found.get(events[0].key)
            if first is None or (first[1], first[2]) != (events[0].kind, float(events[0].time)):
                return True, None
            return True, sorted(found[key][0] for key in keys if key in found)

        return self._settled(decide, f"events {', '.join(map(str, keys[:3]))}", cause)

    def _settled(self, decide: Callable[[bool], tuple[bool, _T]], what: str, cause: Exception) -> _T:
        """Ask `decide(nudge)` every 50 ms until it knows (its first item; `nudge`: a second has
        passed, end the backend if it is stuck), for at most `settle_timeout` seconds."""
        deadline = time.monotonic() + self._settle_timeout
        nudged = time.monotonic() + 1.0
        while True:
            try:
                known, answer = decide(time.monotonic() > nudged)
                if known:
                    return answer
            except StoreError:
                pass  # the server is not answering yet: ask again
            if time.monotonic() > deadline:
                raise StoreError(
                    f"lost the connection to {self.location} while committing ({_reason(cause)}) and "
                    f"could not learn within {self._settle_timeout:g} s whether the write was kept "
                    f"({what}); read the store before writing it again") from cause
            time.sleep(0.05)

    def _seqs_of(self, xid: str, after: int) -> list[int]:
        """The seqs that committed transaction `xid` wrote, all above `after` (its rows carry
        its xid; rare, and a scan of the namespace's log above `after`)."""
        seqs = [int(row[0]) for row in self._run(lambda conn: conn.execute(
            "SELECT seq FROM lamar_events WHERE namespace = %s AND seq > %s "
            "AND xmin = (%s::xid8::text::bigint %% 4294967296)::text::xid ORDER BY seq",
            (self.namespace, after, xid)).fetchall())]
        if not seqs:
            raise StoreError(f"transaction {xid} committed but its events are not in {self.location}")
        return seqs

    def read(self, after: int = 0) -> list[Event]:
        self._check_open()
        after = int(after)
        with self._tail_lock:
            tail, self._tail = self._tail, None
            seen = self._seen
        if tail is not None and tail[0] <= after <= tail[1][-1].seq == seen:
            return [e for e in tail[1] if e.seq > after]  # the log as of our last write's commit
        events = self._parse(self._run(lambda conn: conn.execute(_READ, (self.namespace, after)).fetchall()))
        if events:
            with self._tail_lock:
                self._seen = max(self._seen, events[-1].seq)
        return events

    def rewrite(self, through: int, snapshot: Event) -> bool:
        """Replace the namespace's events up to `through` by `snapshot`, in one transaction.

        Appends go on meanwhile (their seqs are above `through`); rewrites of one namespace
        take turns on an advisory lock. A retry after a lost connection is harmless: the
        second attempt finds the snapshot in place and returns False.
        """
        ns, data = self.namespace, snapshot.data_json()
        with self._tail_lock:
            self._tail = None  # it may hold events this rewrite replaces

        def run(conn: Connection[Any]) -> bool:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_REWRITE_LOCK, ns))
                # The log's last seq (the fold mode does not count in lamar_namespaces).
                row = conn.execute("SELECT max(seq) FROM lamar_events WHERE namespace = %s", (ns,)).fetchone()
                last = int(row[0]) if row and row[0] is not None else 0
                if through > last or through < 1:
                    raise ValueError(f"cannot rewrite {self.location} through seq {through}: it holds seqs 1..{last}")
                first = conn.execute("SELECT seq, kind FROM lamar_events WHERE namespace = %s ORDER BY seq LIMIT 1",
                                     (ns,)).fetchone()
                if first is not None and first[1] == "snapshot" and first[0] >= through:
                    return False
                conn.execute("DELETE FROM lamar_events WHERE namespace = %s AND seq <= %s", (ns, through))
                conn.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) "
                             "VALUES (%s, %s, 'snapshot', NULL, %s, %s)", (ns, through, float(snapshot.time), data))
            return True

        return self._run(run, "rewrite")

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        ns, wanted = self.namespace, list(keys)
        return self._parse(self._run(lambda conn: conn.execute(
            "SELECT seq, kind, key, time, data FROM lamar_events WHERE namespace = %s AND key = ANY(%s) ORDER BY seq",
            (ns, wanted)).fetchall()))

    def load_state(self) -> str | None:
        ns, pg = self.namespace, self._pg

        def run(conn: Connection[Any]) -> str | None:
            try:
                row = conn.execute("SELECT body FROM lamar_state WHERE namespace = %s", (ns,)).fetchone()
            except pg.errors.UndefinedTable:
                return None  # no engine saved a state in this database yet
            return None if row is None else str(row[0])

        return self._run(run)

    def save_state(self, seq: int, text: str) -> None:
        ns, pg = self.namespace, self._pg

        def run(conn: Connection[Any]) -> None:
            with conn.transaction():
                # The table comes with the first save (no schema migration for a cache);
                # creators take turns on the migration lock.
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                conn.execute(_STATE)
            conn.execute("INSERT INTO lamar_state (namespace, seq, body) VALUES (%s, %s, %s) ON CONFLICT (namespace) "
                         "DO UPDATE SET seq = EXCLUDED.seq, body = EXCLUDED.body", (ns, seq, text))

        try:
            self._run(run, "save the engine's state in")
        except pg.Error as exc:
            raise StoreError(f"could not save the engine's state in {self.location}: {_reason(exc)}") from exc

    def _parse(self, rows: list[tuple[Any, ...]]) -> list[Event]:
        try:
            return [Event(kind=k, data=json.loads(d), key=key, seq=s, time=t) for s, k, key, t, d in rows]
        except (ValueError, TypeError) as exc:
            raise CorruptStore(f"{self.location} holds an event that does not parse: {exc}") from exc

    def close(self) -> None:
        with self._close_lock:
            if not self._closed:
                self._closed = True
                self._pool.close()

    # -- connections -------------------------------------------------------------------------

    def _run(self, query: Callable[[Connection[Any]], _T], doing: str = "read") -> _T:
        """Run a read-only (or idempotent) `query`; a dead connection is replaced and the query retried once."""
        pg = self._pg
        for attempt in (1, 2):
            self._check_open()
            try:
                with self._pool.connection() as conn:
                    return query(conn)
            except pg.OperationalError as exc:
                if attempt == 1:
                    self._replace_dead_connections()
                    continue
                raise StoreError(f"lost the connection to {self.location}: {_reason(exc)}; "
                                 "the next call reconnects") from exc
            except pg.Error as exc:
                raise StoreError(f"cannot {doing} {self.location}: {_reason(exc)}") from exc
        raise AssertionError("unreachable")

    def _replace_dead_connections(self) -> None:
        """Test the idle pooled connections and replace the dead ones, before a retry."""
        try:
            self._pool.check()
        except self._pg.Error:
            pass  # the retry reports what is wrong

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"the store {self.location} is closed")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"


def _migrate(conn: Connection[Any], location: str) -> None:
    """Create or upgrade the schema. Idempotent; concurrent migrators take turns on a lock."""
    if _schema_version(conn) == SCHEMA_VERSION:
        return  # the common case: no lock, no DDL
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        version = _schema_version(conn)  # again: another process may have migrated meanwhile
        if version is not None and version > SCHEMA_VERSION:
            raise StoreError(f"{location} has Lamar schema version {version}; this Lamar knows "
                             f"{SCHEMA_VERSION}: upgrade lamar")
        if version == SCHEMA_VERSION:
            return
        for step in _MIGRATIONS[version]:
            conn.execute(step)
        conn.execute("CREATE TABLE IF NOT EXISTS lamar_migrations (version integer PRIMARY KEY, "
                     "applied_at timestamptz NOT NULL DEFAULT now())")
        conn.execute("INSERT INTO lamar_migrations (version) VALUES (%s)", (SCHEMA_VERSION,))


def _schema_version(conn: Connection[Any]) -> int | None:
    """The schema's version: None for an empty database, 0 for the unversioned layout.

    It asks pg_class rather than to_regclass(): within a transaction that began before
    another migrator committed, to_regclass() can still answer from a stale cache.
    """
    tables = {row[0] for row in conn.execute(
        "SELECT relname FROM pg_catalog.pg_class WHERE relname IN ('lamar_migrations', 'lamar_events') "
        "AND relnamespace IN (SELECT oid FROM pg_catalog.pg_namespace "
        "WHERE nspname = ANY (current_schemas(false)))").fetchall()}
    if "lamar_migrations" in tables:
        found = conn.execute("SELECT max(version) FROM lamar_migrations").fetchone()
        return int(found[0]) if found and found[0] is not None else None
    return 0 if "lamar_events" in tables else None


def _parse_url(url: str, namespace: str | None) -> tuple[str, str, str, bool]:
    """(conninfo for libpq, namespace, location, fold mode): the location names the namespace
    and the mode when it is not the default, and hides any password, so it is safe in messages
    and reopens the store when the password comes from PGPASSWORD or ~/.pgpass."""
    parts = urlsplit(url)
    # Query pieces other than ours pass to libpq untouched (it percent-decodes; "+" is a "+").
    pieces = [piece for piece in parts.query.split("&") if piece]
    modes = [unquote(piece.partition("=")[2]).lower() for piece in pieces if piece.partition("=")[0] == URL_FOLD]
    if any(mode not in ("on", "off") for mode in modes):
        raise StoreError(f"{URL_FOLD} is 'on' (PostgreSQL holds the folded state, the default) or 'off' "
                         f"(every engine folds the log itself); got {modes[-1]!r}")
    fold = not modes or modes[-1] == "on"
    pieces = [piece for piece in pieces if piece.partition("=")[0] != URL_FOLD]
    ours = [piece for piece in pieces if piece.partition("=")[0] == URL_NAMESPACE]
    rest = [piece for piece in pieces if piece not in ours]
    shown = [piece for piece in rest if not _is_credential(unquote(piece.partition("=")[0]))]
    in_url = unquote(ours[-1].partition("=")[2]) if ours else None
    if in_url is not None and namespace is not None and in_url != namespace:
        raise StoreError(f"the URL names namespace {in_url!r} and namespace= says {namespace!r}; pick one")
    chosen = namespace if namespace is not None else in_url if in_url is not None else DEFAULT_NAMESPACE
    if not isinstance(chosen, str) or not _NAMESPACE.fullmatch(chosen):
        raise StoreError(f"invalid namespace {chosen!r}: use 1-63 letters, digits, '_', '.' or '-', "
                         "starting with a letter or digit")
    conninfo = urlunsplit(parts._replace(query="&".join(rest)))
    netloc = parts.netloc
    if "@" in netloc:
        user, host = netloc.rsplit("@", 1)
        netloc = user.split(":", 1)[0] + "@" + host
    query = "&".join(shown + [f"{URL_NAMESPACE}={chosen}"] + ([] if fold else [f"{URL_FOLD}=off"]))
    return conninfo, chosen, urlunsplit(parts._replace(netloc=netloc, query=query, fragment="")), fold


def _is_credential(name: str) -> bool:
    """A URL parameter whose value must never be shown: password, sslpassword, any *token/*secret."""
    from lamar.safety.secrets import secret_key_kind

    return name.lower() in {"password", "sslpassword", "pass"} or secret_key_kind(name) is not None


def _reason(exc: BaseException) -> str:
    """The server's first message line, without psycopg's class name."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


__all__ = ["DEFAULT_NAMESPACE", "SCHEMA_VERSION", "URL_FOLD", "URL_NAMESPACE", "PostgresStore"]
