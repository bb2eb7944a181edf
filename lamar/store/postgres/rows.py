"""The fold mode of `PostgresStore`: PostgreSQL holds each lesson's folded state in a row, which
every write of a lesson event updates in the transaction that appends it."""

from __future__ import annotations

import itertools
import json
import random
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from lamar._errors import CorruptStore, LamarError, StoreError, UnknownEpisode
from lamar.policy import fold
from lamar.policy.lesson import LessonState
from lamar.store.appendable import storable_key
from lamar.store.base import LESSON_KINDS, Event, RowsView
from lamar.store.postgres import locks
from lamar.store.postgres.batch import SHARDS, Batch, FoldInputs, empty_write, merge_shards, named
from lamar.store.postgres.counters import WriteCounters
from lamar.store.postgres.inbox import Inbox, Vanished
from lamar.store.postgres.known import Contended, KnownRows, RowsMoved
from lamar.store.postgres.locks import ROWS_LOCK
from lamar.store.postgres.wire import events_json, keyed, result_parts

if TYPE_CHECKING:
    from psycopg import Connection

    from lamar.store.postgres.connection import Connections

# What a write folds, read in its first message: one call of `lamar_fold_inputs` (functions.sql).
# The optimistic write reads with no lock at all. When its events all carry keys (a report) the
# read is a transaction of its own, and the write is one message, settled by its keys: no
# transaction stays open while the client folds, so none holds back the pruning of the rows' old
# versions. Otherwise (a status, a scope, a merge) the read begins the write's transaction and
# learns its xid, by which a COMMIT whose answer is lost is settled.
_FOLD_INPUTS = """SELECT part, id, body, version, n, mean, m2, active FROM lamar_fold_inputs(%(ns)s, %(ids)s::text[],
    %(episodes)s::text[], %(locking)s, %(lock)s, true, %(ticket)s)"""
_READ = f"BEGIN;\n{_FOLD_INPUTS}"
# An add's read begins its transaction under the namespace's add lock (`locks.ADDS_LOCK`) and then counts the rows, each
# statement seeing every add before it committed: its lessons' creation ranks, which the log's order gives them again.
_READ_ADD = (f"BEGIN;\nSELECT pg_advisory_xact_lock(%(adds)s, hashtext(%(ns)s));\n{_FOLD_INPUTS};\n"
             "SELECT count(*) FROM lamar_lessons WHERE namespace = %(ns)s")
_READ_ALONE = """BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
SELECT part, id, body, version, n, mean, m2, active
FROM lamar_fold_inputs(%(ns)s, %(ids)s::text[], %(episodes)s::text[], false, %(lock)s, false, %(ticket)s);
COMMIT"""
# Its second message (`lamar_write`) checks that none of those rows moved before it writes: a
# transaction of its own where the write is one message, else followed by COMMIT. Rows and events
# travel as one JSON text each, which the server parses once.
_WRITE_ONE = """SELECT seq FROM lamar_write(%(ns)s, %(lock)s, %(take_lock)s, %(expected)s::json, %(n_expected)s,
    %(absent)s::text[], %(folded)s, %(updated)s::json, %(added)s::json, %(shards)s, %(r_n)s, %(r_mean)s,
    %(r_m2)s, %(active)s, %(stale)s, %(events)s::json, %(done)s::bigint[], %(queue)s, %(tickets)s::bigint[]) AS seq"""
_WRITE = _WRITE_ONE + ";\nCOMMIT"
MOVED = "lamar: the lesson rows moved since they were read"  # lamar_write's message (functions.sql)
# A write of events that touch no row (an episode), sent alone: `lamar_log`, three parameters
# where `lamar_write` takes nineteen (their conversion is most of a client's cost for it).
_LOG_ONE = "SELECT seq FROM lamar_log(%(ns)s, %(lock)s, %(events)s::json) AS seq"
# A read sees one snapshot: rows, counters and `folded` as one build or write left them (a
# snapshot per statement could let a build commit between them, and make an empty set of rows
# look built). `lamar_view` is STABLE, so one statement is one snapshot: it is sent alone, bound
# by the server and prepared once it recurs.
_VIEW = """SELECT part, id, body, version, n, mean, m2, active FROM lamar_view(%(ns)s, %(ctx)s::jsonb,
    %(scopes)s::jsonb, %(ids)s::text[])"""
