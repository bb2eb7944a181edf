"""A namespace's write lock in the fold mode, and what it guards: the seq through which the log is
settled, the exclusive hold of a checkpoint, and the build of the lesson rows from the log."""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from lamar._errors import StoreError
from lamar.experience import Status
from lamar.policy.config import SETTLING
from lamar.policy.lesson import LessonState
from lamar.store.base import Event, in_rows_order
from lamar.store.postgres import row_text
from lamar.store.postgres.connection import reason

if TYPE_CHECKING:
    from psycopg import Connection

    from lamar.store.postgres.connection import Connections

ROWS_LOCK = 0x4C524F57  # b"LROW", with the namespace's hash: writes hold it shared, builds exclusive
# b"LADD", with the namespace's hash: a write that adds lessons holds it from its read to COMMIT, taken before
# any other lock, so adds count the rows (their creation ranks) and take their seqs one at a time, in one order.
ADDS_LOCK = 0x4C414444
# A read of the log that misses no event, however late it commits (`settled`): the last seq the
# SEQUENCE handed out, then the transactions holding a namespace's write lock shared (as writes
# do; a build or a checkpoint holds it exclusively and stores no event at a new seq), then, until
# they have all ended, which of them still hold it. _SETTLE_WAIT: the most it waits.
_LAST_SEQ = "SELECT coalesce(pg_sequence_last_value('lamar_seq'), 0)"  # USAGE suffices, as for nextval
_HOLDERS = """SELECT virtualtransaction FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ShareLock'
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid = %(lock)s::oid AND objid = hashtext(%(ns)s)::oid AND objsubid = 2 AND pid <> pg_backend_pid()
    AND (%(among)s::text[] IS NULL OR virtualtransaction = ANY(%(among)s::text[]))"""
_SETTLE_WAIT = 1.0
_PAST_THE_LOG = """SELECT count(nextval('lamar_seq'))
    FROM generate_series(1, %(last)s - coalesce(pg_sequence_last_value('lamar_seq'), 0))"""

Folder = Callable[[list[Event]], tuple[Iterable[LessonState], tuple[int, float, float]]]
# The key of the rows' `folded` text (their tuning, as JSON) that names when the oldest erase found
# pending by their build was stored: every read and write gets that text anyway, so an engine
# learns of an erase stopped behind its event without asking the server (`erasure.finish`).
ERASING = "erasing"


def settled(db: Connections) -> int | None:
    """The seq through which the namespace's log is settled: every event with a seq at or
    below it that will ever commit has committed, so a read from now on sees them all. None
    when a write in flight did not end within _SETTLE_WAIT seconds (a writer stopped
    mid-write).

    Seq order is not commit order in the fold mode: a write may commit after another that took a
    later seq. But every write takes its seqs from one SEQUENCE while it holds the namespace's
    write lock (ROWS_LOCK), from before its first seq until it ends. So once the transactions
    that held the lock just after the SEQUENCE's last value V was read have ended, every event
    with a seq at or below V has committed or never will: a write that took the lock later takes
    seqs above V.
    """
    params: dict[str, Any] = {"lock": ROWS_LOCK, "ns": db.namespace, "among": None}

    def run(conn: Connection[Any]) -> int | None:
        (value,) = conn.execute(_LAST_SEQ).fetchone() or (0,)
        deadline, pause = time.monotonic() + _SETTLE_WAIT, 0.001
        while holders := [row[0] for row in conn.execute(_HOLDERS, params).fetchall()]:
            if time.monotonic() > deadline:
                return None
            time.sleep(pause)
            pause = min(2 * pause, 0.05)
            params["among"] = holders  # only those: a write that took the lock since takes later seqs
        return int(value)

    return db.run(run)


def past_the_log(db: Connections, last: int) -> None:
    """Move the SEQUENCE past seq `last`, which a log-mode write in a fold-mode namespace took (`_PAST_THE_LOG`).

    Raises:
        StoreError: the server could not be reached.
    """
    db.run(lambda conn: conn.execute(_PAST_THE_LOG, {"last": last}), "number the next writes of")


