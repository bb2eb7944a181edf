"""`PostgresStore`: one event log shared by a fleet of agents, with isolated namespaces per database."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Literal, Self

from lamar._errors import InvalidArgument, StoreError
from lamar.storable import finite_number, whole_number
from lamar.store.appendable import check_appendable, storable_key
from lamar.store.base import Event, StoredText
from lamar.store.postgres.connection import NEEDS_PSYCOPG, Connections, reason
from lamar.store.postgres.counters import WriteCounters
from lamar.store.postgres.schema import ensure_table, migrate, schema_version
from lamar.store.postgres.server_errors import opening_advice
from lamar.store.postgres.url import parse_url
from lamar.store.postgres.wire import events_json, keyed, result_parts, timeout_param

if TYPE_CHECKING:
    from psycopg import Connection

    from lamar.store.postgres.rows import LessonRows

# b"LAMR", with the namespace's hash: one rewrite per namespace at a time; to_v8.sql's trigger
# takes it shared, so that a held key is checked against a snapshot no rewrite is replacing.
_REWRITE_LOCK = 0x4C414D52
# A write in the log mode whose events all carry keys (an episode, a first report) is one message:
# the call of `lamar_append` (append.sql), which allocates seqs, inserts and reads what the caller
# has not seen yet, run as a transaction of its own; a COMMIT whose answer is lost is settled by its
# keys. Any other write is two: the first learns the transaction id, by which such a COMMIT is
# settled; the second is the call and COMMIT. Either way the server runs the call and the COMMIT
# back to back, so the namespace row stays locked for server time only, never for a client's
# round trip.
_APPEND_ONE = ("SELECT part, seq, kind, key, at, data "
               "FROM lamar_append(%(ns)s, %(n)s, %(events)s::json, %(since)s, %(tail)s)")
_APPEND = _APPEND_ONE + ";\nCOMMIT"
_TAIL = 500  # most events a write reads back besides its own
_NEVER = 2**62  # a seq no namespace reaches
_READ = "SELECT seq, kind, key, time, data FROM lamar_events WHERE namespace = %s AND seq > %s ORDER BY seq"


class PostgresStore:
    """Events in PostgreSQL, shared by many processes and machines; one namespace each.

    Modes: by default (the fold mode) the store holds every lesson's folded state in rows that
    each write updates (`rows`, lamar/store/postgres/rows.py); seqs come from a SEQUENCE, so an
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
        timeout: seconds to wait for a free connection; a server that does not answer at all
            fails calls after a second, and at once for the next 5 s.
        settle_timeout: seconds to find out whether a write whose COMMIT got no answer
            committed, before giving up with StoreError.
        writes: how the fold mode writes: "optimistic" (the default: rows read unlocked, a
            conflict starts over) or "locking" (every write locks its rows before reading them:
            no conflicts, and a lock held across a round trip).

    Raises:
        StoreError: a bad namespace, an unreachable server, or a schema newer than this Lamar.
        InvalidArgument: a pool_size, timeout or settle_timeout out of range.
    """

    def __init__(self, url: str, *, namespace: str | None = None, pool_size: int = 4,
                 timeout: float = 30.0, settle_timeout: float = 10.0,
                 writes: Literal["optimistic", "locking"] = "optimistic") -> None:
        if writes not in ("optimistic", "locking"):
            raise StoreError(f"writes is 'optimistic' or 'locking'; got {writes!r}")
        if not whole_number(pool_size, low=1):
            raise InvalidArgument(f"pool_size is the most connections to open, a whole number >= 1; got {pool_size!r}")
        for name, seconds in (("timeout", timeout), ("settle_timeout", settle_timeout)):
            if not (finite_number(seconds) and seconds > 0):
                raise InvalidArgument(f"{name} is a number of seconds > 0; got {seconds!r}")
        conninfo, self.namespace, self.location, fold = parse_url(url, namespace)
        self._tail_lock = threading.Lock()
        self._seen = 0  # the highest seq this object has read or written: all below it committed
        self._tail: tuple[int, list[Event]] | None = None  # the log (start, end] as of our last write
        location = self.location
        self._db = Connections(conninfo, namespace=self.namespace, location=location, pool_size=pool_size,
                               timeout=timeout, settle_timeout=settle_timeout,
                               opened=lambda conn: migrate(conn, location))
        # The fold mode (lamar_fold=on): the engine reads and writes lesson rows through this.
        self.rows: LessonRows | None = None
        # False for a reader that must leave the namespace as it found it (`lamar mcp --read-only`): in the fold
        # mode an engine that only reads otherwise saves the state it folded (`SettledFollower`).
        self.writes_on_read = True
        if fold:
            from lamar.store.postgres.rows import LessonRows

            self.rows = LessonRows(self._db, optimistic=writes == "optimistic")

    @property
    def connections(self) -> Connections:
        """The store's connection layer (a benchmark asks it which server backend it uses)."""
        return self._db

    @property
    def counters(self) -> WriteCounters:
        """What this object's fold-mode writes did since it opened (zeros in the log mode)."""
        return WriteCounters() if self.rows is None else self.rows.counters

    # -- the protocol ------------------------------------------------------------------------

    def append(self, events: Sequence[Event]) -> list[Event]:
        check_appendable(events)  # before any lock or transaction: a refusal leaves nothing behind
        batch = list(events)
        if not batch:
            return []
        rows = self.rows
        if rows is not None:
            return rows.append(batch)  # it retries a write that surely did not commit
        return self._append_logged(batch, keep_tail=True)

    def append_unfolded(self, events: Sequence[Event]) -> list[Event]:
        """Append as the log mode does, in either mode (`UnfoldedAppendStore`): a new namespace numbers them from 1,
        and its rows are marked for a build (`FoldedRows.build`), which a copy's check's fold then makes."""
        check_appendable(events)
        batch = list(events)
        if not batch:
            return []
        if self.rows is None:
            return self._append_logged(batch, keep_tail=True)
        # Under the write lock held exclusively: the fold-mode writes in flight have committed, so the events
        # go after every seq the namespace holds, and none commits while they do. A reader that folded the log
        # through a later seq would pass over them for good (`locks.settled`). No tail is kept either: a
        # read-back in the fold mode may lack a late event. The lock is its connection's: a retry after that
        # connection is lost takes it again, since a fold-mode write may have taken it and a seq meanwhile.
        from lamar.store.postgres.locks import past_the_log

        def past(first: int) -> None:
            # Fold-mode writes take their seqs from the sequence every namespace shares, which these seqs (the
            # namespace's own) may have passed: one taken below them would be refused as a key already taken.
            # Before the lock is let go; the rows' build (which the copy runs next) moves it too, so a failure
            # here leaves only that time between.
            with contextlib.suppress(StoreError):
                past_the_log(self._db, first + len(batch) - 1)

        return self._append_logged(batch, keep_tail=False, locked=self.rows.exclusive, then=past)

    def _append_logged(self, batch: list[Event], *, keep_tail: bool,
                       locked: Callable[[], AbstractContextManager[None]] = nullcontext,
                       then: Callable[[int], None] | None = None) -> list[Event]:
        params = {"ns": self.namespace, "n": len(batch), "tail": _TAIL, "events": events_json(batch)}

        def once() -> int:
            with locked():
                first = self._append_once(params, batch, keep_tail)
                if then is not None:
                    then(first)
                return first

        first = self._db.retrying(once)
        return [e.numbered(first + i) for i, e in enumerate(batch)]

    def _append_once(self, params: dict[str, Any], events: Sequence[Event], keep_tail: bool) -> int:
        """Write one batch in the log mode; the first seq it got. Raises NotWritten when safe to retry."""
        with self._tail_lock:
            since = self._seen
            self._tail = None
        # A big batch (an import) reads nothing back: its caller has no use for its own events.
        params["since"] = since if params["n"] <= _TAIL and keep_tail else _NEVER
        tail: list[tuple[Any, ...]] = []

        def body(cur: Any, xid: list[str]) -> int:
            if keyed(events):
                cur = self._db.alone(cur, _APPEND_ONE, params)
            else:
                self._db.begin(cur, xid)
                cur.execute(_APPEND, params)
            mine, after = result_parts(cur.fetchall(), 2)
            tail.extend(row[1:] for row in after)
            return int(min(row[1] for row in mine))

        first = self._db.transact(body, lambda seqs: min(seqs), events, since)
        if not tail:
            return first  # settled after a lost answer: no tail to keep
        # Under the namespace lock every smaller seq had committed, so `tail` is exactly the
        # log from `start` to our last event: the caller's next read is answered from it.
        last = first + params["n"] - 1
        if tail and tail[-1][0] == last:
            start = max(since, last - params["n"] - _TAIL)
            with self._tail_lock:
                if last > self._seen:  # else another thread already saw further: keep its tail
                    self._tail = (start, self._db.parse(tail))
                    self._seen = last
        return first

    def read(self, after: int = 0) -> list[Event]:
        self._db.check_open()
        after = int(after)
        with self._tail_lock:
            tail, self._tail = self._tail, None
            seen = self._seen
        if tail is not None and tail[0] <= after <= tail[1][-1].seq == seen:
            return [e for e in tail[1] if e.seq > after]  # the log as of our last write's commit
        events = self._db.parse(self._db.run(lambda conn: conn.execute(_READ, (self.namespace, after)).fetchall()))
        if events:
            with self._tail_lock:
                self._seen = max(self._seen, events[-1].seq)
        return events

    def read_texts(self, after: int = 0) -> list[StoredText]:
        """`read(after)` before decoding (`TextStore`), for the caller to decode (`decoded`)."""
        self._db.check_open()
        rows = self._db.run(lambda conn: conn.execute(_READ, (self.namespace, int(after))).fetchall())
        return [StoredText(*row) for row in rows]

    def decoded(self, row: StoredText) -> Event:
        """The event `row` holds, checked as `read` checks it (`TextStore`).

        Raises:
            CorruptStore: its data does not parse, or holds what no write could have stored.
        """
        return self._db.parse([row])[0]

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
                # A snapshot folded before an `erase` event may hold the text it took out: not kept.
                if conn.execute("SELECT 1 FROM lamar_events WHERE namespace = %s AND seq > %s AND kind = 'erase' "
                                "LIMIT 1", (ns, through)).fetchone():
                    return False
                conn.execute("DELETE FROM lamar_events WHERE namespace = %s AND seq <= %s", (ns, through))
                conn.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) "
                             "VALUES (%s, %s, 'snapshot', NULL, %s, %s)", (ns, through, float(snapshot.time), data))
            return True

        return self._db.run(run, "rewrite")

    def scrub(self, events: Sequence[Event]) -> int:
        """Replace events' data (`ErasableStore.scrub`) in one transaction that also deletes the
        namespace's saved state and blanks the text of its lesson rows (marked stale: the next
        engine builds them from the scrubbed log), holding off every rewrite and fold-mode write meanwhile. Then VACUUM
        removes the old row versions; their bytes can stay in the pages' free space until it is
        reused (`VACUUM FULL` rewrites the files), and in the server's write-ahead log, replicas
        and backups until they are recycled (docs/cli.md, "Erasing")."""
        ns = self.namespace
        rows = [(e.data_json(), ns, e.seq, e.kind, e.key, float(e.time)) for e in events]
        with self._tail_lock:
            self._tail = None  # it may hold events this scrub replaces

        def run(conn: Connection[Any]) -> int:
            from lamar.store.postgres.locks import ROWS_LOCK

            with conn.transaction():
                # The write lock before the rewrite lock, the order in which a checkpoint takes them
                # and a fold-mode write holding the first reaches the second (to_v8.sql's trigger):
                # taken the other way, a scrub and an apply could each wait for the other.
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (ROWS_LOCK, ns))
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_REWRITE_LOCK, ns))
                for row in rows:
                    cur = conn.execute("UPDATE lamar_events SET data = %s WHERE namespace = %s AND seq = %s "
                                       "AND kind = %s AND key IS NOT DISTINCT FROM %s AND time = %s", row)
                    if cur.rowcount != 1:
                        raise ValueError(f"event {row[2]} ({row[3]}) is not stored in {self.location} as named; "
                                         "nothing was changed")
                if conn.execute("SELECT to_regclass('lamar_state')").fetchone() not in (None, (None,)):
                    conn.execute("DELETE FROM lamar_state WHERE namespace = %s", (ns,))
                # Each row's text blanked, not the row deleted: the build keeps the lessons in the
                # order of their rows, which the log alone does not give (`locks.build`).
                conn.execute("UPDATE lamar_lessons SET state = '', scope = '{}'::jsonb, version = version + 1 "
                             "WHERE namespace = %s", (ns,))
                conn.execute("UPDATE lamar_namespaces SET folded = NULL WHERE namespace = %s", (ns,))
            for table in ("lamar_events", "lamar_lessons", "lamar_state"):
                if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() not in (None, (None,)):
                    conn.execute(f"VACUUM {table}")  # autocommit: VACUUM runs outside a transaction
            return len(rows)

        return self._db.run(run, "scrub")

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        ns, wanted = self.namespace, [key for key in keys if storable_key(key)]
        return self._db.parse(self._db.run(lambda conn: conn.execute(
            "SELECT seq, kind, key, time, data FROM lamar_events WHERE namespace = %s AND key = ANY(%s) ORDER BY seq",
            (ns, wanted)).fetchall()))

    def load_state(self) -> str | None:
        ns, pg = self.namespace, self._db.pg

        def run(conn: Connection[Any]) -> str | None:
            try:
                row = conn.execute("SELECT body FROM lamar_state WHERE namespace = %s", (ns,)).fetchone()
            except pg.errors.UndefinedTable:
                return None  # no engine saved a state in this database yet
            return None if row is None else str(row[0])

        return self._db.run(run)

    def save_state(self, seq: int, text: str) -> None:
        if not self.writes_on_read:
            raise StoreError(f"{self.location} is open to read only; the state was not saved")
        ns, pg = self.namespace, self._db.pg

        def run(conn: Connection[Any]) -> None:
            ensure_table(conn, "lamar_state", "state.sql")  # a cache: no schema migration
            with conn.transaction():
                # A state folded before an `erase` event may hold the text it took out: not kept.
                # The rewrite lock shared, never waited for: a scrub (which drops the state) holds
                # it, so a state either lands before the scrub drops it or sees the erase event.
                if conn.execute("SELECT pg_try_advisory_xact_lock_shared(%s, hashtext(%s))",
                                (_REWRITE_LOCK, ns)).fetchone() != (True,):
                    return
                conn.execute("INSERT INTO lamar_state (namespace, seq, body) SELECT %(ns)s, %(seq)s, %(body)s "
                             "WHERE NOT EXISTS (SELECT 1 FROM lamar_events WHERE namespace = %(ns)s "
                             "AND seq > %(seq)s AND kind = 'erase') ON CONFLICT (namespace) "
                             "DO UPDATE SET seq = EXCLUDED.seq, body = EXCLUDED.body",
                             {"ns": ns, "seq": seq, "body": text})

        try:
            self._db.run(run, "save the engine's state in")
        except pg.Error as exc:
            raise StoreError(f"could not save the engine's state in {self.location}: {reason(exc)}") from exc

    def save_note(self, name: str, text: str) -> None:
        """Keep `text` as this namespace's note `name`, which every process that opens it reads (`load_note`)."""
        from lamar.store.postgres.notes import save_note

        save_note(self._db, self.namespace, name, text)

    def load_note(self, name: str) -> str | None:
        """This namespace's note `name`, or None when none was kept."""
        from lamar.store.postgres.notes import load_note

        return load_note(self._db, self.namespace, name)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.location!r})"