_SUBSETS = 8  # most context items whose subsets a recall lists (2**8 scopes), above it rows are matched one by one
# The locking write, taken after OPTIMISTIC_TRIES conflicts so that a hot lesson cannot starve
# a writer, reads the same with `locking` true: the namespace's write lock shared and the rows
# locked before they are read (they stay locked across the client's fold, one round trip).
OPTIMISTIC_TRIES = 4
# A first report of an episode this store wrote may fold the rows as its recall read them
# (`KnownRows.recalled_inputs`), unless a read of its own has lately paid. Where other writers fold into the
# same lessons while an agent takes its turn, the rows have moved by its report: a write from the recall's
# read conflicts and the report is queued (3 to 5 messages), where a read of its own and a write would have
# been 2. A read of its own pays where the rows moved since the recall and yet no queued report waits on them
# (it writes alone), and costs a message where they did not move or where reports wait (it is queued all the
# same). Each report learns which it was: one read first, by comparing the versions with its recall's and by
# how its write went; one written from its recall's read, by its write going through (0), or conflicting and
# then being folded alone in the inbox (1). _SAVED_WEIGHT of each enters the share `_saved`, and a report
# reads first while that share is at least _SAVED_LIMIT: a message lost every time against about 3 saved when
# it pays. A store starts at the limit: its first report reads.
_SAVED_LIMIT = 1 / 3
_SAVED_WEIGHT = 0.25
_REQUEUES = 3  # times a report is queued again after its queued outcome vanished unfolded
_BACKOFF = 0.002  # seconds: the k-th conflict waits a uniform draw below _BACKOFF * 2**k