@contextlib.contextmanager
def exclusive(db: Connections) -> Iterator[None]:
    """Hold the namespace's write lock exclusively (no fold-mode write runs meanwhile): a
    checkpoint folds and rewrites the log under it, so no event commits below its seq.

    The lock is its connection's session's, and the block's calls run on that connection, each
    committing on its own (`Connections.holding`): a pool of one connection suffices. When that
    connection is lost after the block ended, the block's work stands. A checkpoint whose lock
    was lost earlier finds the log unsettled and writes nothing (`Follower.checkpoint`)."""
    held = done = False
    key = (ROWS_LOCK, db.namespace)
    for attempt in (1, 2):
        lost: tuple[Connection[Any], tuple[int, str | None]] | None = None
        try:
            with db.holding() as conn:
                lost = conn, db.backend(conn)
                try:
                    conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", key)
                    held = True
                    yield
                except BaseException as exc:
                    # The first error says what failed: a release that fails after it closed the
                    # connection, or leaves a lost one's backend to `end_lost` below.
                    with contextlib.suppress(db.pg.Error):
                        _unlock(conn, key)
                    if held and isinstance(exc, db.pg.Error) and not conn.broken:
                        raise StoreError(f"a statement under the write lock of {db.location} failed: {reason(exc)}; "
                                         "the lock was released") from exc
                    raise
                done = True
                _unlock(conn, key)
            return
        except db.pg.OperationalError as exc:
            if done:
                return  # only the lock's release failed, and its session is gone: nothing to keep
            if not held and lost is not None and not lost[0].broken:
                # The server ended the wait (lock_timeout, statement_timeout, a cancel) on a
                # connection still there: no loss to retry, and a retry would wait as long again.
                raise StoreError(f"cannot lock {db.location} for writing: {reason(exc)}; nothing was written: "
                                 "try again") from exc
            # A pooled connection the server ended (a restart, pg_terminate_backend): before
            # the lock is held nothing was done, so take it again on a fresh connection.
            if attempt == 1 and not held:
                db.replace_dead()
                continue
            if not held:
                raise StoreError(f"lost the connection to {db.location} twice while waiting for its write lock: "
                                 f"{reason(exc)}; nothing was written: try again") from exc
            raise StoreError(f"lost the connection to {db.location} that held its write lock: {reason(exc)}; "
                             "the next call reconnects") from exc
        except db.pg.Error as exc:
            if done:
                return  # only the lock's release failed, and it closed the connection, lock and all
            raise StoreError(f"cannot lock {db.location} for writing: {reason(exc)}") from exc
        finally:
            if lost is not None:
                # Across a half-open link the server still waits for the lock or holds it, and
                # would hold it for ever once granted: every write, and this retry, behind it.
                # However the block ended (the calls in it that found the connection lost may
                # have got none to end it on), and once the connection is back in the pool,
                # which then has room for the one that ends it.
                db.end_lost(*lost)


def _unlock(conn: Connection[Any], key: tuple[int, str]) -> None:
    """Release a session's write lock (if it got it: a lock asked for and cancelled may have been
    granted). A session lock outlives the transaction, so a connection that cannot release it is
    closed, never handed back to the pool holding it; a lost one's backend is ended by the caller."""
    if conn.closed:
        return
    try:
        conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", key)
    except BaseException:
        if not conn.broken:
            conn.close()
        raise


