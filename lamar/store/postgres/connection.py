"""The PostgreSQL store's one connection layer: a pool, reads retried once, and write transactions
whose lost COMMIT is settled by asking the server."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from lamar._errors import CorruptStore, EventConflict, LamarError, StoreError
from lamar.extras import needs_extra
from lamar.store.base import EVENT_KINDS, Event, UnknownKind, closed_store, stored_problem
from lamar.store.decode import EventDecoder, no_cycle_collection
from lamar.store.postgres import server_errors
from lamar.store.postgres.server_errors import RUN_AGAIN, RUN_AGAIN_AFTER, advice
from lamar.store.postgres.setup import READ_COMMITTED, RECONNECTS_FOR, PoolSetup
from lamar.store.postgres.wire import keyed, timeout_param

if TYPE_CHECKING:
    from psycopg import Connection

_T = TypeVar("_T")
NEEDS_PSYCOPG = "a PostgreSQL store needs psycopg 3"  # with needs_extra: where psycopg is first imported
_BEGIN = "BEGIN; SELECT pg_current_xact_id()::text"
# A healthy pool hands out a connection, or opens a new one, well within this; a longer wait
# asks the server directly whether it is there before waiting out the rest of `timeout`.
_FIRST_WAIT = 1.0
# How long a server found down is not waited for: calls meanwhile skip the pool's wait, so a
# caller that fails open (a hook, a callback) does not wait again on every call.
_DOWN_FOR = 5.0


class NotWritten(Exception):
    """The write certainly did not commit, and may if run again: its connection failed, or the
    server rolled it back against another transaction (safe to retry)."""


class Connections:
    """The connections of one store object to its database, for one namespace.

    A lost connection: a read is retried once on a fresh connection; a write that surely did not
    commit is retried once (`retrying`); one whose COMMIT went unanswered is settled by asking the
    server about its transaction (pg_xact_status) or its keys, never by writing it twice. An error
    the server raises on a connection still there is no loss: it is reported as itself, with what
    to do, and run again once only if it rolled a transaction back against another (a deadlock).

    Args:
        conninfo: what libpq connects with.
        namespace, location: the store's (every message names `location`, never a password).
        pool_size: most connections open at once (threads beyond it wait their turn).
        timeout: seconds to wait for the server or for a free connection. A wait past a second
            first connects to the server directly: if nothing answers there (refused, no route,
            no answer within 2 s), the call fails at once; for the next 5 s calls skip the wait
            (asking again directly if it refused at once); a server that answers (busy, or out of
            connection slots) is waited for, once: a retry would find it as busy.
        settle_timeout: seconds to learn whether a write whose COMMIT got no answer committed (one
            `timeout` if no slot).
        opened: runs on the first, direct connection (its errors say what is wrong: no such
            database...), before the pool opens: the schema's migration.

    Raises:
        StoreError: the server cannot be reached, or `opened` failed on it.
    """

    def __init__(self, conninfo: str, *, namespace: str, location: str, pool_size: int, timeout: float,
                 settle_timeout: float, opened: Callable[[Connection[Any]], None]) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise ImportError(needs_extra(NEEDS_PSYCOPG, "postgres", exc)) from exc
        self.pg = psycopg
        self.namespace, self.location = namespace, location
        self._settle_timeout = settle_timeout
        self._conninfo, self._timeout = conninfo, timeout
        self._probe_lock = threading.Lock()
        # The server found down: until when, why, and whether it refused at once.
        self._down: tuple[float, str, bool] | None = None
        self._refused: str | None = None  # the last direct connection the server refused: its words
        self._closed = False
        self._close_lock = threading.Lock()
        self._in_use: set[Connection[Any]] = set()  # all of them in use: a wait for one fails without a retry
        self._held = threading.local()  # `holding`: the connection this thread's calls run on
        params: dict[str, Any] = {"autocommit": True, "fallback_application_name": "lamar"}
        try:
            params.update(timeout_param(psycopg, conninfo, max(1, round(timeout))))
            with psycopg.connect(conninfo, **params) as conn:
                conn.execute(READ_COMMITTED)
                opened(conn)
        except psycopg.Error as exc:
            fix = server_errors.opening_advice(exc)
            raise StoreError(f"cannot open the PostgreSQL store {location}: {reason(exc)}{fix}") from exc
        # When each pooled connection's backend started: with its pid, it names that backend to
        # `_settle_keys` (a pid alone may be reused by another connection's backend).
        self._setup = PoolSetup(location)
        self._started = self._setup.started
        # The pool's threads log each failed attempt; with no handler anywhere, Python's last-resort
        # handler would print them on stderr under a CLI, a hook or an MCP server, though the call
        # that failed already raises a StoreError saying why. A NullHandler keeps them from stderr
        # and leaves them to propagate to whatever handlers an application configures.
        pool_log = logging.getLogger("psycopg.pool")
        if not any(isinstance(h, logging.NullHandler) for h in pool_log.handlers):
            pool_log.addHandler(logging.NullHandler())
        self._pool = ConnectionPool(conninfo, kwargs=params, min_size=1, max_size=pool_size, timeout=timeout, open=True,
                                    name=f"lamar:{namespace}", configure=self._setup, reconnect_timeout=RECONNECTS_FOR)

    # -- reads -------------------------------------------------------------------------------

    def run(self, query: Callable[[Connection[Any]], _T], doing: str = "read") -> _T:
        """Run a read-only (or idempotent) `query`; a dead connection is replaced and the query retried
        once, as is a transaction of it the server aborted in a deadlock or serialization failure."""
        pg = self.pg
        for attempt in (1, 2):
            held: tuple[int, str | None, Connection[Any]] | None = None
            try:
                with self._leased() as conn:
                    held = conn.info.backend_pid, self._started.get(conn), conn
                    return query(conn)
            except pg.OperationalError as exc:
                if held is not None and not held[2].closed and exc.sqlstate is not None:
                    # The server raised it on a connection still there: no loss, and only a transaction
                    # it aborted against another (deadlock, serialization) can succeed if run again.
                    if attempt == 1 and exc.sqlstate in RUN_AGAIN:
                        time.sleep(RUN_AGAIN_AFTER)
                        continue
                    raise StoreError(f"cannot {doing} {self.location}: {reason(exc)}{advice(exc)}") from exc
                if attempt == 1:
                    if held is not None and held[2].broken:
                        self._end_backend(held[0], held[1])
                    self.replace_dead()
                    continue
                raise StoreError(f"lost the connection to {self.location}: {reason(exc)}; "
                                 "the next call reconnects") from exc
            except pg.Error as exc:
                raise StoreError(f"cannot {doing} {self.location}: {reason(exc)}") from exc
        raise AssertionError("unreachable")

    def backend(self, conn: Connection[Any]) -> tuple[int, str | None]:
        """The server backend of a pooled connection, by pid and start time (`end_lost` names it so)."""
        return conn.info.backend_pid, self._started.get(conn)

    def end_lost(self, conn: Connection[Any], backend: tuple[int, str | None]) -> None:
        """End the backend of `conn` (named by `backend`, read before) if the client lost it."""
        if conn.broken:
            self._end_backend(*backend)

    def _end_backend(self, pid: int, started: str | None, *, direct: bool = False) -> None:
        """End the backend of a connection lost mid-query, and wait until it has ended (at most
        `settle_timeout` seconds): across a half-open link it may still hold its transaction's
        locks, which a retry of a locking write would wait behind for ever. Named by pid and start
        time, so a reused pid names no one; a server that cannot be asked is left to the retry.
        `direct`: asked on a connection of its own, not a pooled one."""
        if started is None:
            return
        deadline = time.monotonic() + self._settle_timeout
        while True:
            try:
                with (self._direct() if direct else self._leased()) as conn:
                    row = conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                       "WHERE pid = %s AND backend_start = %s::timestamptz", (pid, started)).fetchone()
            except (self.pg.Error, StoreError):
                return
            if not row or not row[0] or time.monotonic() > deadline:
                return
            time.sleep(0.05)

    @contextmanager
    def connection(self) -> Iterator[Connection[Any]]:
        """A pooled connection held for a block (a transaction that must stay on one)."""
        with self._leased() as conn:
            yield conn

    @contextmanager
    def holding(self) -> Iterator[Connection[Any]]:
        """A pooled connection held for a block, on which this thread's calls run meanwhile (while
        it is not lost): a block holding a lock on it (a checkpoint's) waits for no second
        connection, which a pool of one, or a pool whose others wait for that lock, never frees."""
        with self._leased() as conn:
            before = getattr(self._held, "conn", None), getattr(self._held, "backend", None)
            self._held.conn, self._held.backend = conn, self.backend(conn)
            try:
                yield conn
            finally:
                self._held.conn, self._held.backend = before

    @contextmanager
    def _leased(self) -> Iterator[Connection[Any]]:
        """A pooled connection (what `ConnectionPool.connection` does), given up early when the
        server is down.

        Raises:
            StoreError: the store is closed, or its server does not answer.
        """
        self.check_open()
        held: Connection[Any] | None = getattr(self._held, "conn", None)
        if held is not None and not held.closed:
            with held:
                yield held
            return
        if held is not None and self._pool.max_size == 1:
            # A lost one is left for the pool's others, but a pool of one has none: its one
            # connection is the lost one, handed back only once the block ends.
            raise server_errors.OnlyConnectionLost(f"lost the connection to {self.location} this call held, its "
                                                   "pool's only one (pool_size=1); try again: the next call reconnects")
        if held is not None and self._held.backend is not None:
            # Across a half-open link its backend lives on, holding the block's lock (a checkpoint's),
            # for which the pool's other connections may all wait: ended first, or none comes free.
            backend, self._held.backend = self._held.backend, None
            self._end_backend(*backend, direct=True)
        started = time.monotonic()
        down = self._down
        if down is not None and started < down[0] and not self._answers():
            raise self._unreachable()
        try:
            conn = self._pool.getconn(timeout=self._setup.wait(min(self._timeout, _FIRST_WAIT)))
        except self.pg.OperationalError:
            if not self._answers():
                raise self._unreachable() from None
            if not self._in_use:  # with others held, it is a busy pool's wait: one may come free in time
                self._setup.check()
            try:
                conn = self._pool.getconn(timeout=max(0.0, self._timeout - (time.monotonic() - started)))
            except self.pg.OperationalError:
                if len(self._in_use) >= self._pool.max_size:  # no retry: a busy pool would be as busy again
                    raise self._busy() from None
                if not self._answers():
                    raise self._unreachable() from None
                if self._refused is not None:  # no retry either: the slots are as full on a second wait
                    raise self._busy(self._refused) from None
                self._setup.check()
                raise  # some not in use: the pool is (re)connecting, retried as a lost connection
        self._in_use.add(conn)  # a set's add and discard are atomic: no lock
        try:
            with conn:
                yield conn
        finally:
            self._in_use.discard(conn)
            self._pool.putconn(conn)

    def _answers(self) -> bool:
        """Whether the server answers a connection of its own (one asker at a time: threads
        waiting on a busy pool do not all open one). An answer that refuses it (too many clients,
        authentication; libpq reports it with no SQLSTATE) still means the server is there, and is
        noted in `_refused`; only no answer marks it down. A server
        that refused at once is cheap to ask again; one that let the connect time out is not
        asked again for `_DOWN_FOR` seconds."""
        with self._probe_lock:
            down = self._down
            if down is not None and time.monotonic() < down[0] and not down[2]:
                return False
            asked, self._refused = time.monotonic(), None
            try:
                self._direct().close()
            except self.pg.OperationalError as exc:
                now = time.monotonic()
                if exc.sqlstate is None and not server_errors.answered(self.pg, self._conninfo, exc, now - asked):
                    self._down = (now + _DOWN_FOR, reason(exc), now - asked < 0.5)
                    return False
                self._refused = reason(exc) if exc.sqlstate is None else None
            except self.pg.Error:
                pass
            self._down = None
            return True

    def _direct(self) -> Connection[Any]:
        """A connection of its own, outside the pool (libpq's smallest connect_timeout, 2 s, unless
        the URL sets one)."""
        return self.pg.connect(self._conninfo, autocommit=True, fallback_application_name="lamar",
                               **timeout_param(self.pg, self._conninfo, 2))

    def _busy(self, refused: str | None = None) -> StoreError:
        """No connection within `timeout`: the pool's all stayed in use, or the server `refused` a new one."""
        size = self._pool.max_size
        if refused is None:
            why = f"all {size} connections of its pool (pool_size={size}) stayed in use by this store's other calls"
            fix = ("give the store a pool_size of at least the number of threads that call it at once, "
                   "or a longer timeout")
        else:
            why, fix = server_errors.refusal(refused)
        text = (f"no connection to {self.location} within {self._timeout:g} s: {why}; nothing was sent, so nothing "
                f"of this call was kept. {fix[0].upper()}{fix[1:]}")
        return StoreError(text) if refused is None else server_errors.NoSlot(text, refused)

    def _unreachable(self) -> StoreError:
        why = self._down[1] if self._down is not None else "no answer"
        return StoreError(f"cannot reach {self.location} ({why}); nothing was sent, and the next call "
                          "tries again")

    def parse(self, rows: Iterable[tuple[Any, ...]]) -> list[Event]:
        """Events from rows of (seq, kind, key, time, data), each holding what the API could have
        written: a row edited by hand (a reward of "nan" or 2) is refused, not folded into evidence."""
        decode = EventDecoder()
        rows = list(rows)
        unknown = next(((s, k) for s, k, *_ in rows if k not in EVENT_KINDS), None)
        if unknown is not None:
            raise UnknownKind(unknown[1], f"{self.location}: event {unknown[0]}")
        try:
            with no_cycle_collection():
                events = [Event.stored(s, k, key, t, decode(k, d)) for s, k, key, t, d in rows]
        except (ValueError, TypeError) as exc:
            raise CorruptStore(f"{self.location} holds an event that does not parse: {exc}") from exc
        for event in events:
            problem = stored_problem(event)
            if problem is not None:
                raise CorruptStore(f"{self.location}: event {event.seq} ({event.kind!r}) {problem}; it was left "
                                   "untouched. Restore it from a backup, or delete or fix that row")
        return events

    # -- writes ------------------------------------------------------------------------------

    def retrying(self, write: Callable[[], _T]) -> _T:
        """Run `write`; once more on a fresh connection if it surely did not commit."""
        for attempt in (1, 2):
            try:
                return write()
            except NotWritten as exc:
                cause = exc.__cause__
                if attempt == 1:
                    if getattr(cause, "sqlstate", None) in RUN_AGAIN:
                        time.sleep(RUN_AGAIN_AFTER)
                    self.replace_dead()
                    continue
                if getattr(cause, "sqlstate", None) in RUN_AGAIN:
                    raise StoreError(f"could not write {self.location}: {exc} (tried twice); nothing of this "
                                     f"write was kept{advice(cause)}") from cause
                raise StoreError(f"could not write {self.location}: {exc} (connection lost, tried twice); "
                                 "nothing of this write was kept; the next call reconnects") from cause
        raise AssertionError("unreachable")

    def transact(self, body: Callable[[Any, list[str]], _T], committed: Callable[[list[int]], _T],
                 events: Sequence[Event], after: int = 0) -> _T:
        """Run one write transaction of `events`: `body(cursor, xid)` begins it, appends its id
        to `xid` as soon as it knows it, and commits. A write that sends its events, every one
        with a key, in one message never learns its id. A lost connection is settled, by the id or
        else by the keys: `committed(seqs)` answers for a COMMIT that went through unanswered
        (`seqs`: the events', all above `after`); NotWritten means safe to retry."""
        pg = self.pg
        xid: list[str] = []
        pid, started, conn = 0, None, None
        try:
            with self._leased() as conn:
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
            if conn is not None and not conn.broken:  # the server raised it: rolled back above
                if exc.sqlstate in RUN_AGAIN:
                    raise NotWritten(reason(exc)) from exc
                raise StoreError(f"could not write {self.location}: {reason(exc)}; "
                                 f"nothing of this write was kept{advice(exc)}") from exc
            if xid:
                seqs = self._seqs_of(xid[0], after) if self._settle(xid[0], pid, exc) else None
            elif conn is not None and keyed(events):  # sent as one message: it may have committed
                seqs = self._settle_keys(pid, started, events, exc)
            else:
                seqs = None  # no connection, or lost before it learned its id: it wrote nothing
            if seqs is None:
                raise NotWritten(reason(exc)) from exc
            return committed(seqs)
        except pg.Error as exc:
            raise StoreError(f"could not write {self.location}: {reason(exc)}; "
                             "nothing of this write was kept") from exc

    @staticmethod
    def begin(cur: Any, xid: list[str]) -> None:
        """Begin a write's transaction and put its id in `xid` (see `transact`)."""
        cur.execute(_BEGIN)
        cur.nextset()
        xid.append(str(cur.fetchone()[0]))

    @staticmethod
    def alone(cur: Any, statement: str, params: dict[str, Any]) -> Any:
        """Run one statement as a transaction of its own (the connection is in autocommit): one
        message, its parameters bound by the server; psycopg prepares it once it recurs (the
        server then neither parses nor plans it again). Returns the cursor at its result."""
        return cur.connection.execute(statement, params)

    def _settle(self, xid: str, pid: int, cause: Exception) -> bool:
        """Whether transaction `xid`, whose COMMIT went unanswered, committed.

        The backend that ran it may still hold the COMMIT in its input buffer, so an
        "in progress" answer is waited out; after a second it is terminated (it is running
        our transaction and nothing else) so that the outcome becomes final.
        """
        def decide(nudge: bool) -> tuple[bool, bool]:
            status = self.run(lambda conn: conn.execute(
                "SELECT pg_xact_status(%s::xid8)", (xid,)).fetchone()[0])  # type: ignore[index]
            if status == "in progress" and nudge:
                self.run(lambda conn: conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = %s "
                    "AND backend_xid = (%s::xid8::text::bigint %% 4294967296)::text::xid", (pid, xid)))
            return status in ("committed", "aborted"), status == "committed"

        return self._settled(decide, f"transaction {xid}", cause)

    def _settle_keys(self, pid: int, started: str | None, events: Sequence[Event],
                     cause: Exception) -> list[int] | None:
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
            if self.run(lambda conn: conn.execute(alive, {"pid": pid, "started": started}).fetchone()[0]):  # type: ignore[index]
                if started is not None and nudge:
                    self.run(lambda conn: conn.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = %s "
                        "AND backend_start = %s::timestamptz", (pid, started)))
                return False, None
            found = {key: (seq, kind, at) for seq, kind, key, at in self.run(lambda conn: conn.execute(
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
            except (server_errors.NoSlot, server_errors.OnlyConnectionLost) as exc:
                # Asked again, it would wait out `timeout` for a slot again, or find the lost connection again.
                raise exc.unsettled(f"lost the connection to {self.location} while committing ({reason(cause)})", what)
            except StoreError:
                pass  # the server is not answering yet: ask again
            if time.monotonic() > deadline:
                raise StoreError(
                    f"lost the connection to {self.location} while committing ({reason(cause)}) and "
                    f"could not learn within {self._settle_timeout:g} s whether the write was kept "
                    f"({what}); it is all or nothing: read the store before writing it again") from cause
            time.sleep(0.05)

    def _seqs_of(self, xid: str, after: int) -> list[int]:
        """The seqs that committed transaction `xid` wrote, all above `after` (its rows carry
        its xid; rare, and a scan of the namespace's log above `after`)."""
        seqs = [int(row[0]) for row in self.run(lambda conn: conn.execute(
            "SELECT seq FROM lamar_events WHERE namespace = %s AND seq > %s "
            "AND xmin = (%s::xid8::text::bigint %% 4294967296)::text::xid ORDER BY seq",
            (self.namespace, after, xid)).fetchall())]
        if not seqs:
            raise StoreError(f"transaction {xid} committed but its events are not in {self.location}")
        return seqs

    # -- the pool ----------------------------------------------------------------------------

    def replace_dead(self) -> None:
        """Test the idle pooled connections and replace the dead ones, before a retry."""
        try:
            self._pool.check()
        except self.pg.Error:
            pass  # the retry reports what is wrong

    def check_open(self) -> None:
        if self._closed:
            raise closed_store(self.location)

    def close(self) -> None:
        with self._close_lock:
            if not self._closed:
                self._closed = True
                self._pool.close()


def reason(exc: BaseException) -> str:
    """The server's first message line, without psycopg's class name."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


__all__ = ["Connections", "NotWritten", "reason"]