class LessonRows:
    """The fold mode's reads and writes for one `PostgresStore`.

    Every write of a lesson event updates the rows it names in the transaction that appends it:
    an experience adds a row; a status, scope or merge changes those rows; an outcome folds into
    the rows of its episode's eligible lessons (`Batch`, with lamar/policy/fold.py, the engine's
    own per-kind fold) and its reward into one of the namespace's sharded spread counters.

    A write is optimistic: its first message reads the rows with their `version` and takes no
    lock; the client folds; its second message locks the rows it read in id order, checks that no
    version moved (else it aborts and the write starts over, and after a few conflicts takes the
    rows' locks before reading them), writes them and commits. No lock is held across a client's
    round trip on that path, so a stopped client stalls no one but the namespace's other adds (an
    add holds `locks.ADDS_LOCK` from its read to COMMIT, for its creation rank). A recall reads the eligible rows
    (no lock) and never replays anyone's events, so a fleet's work grows with its episodes, not
    with their square. Seqs come from one SEQUENCE, taken after the rows' locks: restricted to one
    lesson, seq order is the order its folds ran, so folding the log in seq order in-process (each
    outcome names the sigma its fold used) gives the same rows. An event may commit after a
    reader passed its seq (`settled` says how far the log is settled: an engine folds it that far).

    Where first reports contend for the same rows (a report's write conflicted, or its read found
    reports waiting), a report is queued in the inbox (`Inbox`) instead, and the reporter whose
    outcome is oldest among those sharing a lesson writes as any writer does, folding the inbox's
    oldest outcomes, its own among them, in ticket order. The outcomes enter the log only when
    folded, with seqs taken then, so the log's seq order is still the order of the folds. Only
    reports that share a lesson wait for each other, and a report left queued by a reporter that
    died is folded by the next report on any of its lessons.

    Rows are valid for the tuning named in `lamar_namespaces.folded`; NULL means "stale": an
    outcome the rows cannot fold (a replacement, an episode no key finds) or a write in the log
    mode sets it, and the next engine to read the rows builds them again from the log (`build`),
    under an exclusive lock that every fold-mode write holds shared. A build gives every row a
    version above any the namespace had, so a write that read the rows before it conflicts. A
    replacement's engine, which holds that lock meanwhile, writes the rows it changed instead (`refresh`).

    Args:
        db: the store's connections.
        optimistic: False: every write locks its rows before reading them.
    """

    def __init__(self, db: Connections, *, optimistic: bool = True) -> None:
        self._db = db
        self._known = KnownRows(db.location)
        self._inbox = Inbox(db)
        self._optimistic = optimistic
        # The last report here was queued behind others' (another write folded it, or its write
        # folded others' too): the next report of an episode this store wrote is queued at once.
        self._crowded = False
        self._between: Callable[[], None] | None = None  # tests: runs between a write's read and its write
        self._jitter = random.Random()
        self._saved = _SAVED_LIMIT  # the recent share of reports that a read of their own saved a queuing
        self._moved = False  # whether the last report that read first found its rows moved since its recall
        # A read that found a row it cannot decode, and the tuning the rows named (see `_view`).
        self._undecodable: tuple[CorruptStore, str | None] | None = None
        self._erasing: float | None = None  # as the last read found it
        self._staled: str | None = None  # the rows' `folded`, when this object's last write marked them stale
        self._counts = dict.fromkeys(("conflicts", "locked", "unread", "reread", "queued", "combined"), 0)

    @property
    def counters(self) -> WriteCounters:
        """What this object's writes did so far (see `WriteCounters`)."""
        return WriteCounters(**self._counts, waited=self._inbox.waited)

    def reset_contention(self) -> None:
        """Forget that reports here were lately queued behind others' (a benchmark's warm-up
        burst queues every client's report once; the next would be queued at once)."""
        self._crowded = False

    # -- reads -------------------------------------------------------------------------------

    def eligible(self, context: dict[str, str]) -> RowsView:
        """The non-retired lessons whose scope the context contains, in the order they were added."""
        items = sorted(context.items())
        # one JSON array, not a jsonb[]: psycopg escapes an array's elements one by one
        scopes = None if len(items) > _SUBSETS else json.dumps(
            [dict(subset) for size in range(len(items) + 1) for subset in itertools.combinations(items, size)])
        return self._view({"ctx": json.dumps(context), "scopes": scopes, "ids": None})

    def lessons(self, ids: Sequence[str] | None = None) -> RowsView:
        """The lessons with these ids (every lesson when None), in the order they were added."""
        wanted = None if ids is None else [i for i in ids if storable_key(i)]
        return self._view({"ctx": None, "scopes": None, "ids": wanted})

    def _view(self, params: dict[str, Any]) -> RowsView:
        ns = self._db.namespace

        def run(conn: Connection[Any]) -> list[tuple[Any, ...]]:
            return conn.execute(_VIEW, {"ns": ns, **params}).fetchall()

        rows, shards, built = result_parts(self._db.run(run), 3)
        folded, active = built[0][2] if built else None, sum(int(row[7]) for row in shards)
        tuning, self._erasing = locks.built_as(folded)
        found = [(i, raw, int(v)) for _, i, raw, v, *_ in rows]
        self._known.note_read(folded, [row[4:7] for row in shards], active, found)  # as a write compares it
        n, _, m2 = merge_shards(row[4:7] for row in shards)
        if folded is not None and self._known.policy(folded) is None:
            return RowsView([], fold.spread(n, m2), active, None)  # another design's states: built again
        try:
            states = [self._known.known(i, raw, v) for i, raw, v in found]
        except CorruptStore as exc:
            # Rows another Lamar folded under other tuning (a release whose state holds other
            # numbers) are stale for this engine whatever they hold: reported as not built, the
            # engine builds them again from the log. Under its own tuning, `build` refuses.
            self._undecodable = (exc, tuning)
            return RowsView([], fold.spread(n, m2), active, None)
        return RowsView(states, fold.spread(n, m2), active, tuning)

    def settled(self) -> int | None:
        """The seq through which the namespace's log is settled (`locks.settled`); None when a
        write in flight did not end in time (a writer stopped mid-write)."""
        return locks.settled(self._db)

    def build(self, tuning: str, folder: locks.Folder, *, force: bool = False) -> None:
        """Build the rows again from the whole log, as `folder` folds it in-process (`locks.build`): once for
        a namespace written in the log mode, and after an outcome the rows could not fold (a replacement).

        Raises:
            CorruptStore: the last read found a row it cannot decode among rows folded under
                `tuning` itself (damaged, or edited by hand): `force` builds them again.
        """
        undecodable, self._undecodable = self._undecodable, None
        if undecodable is not None and undecodable[1] == tuning and not force:
            raise undecodable[0]
        locks.build(self._db, tuning, folder, force=force)

    def exclusive(self) -> AbstractContextManager[None]:
        """Hold the namespace's write lock exclusively (no fold-mode write runs meanwhile)."""
        return locks.exclusive(self._db)

    def places(self) -> dict[str, int]:
        """Each lesson row's place in the order the lessons were added, by id (`locks.places`)."""
        return locks.places(self._db)

    def erasing(self) -> float | None:
        return self._erasing  # `FoldedRows.erasing`: from the `folded` text every read gets anyway (`locks.ERASING`)

    def unscrubbed(self, after: int = 0) -> list[Event]:
        """The namespace's erase events above seq `after` still marked pending (`locks.unscrubbed`)."""
        return locks.unscrubbed(self._db, after)

    def refresh(self, tuning: str, states: Iterable[LessonState], rewards: tuple[int, float, float], active: int,
                through: int, *, whole: bool = False) -> bool:
        """`FoldedRows.refresh`, after this object's last write left rows of `tuning` stale (`locks.refresh`)."""
        staled, self._staled, rows = self._staled, None, list(states)
        return staled is not None and locks.built_as(staled)[0] == tuning and locks.refresh(
            self._db, staled, self._known.rows_json(rows), len(rows), rewards, active, through, whole=whole)

    # -- writes ------------------------------------------------------------------------------

    def append(self, events: list[Event], *, strict: bool = False) -> list[Event]:
        """Append `events` and fold them into the rows, in one transaction.

        Optimistic: the rows are read unlocked, folded here and written only if none moved meanwhile; a
        conflict rolls back and starts over after a short random wait, and after `OPTIMISTIC_TRIES` conflicts
        the write locks the rows before reading them. A first report (one outcome) goes its own way
        (`_report`).

        Args:
            strict: an outcome whose episode no key finds raises UnknownEpisode (nothing is
                written) instead of being stored with the rows marked stale.

        Raises:
            EventConflict: an event's key is taken, or an experience's id already has a row.
            UnknownEpisode: (strict) as above.
            StoreError: the server could not be reached (a write that surely did not commit is
                tried once more on a fresh connection first).
        """
        # Retried here, not by the store's `append`: the engine reports through this method too.
        self._staled = None
        return self._db.retrying(lambda: self._append_once(events, strict))

    def _append_once(self, events: list[Event], strict: bool) -> list[Event]:
        if not any(e.kind in LESSON_KINDS for e in events):
            written = self._attempt(events, "plain", strict)
            self._known.remember(written)
            return written
        if self._optimistic and len(events) == 1 and events[0].kind == "outcome" and events[0].key is not None \
                and not events[0].data.get("replace"):
            return self._report(events[0], strict)
        for attempt in range(OPTIMISTIC_TRIES if self._optimistic else 0):
            try:
                return self._attempt(events, "optimistic", strict)
            except RowsMoved:
                self._counts["conflicts"] += 1
                time.sleep(self._jitter.uniform(0.0, _BACKOFF * 2**attempt))
        self._counts["locked"] += 1
        return self._attempt(events, "locking", strict)

    def _report(self, event: Event, strict: bool) -> list[Event]:
        """Write a first report: folded from its recall's read when this store recalled it moments
        ago (one message), else, or where reads of their own have lately saved reports here from
        queuing (`_saved`), from a read of its own.

        Where reports contend for the same rows (that write conflicted, or the read found the
        inbox holding outcomes), the report is queued in the inbox instead, and this client folds
        the inbox's oldest outcomes, its own among them, in one write, as any contended reporter
        does: one write folds many reports, in ticket order, and whichever write folds a report
        first, its reporter learns it by its key. No lock is held across a round trip unless a
        reporter conflicted `OPTIMISTIC_TRIES` times: it then locks the rows and the entries
        before reading them. Returns once the report is in the log and the rows.

        While reports here keep being queued behind others' (`_crowded`), a report of an episode
        this store wrote (so its episode is known to be there) is queued at once: its own read or
        write would only find the rows contended again. The first report folded alone ends that.
        """
        if self._crowded and self._known.forget_episode(f"episode:{event.data.get('episode')}"):
            queue_now, recalled = True, None
        else:
            queue_now, recalled = False, self._known.recalled_inputs([event])
        # tried: "recall" (written from its recall's read) or "read" (read first, with the recall's
        # read to compare), for what the report learns (`_learn`); attempt: optimistic tries so far
        attempt, tried = 0, None
        try:
            if queue_now:
                raise Contended("the last report here was queued behind others")
            if recalled is None:
                return self._attempt([event], "report", strict)
            if self._saved < _SAVED_LIMIT:
                tried = "recall"
                written = self._attempt([event], "recalled", strict, recalled)
                self._counts["unread"] += 1
                self._learn(False)
                return written
            tried = "read"
            self._counts["reread"] += 1
            written = self._attempt([event], "report", strict, recalled)
            self._learn(self._moved)
            return written
        except RowsMoved:
            self._counts["conflicts"] += 1
            attempt = 1
        except Contended:
            pass
        if tried == "read":
            self._learn(False)  # read first, and contended all the same: it is queued
        self._counts["queued"] += 1
        self._crowded = True  # until a write of this store folds its report alone
        for _ in range(_REQUEUES):
            # A queued outcome that left the inbox unfolded (a server restarted while it waited:
            # the inbox is UNLOGGED) is queued again.
            try:
                written = self._fold_queued(event, attempt)
            except Vanished:
                attempt = 0
                continue
            if tried == "recall":  # folded alone, nobody else waiting: a read of its own would have written it
                self._learn(not self._crowded)
            return written
        raise StoreError(f"a report queued in {self._db.location} vanished {_REQUEUES} times before it was "
                         "folded (is the server restarting?); nothing of it was written: report it again")

    def _learn(self, saved: bool) -> None:
        """Learn whether a read of its own saved (or would have saved) a report its queuing."""
        self._saved += _SAVED_WEIGHT * (float(saved) - self._saved)

    def _fold_queued(self, event: Event, attempt: int) -> list[Event]:
        """Queue a first report, wait for its turn, and fold it (or learn that another write
        did): `_report`'s contended path. `attempt`: optimistic tries so far."""
        ticket, lessons, done = self._inbox.queue(event, None, frozenset())  # queued, then its turn waited for
        while done is None:
            how = "combine" if attempt < OPTIMISTIC_TRIES else "combine-locking"
            try:
                folded = self._transaction([], how, False, ticket=ticket)
            except RowsMoved:
                self._counts["conflicts"] += 1
                time.sleep(self._jitter.uniform(0.0, _BACKOFF * 2 ** min(attempt, OPTIMISTIC_TRIES)))
                attempt += 1
                if attempt < OPTIMISTIC_TRIES:  # whose turn is it now?
                    ticket, lessons, done = self._inbox.queue(event, ticket, lessons)
                continue
            if how == "combine-locking":
                self._counts["locked"] += 1
            if folded is None:  # another write folded (or dropped) it
                return self._inbox.folded(event)
            mine = [e for e in folded if e.key == event.key and e.time == event.time]
            if mine:
                self._crowded = len(folded) > 1
                return mine
            attempt = 0  # it lay beyond this write's outcomes: fold the next ones
        return done

    def _attempt(self, events: list[Event], how: str, strict: bool, recalled: FoldInputs | None = None) -> list[Event]:
        written = self._transaction(events, how, strict, recalled)
        assert written is not None  # only a combining write can find nothing to do
        return written

    def _transaction(self, events: list[Event], how: str, strict: bool, recalled: FoldInputs | None = None,
                     ticket: int | None = None) -> list[Event] | None:
        """One transaction of a write (see the class docstring), `how`: plain (no rows), recalled
        (folded from `recalled`, one message), optimistic, report (optimistic, raising Contended
        if outcomes are queued; its read is compared with `recalled`, when given, to learn whether
        the rows moved since the recall), locking, or combine / combine-locking (the inbox's
        oldest outcomes; None once `ticket` has left the inbox)."""
        db = self._db
        outcomes = [e for e in events if e.kind == "outcome"]
        ids = sorted({i for e in events for i in named(e)})
        params: dict[str, Any] = {"ns": db.namespace, "lock": ROWS_LOCK, "ids": ids, "ticket": ticket,
                                  "episodes": [f"episode:{e.data.get('episode')}" for e in outcomes]}
        adds = any(e.kind == "experience" for e in events)
        alone = keyed(events) and not adds  # sent as one message, settled by its keys
        combining = how.startswith("combine")
        report, how = how in ("report", "recalled"), "optimistic" if how == "report" else how
        optimistic = how in ("optimistic", "recalled", "combine")

        def body(cur: Any, xid: list[str]) -> list[Event] | None:
            write = empty_write(db.namespace)
            written = list(events)
            folded: dict[str, LessonState] = {}
            versions: dict[str, int] = {}
            if how == "plain" and not alone:
                db.begin(cur, xid)
            elif how == "recalled":
                assert recalled is not None
                read = recalled
            elif how != "plain":
                if how in ("optimistic", "combine") and (alone or combining):
                    cur.execute(_READ_ALONE, params)
                else:
                    locking = how in ("locking", "combine-locking")
                    cur.execute(_READ_ADD if adds else _READ, {**params, "locking": locking, "adds": locks.ADDS_LOCK})
                read = FoldInputs.fetched(cur, xid, adds)
                if combining and not read.waiting:
                    if how == "combine-locking":
                        cur.execute("ROLLBACK")  # the locking read began a transaction: nothing to write
                    return None
                if report and read.inbox:
                    raise Contended("reports are queued for these rows")
            if how != "plain":
                if combining:
                    written = [Event("outcome", json.loads(data), key=key, time=at)
                               for _, key, at, data, taken in read.inbox if not taken]
                    write["done"] = [entry[0] for entry in read.inbox]
                    write["tickets"] = [entry[0] for entry in read.inbox if not entry[4]]  # the events'
                    self._counts["combined"] += len(written)
                versions = {exp_id: version for exp_id, _, version in read.rows}
                if recalled is not None and read is not recalled:  # a read of its own: did the rows move?
                    self._moved = any(versions.get(exp_id) != version for exp_id, _, version in recalled.rows)
                written = self._fold(written, read, write, strict, folded, not optimistic)
            if optimistic:
                eligible = {i for data in read.episodes.values() for i in json.loads(data).get("eligible", ())}
                write.update(n_expected=len(versions), absent=sorted((set(ids) | eligible) - set(versions)),
                             folded=read.folded,
                             expected=json.dumps([{"id": i, "version": v} for i, v in versions.items()]))
                if self._between is not None:
                    self._between()
            write["take_lock"] = how not in ("locking", "combine-locking")  # a locking read took it
            write["queue"] = report
            write["events"] = events_json(written)
            try:
                if how == "plain" and alone:  # an episode: nothing to check, fold or notify
                    cur = db.alone(cur, _LOG_ONE, {"ns": db.namespace, "lock": ROWS_LOCK, "events": write["events"]})
                elif how == "recalled" or (how == "optimistic" and alone) or how == "combine":
                    cur = db.alone(cur, _WRITE_ONE, write)
                else:
                    cur.execute(_WRITE, write)
            except db.pg.errors.SerializationFailure as exc:
                if MOVED in str(exc):
                    raise RowsMoved(MOVED) from exc  # rolled back by the connection layer
                raise
            except db.pg.errors.UniqueViolation as exc:
                if combining:  # a queued outcome's episode was just reported another way
                    raise RowsMoved(MOVED) from exc
                raise
            seqs = sorted(int(row[0]) for row in cur.fetchall())  # the events' seqs (COMMIT follows)
            self._known.note_written(folded, versions)
            return [e.numbered(seq) for e, seq in zip(written, seqs, strict=True)]

        def committed(seqs: list[int]) -> list[Event] | None:
            """A COMMIT whose answer was lost went through: the events with the seqs it wrote."""
            if combining:
                raise RowsMoved("settled")  # read again: the reporter's own entry is gone, or not
            return [e.numbered(seq) for e, seq in zip(events, seqs, strict=True)]

        return db.transact(body, committed, events)

    def _fold(self, events: list[Event], read: FoldInputs, write: dict[str, Any], strict: bool,
              rows: dict[str, LessonState], locked: bool) -> list[Event]:
        """Fold `events` into the rows in `read`; fills `write`, and `rows` with the states written; returns
        the events as they are to be stored (outcomes name the sigma and divisor their fold used)."""
        known = self._known
        policy = None if read.folded is None else known.policy(read.folded)
        if policy is None:  # stale, never built, or another design's: the next engine builds them from the log
            missing = [e for e in events
                       if e.kind == "outcome" and f"episode:{e.data.get('episode')}" not in read.episodes]
            if strict and missing:
                raise UnknownEpisode(f"no episode {missing[0].data.get('episode')!r} is found by its key")
            return events
        # A copy of each row as parsed for a read (or written here) at that version: the fold
        # changes the copy, and the read's object stays as the row was.
        batch = Batch(policy, known.copies(read.rows, locked), read, strict, self._db.location)
        out = []
        for event in events:
            try:
                event = batch.fold(event)
            except LamarError:  # a refusal (UnknownEpisode is a KeyError too): nothing is written
                raise
            except (KeyError, TypeError, ValueError, AttributeError):
                batch.stale = True  # malformed: stored as is; the engine's fold of the log names it
            out.append(event)
        touched = [s for i, s in batch.touched.items() if i not in batch.added]
        rows.update(batch.touched)
        rows.update(batch.added)
        write["updated"] = known.rows_json(touched)
        write["added"] = known.rows_json(batch.added.values())
        write["r_n"], write["r_mean"], write["r_m2"] = batch.rewards
        write["active"] = batch.active - read.active
        write["stale"] = batch.stale
        self._staled = read.folded if batch.stale else None
        return out


__all__ = ["MOVED", "OPTIMISTIC_TRIES", "SHARDS", "LessonRows", "empty_write"]