def build(db: Connections, tuning: str, folder: Folder, *, force: bool = False) -> None:
    """Build the namespace's rows again from the whole log, as `folder` folds it in-process, the
    lessons that had rows kept in the order they had (`in_rows_order`).

    Heavy (a read and a fold of every event) and exclusive: fold-mode writes of the namespace
    wait. Unless `force`, nothing is done when, once the lock is held, the rows turn out built
    under `tuning` (a fleet that starts at once builds them once, not once per engine).
    """
    ns = db.namespace

    def run(conn: Connection[Any]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (ROWS_LOCK, ns))
            built = conn.execute("SELECT folded FROM lamar_namespaces WHERE namespace = %s", (ns,)).fetchone()
            if not force and built is not None and built_as(built[0])[0] == tuning:
                return  # another engine built them while this one waited for the lock
            events = db.parse(conn.execute(
                "SELECT seq, kind, key, time, data FROM lamar_events WHERE namespace = %s ORDER BY seq",
                (ns,)).fetchall())
            folded, (n, mean, m2) = folder(events)
            pending = [e.time for e in events if e.kind == "erase" and e.data.get("pending") is True]
            marked = json.dumps({**json.loads(tuning), ERASING: min(pending)}, sort_keys=True) if pending else tuning
            had = dict(conn.execute("SELECT id, added FROM lamar_lessons WHERE namespace = %s", (ns,)).fetchall())
            by_id = {s.experience.id: s for s in folded}
            states = [by_id[i] for i in in_rows_order(list(by_id), had)]
            last = events[-1].seq if events else 0
            rows = [(s.experience.id, s.experience.status.value, json.dumps(dict(s.experience.scope)),
                     row_text.encode(s, row_text.lesson_text(s.experience))) for s in states]
            # Seqs to come must follow every seq of the log, whichever mode wrote it (the log mode numbers a
            # namespace's events itself, so its log may be ahead of the sequence). Only nextval moves it:
            # setval is not atomic with other sessions' nextval and, between a look at the sequence and
            # the set, could move it back under seqs they took meanwhile. Each nextval moves it up by one
            # at least, so as many as the log was ahead bring it past the log, whoever else takes seqs.
            conn.execute(_PAST_THE_LOG, {"last": last})
            # Every row gets a version no row of the namespace ever had: a write that read a row
            # before this build finds it moved, even a row rebuilt as it was, and no engine takes
            # its parsed copy of an older row as current. A version is a value of the SEQUENCE
            # (a build's), plus one per later write of the row, and each such write took a value
            # of it for its event: the SEQUENCE's next value stands above them all, even those of
            # rows a scrub deleted, which the rows left (or the log's last seq) no longer show.
            (version,) = conn.execute("SELECT greatest(coalesce(max(version), 0) + 1, nextval('lamar_seq')) "
                                      "FROM lamar_lessons WHERE namespace = %s", (ns,)).fetchone() or (1,)
            conn.execute("DELETE FROM lamar_lessons WHERE namespace = %s", (ns,))
            conn.execute("DELETE FROM lamar_rewards WHERE namespace = %s", (ns,))
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO lamar_lessons (namespace, id, added, status, scope, state, version) "
                                "VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s)",
                                [(ns, i, order, st, sc, body, version) for order, (i, st, sc, body) in enumerate(rows)])
            active = sum(s.experience.status is not Status.RETIRED for s in states)
            conn.execute("INSERT INTO lamar_rewards (namespace, shard, n, mean, m2, active) "
                         "VALUES (%s, 0, %s, %s, %s, %s)", (ns, n, mean, m2, active))
            conn.execute("INSERT INTO lamar_namespaces (namespace, last_seq, folded) VALUES (%s, %s, %s) "
                         "ON CONFLICT (namespace) DO UPDATE SET folded = EXCLUDED.folded, "
                         "last_seq = greatest(lamar_namespaces.last_seq, EXCLUDED.last_seq)", (ns, last, marked))

    db.run(run, "build the lesson rows of")


# `refresh`, one message: the namespace's row locked first (a log-mode write, which updates it, then
# waits for this transaction, and the next statement, in a snapshot of its own, sees every event before
# it), then the rows written in one statement, only where `ok` holds: the rows stale, this session
# holding the write lock exclusively (`exclusive`, as it did before the write that left them stale:
# nothing else changed them since), and the log ending at the caller's last event. Each row gets a
# version it never had (see `build`), so no engine takes its parsed copy of it as current.
_REFRESH = """BEGIN;
SELECT pg_advisory_xact_lock(%(lock)s, hashtext(%(ns)s));
SET LOCAL enable_seqscan = off;
SELECT FROM lamar_namespaces WHERE namespace = %(ns)s FOR UPDATE;
WITH ok AS (
    SELECT nextval('lamar_seq') AS version FROM lamar_namespaces AS n WHERE n.namespace = %(ns)s AND n.folded IS NULL
        AND EXISTS (SELECT FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ExclusiveLock'
            AND pid = pg_backend_pid() AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid = %(lock)s::oid AND objid = hashtext(%(ns)s)::oid AND objsubid = 2)
        AND (SELECT max(e.seq) FROM lamar_events AS e WHERE e.namespace = %(ns)s) = %(through)s
        AND (NOT %(whole)s OR (SELECT count(*) FROM lamar_lessons AS l WHERE l.namespace = %(ns)s) = %(count)s)),
rows AS (
    UPDATE lamar_lessons AS l SET status = u.status, scope = u.scope, state = u.state,
        version = greatest(l.version + 1, ok.version)
    FROM ok, json_to_recordset(%(rows)s::json) AS u(id text, status text, scope jsonb, state text)
    WHERE l.namespace = %(ns)s AND l.id = u.id RETURNING 1),
gone AS (DELETE FROM lamar_rewards AS r USING ok WHERE r.namespace = %(ns)s AND r.shard <> 0),
counts AS (
    INSERT INTO lamar_rewards AS r (namespace, shard, n, mean, m2, active)
    SELECT %(ns)s, 0, %(n)s, %(mean)s, %(m2)s, %(active)s FROM ok
    ON CONFLICT (namespace, shard) DO UPDATE SET n = EXCLUDED.n, mean = EXCLUDED.mean, m2 = EXCLUDED.m2,
        active = EXCLUDED.active),
built AS (UPDATE lamar_namespaces AS n SET folded = %(folded)s FROM ok WHERE n.namespace = %(ns)s)
SELECT (SELECT count(*) FROM ok), (SELECT count(*) FROM rows)"""