def namespace_missing(url: str, *, timeout: float = 30.0) -> tuple[str, str] | None:
    """None when the namespace `url` names holds a store (any event); else why not and what to check,
    asked on one connection that writes nothing: a database without Lamar's tables is left without
    them, and a namespace nobody wrote gets no row (opening a store would give it both).

    Raises:
        StoreError: the server cannot be reached or refuses the query.
        ImportError: psycopg is not installed (the message names the postgres extra).
    """
    conninfo, namespace, location, _ = parse_url(url, None)
    try:
        import psycopg
    except ImportError as exc:  # asked before any store is opened (by the CLI), so the extra is named here too
        from lamar.extras import needs_extra

        raise ImportError(needs_extra(NEEDS_PSYCOPG, "postgres", exc)) from exc

    params: dict[str, Any] = {"autocommit": True, "fallback_application_name": "lamar"}
    try:
        # Inside the try: libpq refuses a URL with a parameter it does not know here.
        params.update(timeout_param(psycopg, conninfo, max(1, round(timeout))))
        with psycopg.connect(conninfo, **params) as conn:
            version = schema_version(conn)
            if version is None:  # a search_path left out of the URL, or naming a schema not made yet
                row = conn.execute("SELECT current_setting('search_path')").fetchone()
                return _or_langgraph(conn, f"no schema on its search_path ({row[0] if row else ''}) holds "
                                     "Lamar's tables", "check the search_path and the database in the URL for a typo")
            if version == 0:
                return None  # the layout before namespaces: its one log is the default namespace's
            row = conn.execute("SELECT EXISTS (SELECT 1 FROM lamar_events WHERE namespace = %s), "
                               "(SELECT relnamespace::regnamespace::text FROM pg_catalog.pg_class "
                               "WHERE oid = to_regclass('lamar_events'))", (namespace,)).fetchone()
            if row and row[0]:
                return None
            # Another schema's tables (another team's, in public) read for want of a search_path.
            return _or_langgraph(conn, f"namespace {namespace!r} holds no events in Lamar's tables in schema "
                                 f"{row[1] if row else '?'}", "check lamar_namespace, or the search_path in the URL, "
                                 "for a typo")
    except psycopg.Error as exc:
        raise StoreError(f"cannot open the PostgreSQL store {location}: {reason(exc)}{opening_advice(exc)}") from exc


def _or_langgraph(conn: Any, reason: str, advice: str) -> tuple[str, str]:
    """`reason` and `advice`, or, where the schema keeps Lamar's log inside LangGraph's PostgresStore (an app
    on LangGraphStore), what it holds and how to reach it: the likelier wish of a URL copied from that app."""
    from lamar.store.postgres.langgraph_log import langgraph_hint, langgraph_logs

    namespaces = langgraph_logs(conn)
    if not namespaces:
        return reason, advice
    held, reach = langgraph_hint(namespaces)
    return f"{reason}, but its {held}", f"{reach}, or {advice}"


__all__ = ["PostgresStore", "namespace_missing"]