def refresh(db: Connections, folded: str, rows: str, count: int, rewards: tuple[int, float, float], active: int,
            through: int, *, whole: bool = False) -> bool:
    """Write `count` lesson rows (`rows`, as a write sends them; `whole`: every row of the namespace),
    the reward statistics and the count of lessons not retired, and mark the rows built under `folded`
    again, in one transaction: the end of `build`, for the rows a replaced outcome changed, without
    reading or folding the whole log.

    Only while this session holds the write lock exclusively (`exclusive`), the rows are stale and
    the log ends at seq `through`. False, with nothing written, otherwise: the caller builds the rows.
    """
    n, mean, m2 = rewards
    params = {"lock": ROWS_LOCK, "ns": db.namespace, "through": through, "whole": whole, "count": count,
              "rows": rows, "n": n, "mean": mean, "m2": m2, "active": active, "folded": folded}

    def run(conn: Connection[Any]) -> bool:
        cur = db.pg.ClientCursor(conn)  # client-side binding: several statements, one message
        try:
            cur.execute(_REFRESH, params)
            for _ in range(4):
                cur.nextset()
            done = bool(cur.fetchone() == (1, count))
        except BaseException:
            if not conn.broken:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT" if done else "ROLLBACK")
        return done

    return db.run(run, "write the lesson rows of")


@functools.lru_cache(maxsize=16)
def built_as(folded: str | None) -> tuple[str | None, float | None]:
    """The rows' `folded` text as (the tuning they were built under, when the oldest erase their
    build found pending was stored, or None); one parse per text. The settling knobs, which rows
    built before they were left out still name, are dropped: the fold does not read them."""
    if folded is None:
        return None, None
    tuning = {name: value for name, value in json.loads(folded).items() if name not in SETTLING}
    erasing = tuning.pop(ERASING, None)
    return json.dumps(tuning, sort_keys=True), None if erasing is None else float(erasing)


# The erase events whose scrub has not run: the text test spares decoding every other erase
# event (data is stored compact, `Event.data_json`); the decoded data has the last word.
_UNSCRUBBED = """SELECT seq, kind, key, time, data FROM lamar_events WHERE namespace = %s AND seq > %s
    AND kind = 'erase' AND data LIKE '%%"pending":true%%' ORDER BY seq"""


def unscrubbed(db: Connections, after: int) -> list[Event]:
    """The namespace's erase events above seq `after` still marked pending
    (`FoldedRows.unscrubbed`): a pass over those events, since no index finds a kind."""
    found = db.parse(db.run(lambda conn: conn.execute(_UNSCRUBBED, (db.namespace, int(after))).fetchall()))
    return [e for e in found if e.data.get("pending") is True]


def places(db: Connections) -> dict[str, int]:
    """Each lesson row's place in the order the lessons were added, by id (`FoldedRows.places`)."""
    query = "SELECT id, added FROM lamar_lessons WHERE namespace = %s"
    return db.run(lambda conn: {str(i): int(added) for i, added in conn.execute(query, (db.namespace,)).fetchall()})


__all__ = ["ADDS_LOCK", "ERASING", "ROWS_LOCK", "Folder", "build", "built_as", "exclusive", "places", "refresh",
           "settled", "unscrubbed"]
