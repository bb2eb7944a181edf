"""The fold mode of `PostgresStore`: PostgreSQL holds each lesson's folded state in a row.

Every write of a lesson event updates the rows it names in the transaction that appends it:

    experience -> a new row          status, scope, merge -> those rows
    outcome    -> the rows of its episode's eligible lessons, folded with `LessonState.observe`
                  (lamar/policy/fold.py, the engine's own fold), and the reward into one of the
                  namespace's sharded spread counters

A write is optimistic: its first message reads the rows with their `version` and takes no lock;
the client folds; its second message locks the rows it read in id order, checks that no version
moved (else it aborts and the write starts over, and after a few conflicts takes the rows'
locks before reading them), writes them and commits. No lock is ever held across a client's
round trip on that path, so a stopped client stalls no one. A recall reads the eligible rows (no
lock) and never replays anyone's events, so a fleet's work grows with its episodes, not with
their square. Seqs come from one SEQUENCE, taken after the rows' locks: restricted to one
lesson, seq order is the order its folds ran, so folding the log in seq order in-process (each
outcome names the sigma its fold used) gives the same rows. What `read(after)` no longer
promises: an event may commit after a reader passed its seq (`settled` says how far the log is
settled: an engine folds it that far).

Where first reports contend for the same rows (a report's write conflicted, or its read found
reports waiting), a report is queued in `lamar_inbox` instead (in a slot reused once folded,
under a ticket from the SEQUENCE), and the reporter whose outcome is oldest among those sharing
a lesson writes as any writer does, folding the inbox's oldest outcomes, its own among them,
in ticket order. One write then folds many reports, and its notice tells the reporters whose
outcomes it folded their seqs (`_queue`, `_wait`). The outcomes enter the log only when
folded, with seqs taken then, so the log's seq order is still the order of the folds. Only
reports that share a lesson wait for each other: a report is written on its own only while no
report on any of its lessons waits, a write folds only the queued reports that share a lesson
with its own, and a report left queued by a reporter that died is folded by the next report
on any of its lessons.

Rows are valid for the tuning named in `lamar_namespaces.folded`; NULL means "stale": an
outcome the rows cannot fold (a replacement, an episode no key finds) or a write in the log
mode sets it, and the next engine to read the rows builds them again from the log (`build`),
under an exclusive advisory lock that every fold-mode write holds shared. A build gives every
row a version above any the namespace had, so a write that read the rows before it conflicts.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import random
import struct
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from lamar._errors import CorruptStore, EventConflict, LamarError, StoreError, UnknownEpisode
from lamar.experience import Experience, Status
from lamar.policy import fold
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.store import row_text
from lamar.store.base import LESSON_KINDS, Event, RowsView

if TYPE_CHECKING:
    from psycopg import Connection

    from lamar.store.postgres import PostgresStore

ROWS_LOCK = 0x4C524F57  # b"LROW", with the namespace's hash: writes hold it shared, builds exclusive
SHARDS = 16  # reward-spread counter rows per namespace (a connection adds to one of them)
_UNFOLDED_POLICY = ("pending_after", "pending_outcome")  # not used by the fold (and not plain JSON)

# What a write folds, read in its first message: one call of `lamar_fold_inputs` (below), which
# reads the rows' tuning, the episodes of the batch's outcomes, the rows the batch touches with
# their versions, and the namespace's counters (the spread, the count of lessons not retired),
# as parts of one result. The optimistic write reads with no lock at all. When its events all
# carry keys (a report) the read is a transaction of its own, and the write is one message,
# settled by its keys: no transaction stays open while the client folds, so none holds back
# the pruning of the rows' old versions. Otherwise (a status, a scope, a merge) the read begins
# the write's transaction and learns its xid, by which a COMMIT whose answer is lost is settled.
_READ = """BEGIN;
SELECT part, id, body, version, n, mean, m2, active FROM lamar_fold_inputs(%(ns)s, %(ids)s::text[], %(episodes)s::text[],
    %(locking)s, %(lock)s, true, %(ticket)s)"""
_READ_ALONE = """BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;
SELECT part, id, body, version, n, mean, m2, active FROM lamar_fold_inputs(%(ns)s, %(ids)s::text[], %(episodes)s::text[],
    false, %(lock)s, false, %(ticket)s);
COMMIT"""
# Its second message (`_WRITE`) checks that none of those rows moved before it writes.
_MOVED = "lamar: the lesson rows moved since they were read"
# The locking write, taken after `OPTIMISTIC_TRIES` conflicts so that a hot lesson cannot starve
# a writer, reads the same with `locking` true: the namespace's write lock shared and the rows
# locked before they are read (they stay locked across the client's fold, one round trip).
# A write that names no lesson (an episode) reads nothing: it is one message when its events all
# carry keys (settled by them, see `PostgresStore._transact`), else it learns its xid
# (`store._begin`), then writes.
OPTIMISTIC_TRIES = 4  # optimistic attempts of one write before it takes the rows' locks
# A first report of an episode this store wrote folds the rows as its recall read them, when that
# read is at most _FRESH seconds old (`LessonRows._recalled_inputs`), unless a read of its own has
# lately paid. Where other writers fold into the same lessons while an agent takes its turn, the
# rows have moved by its report: a write from the recall's read conflicts and the report is queued
# (3 to 5 messages), where a read of its own and a write would have been 2. A read of its own
# pays where the rows moved since the recall and yet no queued report waits on them (it writes
# alone), and costs a message where they did not move (the recall's read would have done) or
# where reports wait (it is queued all the same). Each report learns which it was: one read
# first, by comparing the versions with its recall's and by how its write went; one written from
# its recall's read, by its write going through (0), or conflicting and then being folded alone
# in the inbox (1: the rows had moved, and no one else was waiting). _SAVED_WEIGHT of each enters
# the share `LessonRows._saved`, and a report reads first while that share is at least
# _SAVED_LIMIT: a message lost every time against about 3 saved when it pays. A store starts at
# the limit: its first report reads. (Until version 7 a conflict made the next 16 reports read
# first; trying the recall's rows every time did as well or better, in a benchmark whose reports
# came milliseconds after their recalls, and whose conflicts were mostly reports waiting.)
_FRESH = 10.0
_SAVED_LIMIT = 1 / 3
_SAVED_WEIGHT = 0.25
_RECALLED = 256  # episodes a store remembers for their reports
_REQUEUES = 3  # times a report is queued again after its queued outcome vanished unfolded
_BACKOFF = 0.002  # seconds: the k-th conflict waits a uniform draw below _BACKOFF * 2**k
# A reporter whose outcome waits in the inbox behind older ones that share a lesson with it
# waits for the write that folds them (it notifies INBOX_CHANNEL), up to _LEASE seconds without
# one, then folds them itself: a stopped folder delays the others by at most that.
INBOX_CHANNEL = "lamar_inbox"
_LEASE = 0.2
# A read of the log that misses no event, however late it commits (`LessonRows.settled`): the
# last seq the SEQUENCE handed out, then the transactions holding a namespace's write lock
# shared (as writes do; a build or a checkpoint holds it exclusively and takes no new seq), then,
# until they have all ended, which of them still hold it. _SETTLE_WAIT: the most it waits.
_LAST_SEQ = "SELECT coalesce(pg_sequence_last_value('lamar_seq'), 0)"  # USAGE suffices, as for nextval
_HOLDERS = """SELECT virtualtransaction FROM pg_locks WHERE locktype = 'advisory' AND granted AND mode = 'ShareLock'
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid = %(lock)s::oid AND objid = hashtext(%(ns)s)::oid AND objsubid = 2 AND pid <> pg_backend_pid()
    AND (%(among)s::text[] IS NULL OR virtualtransaction = ANY(%(among)s::text[]))"""
_SETTLE_WAIT = 1.0
# The second message is one call of `lamar_write` (below): a transaction of its own where the
# write is one message (`PostgresStore._alone`), else followed by COMMIT. Rows and events travel
# as one JSON text each, which the server parses once.
_WRITE_ONE = """SELECT seq FROM lamar_write(%(ns)s, %(lock)s, %(take_lock)s, %(expected)s::json, %(n_expected)s,
    %(absent)s::text[], %(folded)s, %(updated)s::json, %(added)s::json, %(shards)s, %(r_n)s, %(r_mean)s,
    %(r_m2)s, %(active)s, %(stale)s, %(events)s::json, %(done)s::bigint[], %(queue)s, %(tickets)s::bigint[]) AS seq"""
_WRITE = _WRITE_ONE + ";\nCOMMIT"
# A write of events that touch no row (an episode), sent alone: `lamar_log`, three parameters
# where `lamar_write` takes nineteen (their conversion was most of a client's cost for it).
_LOG_ONE = "SELECT seq FROM lamar_log(%(ns)s, %(lock)s, %(events)s::json) AS seq"
# What a write's second message runs, as a function so that the server plans its statements
# once per connection, not on every call (planning was about half of the server's time for a
# report, measured with pg_stat_statements); created by the schema's migrations to versions 3 and 4.
#   1. Take the namespace's write lock shared (unless the first message did).
#   2. An optimistic write (`p_expected` not NULL) locks the rows it read in id order (so two
#      writes never deadlock) where their version has not moved, and goes on only if every one
#      of them matched, no row appeared under an id it found absent, and the rows' tuning is the
#      one it read; else it raises serialization_failure and the write starts over. A row
#      updated while this one waited for its lock is re-checked against the join, so a moved
#      version drops it: a conflict, never a lost fold. The rows' state needs no second look: it
#      is locked and unchanged since the read.
#   3. Write the folded rows, the new rows, this connection's shard of the namespace's counters
#      (its rewards, and the change in the count of lessons not retired), the stale mark and the
#      events. A `json` value's text is kept as sent, so `data` is stored
#      exactly; the SEQUENCE is read in the events' order (volatile output is computed after
#      ORDER BY).
# A function's body is part of the schema: changing it takes a new schema version whose migration
# creates it anew (a store migrated to this version keeps the body it got). Version 4 made every
# call cost the rows it returns, not the namespace's size:
#   - the count of lessons not retired is summed from the counter shards (it had been counted
#     row by row on every call);
#   - a recall finds its rows by scope through an index;
#   - every lookup by key is one index probe per key: a LATERAL subquery with LIMIT or OFFSET,
#     which the planner never turns into a join. Planned generically and without statistics (a
#     table never analyzed), `namespace = $1 AND id = ANY($2)` had been taken for a handful of
#     rows and run as a filter over every row of the namespace: a report cost 0.8 ms more with
#     2 000 lessons in it than with 20.
# Version 5 made it hold whatever the tables held when a connection planned them: the functions
# run with enable_seqscan off. A plan is made once per connection, and one made while a table
# was tiny (a new store) may scan it, then keeps scanning it as it grows; version 4's UPDATE of
# the folded rows did so on every write (a hash join over every row of every namespace). A
# test plans on empty tables, grows them, and counts the scans (none).
# Every part of a result has the same columns; a part leaves NULL what it does not use.
FUNCTIONS = """
-- Signatures an earlier version had: version 7 changed what these take or return.
DROP FUNCTION IF EXISTS lamar_enqueue(text, text, double precision, json);
DROP FUNCTION IF EXISTS lamar_view(text, jsonb, jsonb[], text[]);
DROP FUNCTION IF EXISTS lamar_write(text, integer, boolean, json, integer, text[], text, json, json, integer, bigint,
    double precision, double precision, bigint, boolean, json, bigint[], boolean);

CREATE OR REPLACE FUNCTION lamar_fold_inputs(p_ns text, p_ids text[], p_episodes text[], p_locking boolean,
    p_lock integer, p_xid boolean, p_ticket bigint)
    RETURNS TABLE (part integer, id text, body text, version bigint, n bigint, mean double precision,
                   m2 double precision, active bigint)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
    wanted text[];
    queued bigint[];
    episode_keys text[];
    episode_data text[];
    mine text[];
BEGIN
    IF p_xid THEN
        RETURN QUERY SELECT 0, NULL::text, pg_current_xact_id()::text, NULL::bigint, NULL::bigint, NULL::float8,
            NULL::float8, NULL::bigint;
    END IF;
    -- A combining write whose reporter's queued outcome another write folded meanwhile has
    -- nothing to do: it reads nothing more.
    IF p_ticket IS NOT NULL AND NOT EXISTS (SELECT FROM lamar_inbox AS i WHERE i.namespace = p_ns
                                            AND i.ticket = p_ticket) THEN
        RETURN;
    END IF;
    IF p_locking THEN
        PERFORM pg_advisory_xact_lock_shared(p_lock, hashtext(p_ns));
    END IF;
    RETURN QUERY SELECT 1, NULL::text, s.folded, NULL::bigint, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
        FROM lamar_namespaces AS s WHERE s.namespace = p_ns;
    -- Each episode is read once, into episode_keys and episode_data: first the caller's.
    SELECT coalesce(array_agg(e.key), '{}'), coalesce(array_agg(e.data), '{}') INTO episode_keys, episode_data
        FROM (SELECT DISTINCT unnest(p_episodes)) AS k(key) CROSS JOIN LATERAL (
            SELECT e.key, e.data FROM lamar_events AS e WHERE e.namespace = p_ns AND e.key = k.key LIMIT 1) AS e;
    -- The inbox's oldest outcomes (queued by reports that found their rows contended) that share
    -- a lesson with the caller's (its own queued outcome's, or its episodes'): a write that reads
    -- them folds them, so their episodes and rows are read too. Reports on other lessons are left
    -- to their own writers: they contend with nobody here.
    mine := coalesce((SELECT i.lessons FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.ticket = p_ticket),
        ARRAY(SELECT jsonb_array_elements_text(x.data::jsonb -> 'eligible') FROM unnest(episode_data) AS x(data)));
    queued := ARRAY(SELECT i.ticket FROM lamar_inbox AS i
                    WHERE i.namespace = p_ns AND (i.lessons && mine OR i.ticket = p_ticket) ORDER BY i.ticket LIMIT 64);
    SELECT episode_keys || coalesce(array_agg(e.key), '{}'), episode_data || coalesce(array_agg(e.data), '{}')
        INTO episode_keys, episode_data
        FROM (SELECT DISTINCT 'episode:' || (i.data::jsonb ->> 'episode') FROM lamar_inbox AS i
              WHERE i.namespace = p_ns AND i.ticket = ANY(queued)) AS k(key)
        CROSS JOIN LATERAL (SELECT e.key, e.data FROM lamar_events AS e WHERE e.namespace = p_ns AND e.key = k.key
                            LIMIT 1) AS e
        WHERE k.key <> ALL(episode_keys);
    RETURN QUERY SELECT 2, x.key, x.data, NULL::bigint, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
        FROM unnest(episode_keys, episode_data) AS x(key, data);
    -- The rows the batch names and its episodes' eligible lessons, in id order: the locking
    -- read takes their locks in that order (so two writes never deadlock). A row updated while
    -- the read waited for its lock is read as that update left it.
    wanted := ARRAY(SELECT DISTINCT w.id FROM unnest(p_ids || ARRAY(
        SELECT jsonb_array_elements_text(x.data::jsonb -> 'eligible') FROM unnest(episode_data) AS x(data)
    )) AS w(id) ORDER BY w.id);
    -- The two branches differ only in FOR UPDATE: a lock clause cannot be a parameter, and
    -- dynamic SQL would be planned on every call.
    IF p_locking THEN
        RETURN QUERY SELECT 3, l.id, l.state, l.version, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
            FROM unnest(wanted) AS w(id) CROSS JOIN LATERAL (
                SELECT l.id, l.state, l.version FROM lamar_lessons AS l WHERE l.namespace = p_ns AND l.id = w.id
                LIMIT 1 FOR UPDATE) AS l;
    ELSE
        RETURN QUERY SELECT 3, l.id, l.state, l.version, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
            FROM unnest(wanted) AS w(id) CROSS JOIN LATERAL (
                SELECT l.id, l.state, l.version FROM lamar_lessons AS l WHERE l.namespace = p_ns AND l.id = w.id
                LIMIT 1) AS l;
    END IF;
    RETURN QUERY SELECT 4, NULL::text, NULL::text, NULL::bigint, r.n, r.mean, r.m2, r.active
        FROM lamar_rewards AS r WHERE r.namespace = p_ns;
    -- The queued outcomes still there (locked, after the rows, by a locking read, in slot order as
    -- a write frees them), in ticket order: ticket in `version`, time in `mean`, and in `n` 1 where
    -- the key is already in the log, or queued under an older ticket (another writer reported that
    -- episode first: the write drops the entry unfolded).
    IF p_locking THEN
        RETURN QUERY SELECT 5, i.key, i.data, i.ticket, i.taken, i.time, NULL::float8, NULL::bigint
            FROM (SELECT i.key, i.data, i.ticket, i.time, (EXISTS (SELECT FROM lamar_events AS e
                      WHERE e.namespace = p_ns AND e.key = i.key) OR EXISTS (SELECT FROM lamar_inbox AS o
                      WHERE o.namespace = p_ns AND o.key = i.key AND o.ticket < i.ticket))::integer::bigint AS taken
                  FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.ticket = ANY(queued)
                  ORDER BY i.slot FOR UPDATE) AS i
            ORDER BY i.ticket;
    ELSE
        RETURN QUERY SELECT 5, i.key, i.data, i.ticket, (EXISTS (SELECT FROM lamar_events AS e
                WHERE e.namespace = p_ns AND e.key = i.key) OR EXISTS (SELECT FROM lamar_inbox AS o
                WHERE o.namespace = p_ns AND o.key = i.key AND o.ticket < i.ticket))::integer::bigint, i.time,
                NULL::float8, NULL::bigint
            FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.ticket = ANY(queued) ORDER BY i.ticket;
    END IF;
    -- Whether the caller's own queued outcome is still waiting (it may lie past the 64 above).
    RETURN QUERY SELECT 6, NULL::text, NULL::text, i.ticket, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
        FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.ticket = p_ticket;
END
$fn$;

CREATE FUNCTION lamar_enqueue(p_ns text, p_key text, p_time double precision, p_data json)
    RETURNS TABLE (status text, ticket bigint, ahead bigint, lessons text[])
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
    held double precision;
    queued bigint;
    mine text[];
    older bigint;
BEGIN
    -- Idempotent: the same outcome (key and time) queued again is found queued, or folded.
    SELECT e.time INTO held FROM lamar_events AS e WHERE e.namespace = p_ns AND e.key = p_key;
    IF FOUND THEN
        RETURN QUERY SELECT CASE WHEN held = p_time THEN 'folded' ELSE 'taken' END, NULL::bigint, NULL::bigint,
            NULL::text[];
        RETURN;
    END IF;
    SELECT i.ticket, i.time, i.lessons INTO queued, held, mine FROM lamar_inbox AS i
        WHERE i.namespace = p_ns AND i.key = p_key ORDER BY i.ticket LIMIT 1;
    IF FOUND AND held <> p_time THEN
        RETURN QUERY SELECT 'taken', NULL::bigint, NULL::bigint, NULL::text[];
        RETURN;
    ELSIF NOT FOUND THEN
        -- with its episode's eligible lessons: the writes that fold any of them fold it
        mine := ARRAY(SELECT jsonb_array_elements_text(e.data::jsonb -> 'eligible') FROM lamar_events AS e
                      WHERE e.namespace = p_ns AND e.key = 'episode:' || (p_data ->> 'episode'));
        queued := nextval('lamar_seq');
        -- in a free slot (its last outcome folded), else in a new one (version 7): a slot is
        -- rewritten in place, so a busy inbox leaves no dead entries for its reads to pass over
        UPDATE lamar_inbox AS i SET ticket = queued, key = p_key, time = p_time, data = p_data::text, lessons = mine
            WHERE i.namespace = p_ns AND i.slot = (SELECT f.slot FROM lamar_inbox AS f
                                                    WHERE f.namespace = p_ns AND f.ticket IS NULL
                                                    LIMIT 1 FOR UPDATE SKIP LOCKED);
        IF NOT FOUND THEN
            INSERT INTO lamar_inbox (namespace, slot, ticket, key, time, data, lessons)
                VALUES (p_ns, queued, queued, p_key, p_time, p_data::text, mine);
        END IF;
    END IF;
    -- Its turn, as lamar_turn tells it: the oldest outcome ahead that shares a lesson with it. Where
    -- there is one, this transaction LISTENs (version 7). That takes effect only as it commits, and
    -- the notice of a fold committed before then is never sent to it: the reporter asks its turn
    -- again once listening (LessonRows._queue).
    SELECT min(i.ticket) INTO older FROM lamar_inbox AS i
        WHERE i.namespace = p_ns AND i.ticket < queued AND i.lessons && mine;
    IF older IS NOT NULL THEN
        LISTEN """ + INBOX_CHANNEL + """;
    END IF;
    RETURN QUERY SELECT 'queued', queued, older, mine;
END
$fn$;

-- Whose turn it is to fold the inbox, for a reporter whose outcome waits there: 'gone' (it left
-- the inbox: the seq and time the log holds under its key, another writer's if it was dropped,
-- none if it vanished unfolded), 'lead' (no older outcome shares a lesson with it: its reporter
-- folds), else 'wait' (for the write that folds the older ones; the oldest of them, whose
-- reporter folds next, in `seq`), and then it LISTENs, as lamar_enqueue does.
CREATE OR REPLACE FUNCTION lamar_turn(p_ns text, p_ticket bigint, p_key text)
    RETURNS TABLE (turn text, seq bigint, at double precision)
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
    mine text[];
    older bigint;
BEGIN
    SELECT i.lessons INTO mine FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.ticket = p_ticket;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'gone', e.seq, e.time FROM lamar_events AS e WHERE e.namespace = p_ns AND e.key = p_key;
        IF NOT FOUND THEN
            RETURN QUERY SELECT 'gone', NULL::bigint, NULL::float8;
        END IF;
        RETURN;
    END IF;
    SELECT min(i.ticket) INTO older FROM lamar_inbox AS i
        WHERE i.namespace = p_ns AND i.ticket < p_ticket AND i.lessons && mine;
    IF older IS NOT NULL THEN
        LISTEN """ + INBOX_CHANNEL + """;
    END IF;
    RETURN QUERY SELECT CASE WHEN older IS NULL THEN 'lead' ELSE 'wait' END, older, NULL::float8;
END
$fn$;

-- An episode's write (version 7): the namespace's write lock shared, as every fold-mode write
-- holds it while it takes its seqs (`LessonRows.settled`), then the events.
CREATE OR REPLACE FUNCTION lamar_log(p_ns text, p_lock integer, p_events json)
    RETURNS SETOF bigint
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(p_lock, hashtext(p_ns));
    RETURN QUERY INSERT INTO lamar_events (namespace, seq, kind, key, time, data)
        SELECT p_ns, nextval('lamar_seq'), b.kind, b.key, b.time, b.data::text
        FROM ROWS FROM (json_to_recordset(p_events) AS (kind text, key text, time float8, data json))
            WITH ORDINALITY AS b(kind, key, time, data, ord) ORDER BY b.ord
        RETURNING lamar_events.seq;
END
$fn$;

CREATE OR REPLACE FUNCTION lamar_view(p_ns text, p_ctx jsonb, p_scopes jsonb, p_ids text[])
    RETURNS TABLE (part integer, id text, body text, version bigint, n bigint, mean double precision,
                   m2 double precision, active bigint)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
BEGIN
    -- STABLE: its statements all read the snapshot of the query that calls it (a VOLATILE
    -- function takes one per statement), so its parts agree without a REPEATABLE READ
    -- transaction around it (version 6).
    -- A lesson is eligible where its scope is one of the context's subsets (`p_scopes`, a JSON
    -- array since version 7): one probe of the scope index per subset. A context too large to
    -- list its subsets is matched row by row (`p_ctx`).
    IF p_scopes IS NOT NULL THEN
        RETURN QUERY SELECT 0, l.id, l.state, l.version, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
            FROM jsonb_array_elements(p_scopes) AS w(scope) CROSS JOIN LATERAL (
                SELECT l.id, l.state, l.version, l.added FROM lamar_lessons AS l
                WHERE l.namespace = p_ns AND l.status <> 'retired' AND l.scope = w.scope OFFSET 0) AS l
            ORDER BY l.added;
    ELSIF p_ctx IS NOT NULL THEN
        RETURN QUERY SELECT 0, l.id, l.state, l.version, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
            FROM lamar_lessons AS l WHERE l.namespace = p_ns AND l.status <> 'retired' AND l.scope <@ p_ctx
            ORDER BY l.added;
    ELSIF p_ids IS NOT NULL THEN
        RETURN QUERY SELECT 0, l.id, l.state, l.version, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
            FROM (SELECT DISTINCT unnest(p_ids)) AS w(id) CROSS JOIN LATERAL (
                SELECT l.id, l.state, l.version, l.added FROM lamar_lessons AS l
                WHERE l.namespace = p_ns AND l.id = w.id LIMIT 1) AS l
            ORDER BY l.added;
    ELSE
        RETURN QUERY SELECT 0, l.id, l.state, l.version, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
            FROM lamar_lessons AS l WHERE l.namespace = p_ns ORDER BY l.added;
    END IF;
    RETURN QUERY SELECT 1, NULL::text, NULL::text, NULL::bigint, r.n, r.mean, r.m2, r.active
        FROM lamar_rewards AS r WHERE r.namespace = p_ns;
    RETURN QUERY SELECT 2, NULL::text, s.folded, NULL::bigint, NULL::bigint, NULL::float8, NULL::float8, NULL::bigint
        FROM lamar_namespaces AS s WHERE s.namespace = p_ns;
END
$fn$;

CREATE OR REPLACE FUNCTION lamar_write(
    p_ns text, p_lock integer, p_take_lock boolean, p_expected json, p_n_expected integer, p_absent text[],
    p_folded text, p_updated json, p_added json, p_shards integer, p_r_n bigint, p_r_mean double precision,
    p_r_m2 double precision, p_active bigint, p_stale boolean, p_events json, p_done bigint[], p_queue boolean,
    p_tickets bigint[])
    RETURNS SETOF bigint
LANGUAGE plpgsql SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
    held integer;
    batch text[];
    seqs bigint[];
BEGIN
    IF p_take_lock THEN
        PERFORM pg_advisory_xact_lock_shared(p_lock, hashtext(p_ns));
    END IF;
    IF p_expected IS NOT NULL THEN
        SELECT count(*) INTO held
            FROM (SELECT x.id, x.version FROM json_to_recordset(p_expected) AS x(id text, version bigint) ORDER BY x.id) AS x
            CROSS JOIN LATERAL (SELECT FROM lamar_lessons AS l WHERE l.namespace = p_ns AND l.id = x.id
                                AND l.version = x.version LIMIT 1 FOR UPDATE) AS h;
        IF held <> p_n_expected
            OR EXISTS (SELECT FROM unnest(p_absent) AS a(id) CROSS JOIN LATERAL (
                SELECT FROM lamar_lessons AS l WHERE l.namespace = p_ns AND l.id = a.id LIMIT 1) AS x)
            OR (SELECT n.folded FROM lamar_namespaces AS n WHERE n.namespace = p_ns) IS DISTINCT FROM p_folded
            -- a report is written on its own only while no report on any of its lessons waits in
            -- the inbox: else it joins them (and the write that folds them folds it)
            OR (p_queue AND EXISTS (SELECT FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.lessons && ARRAY(
                SELECT x.id FROM json_to_recordset(p_expected) AS x(id text, version bigint)))) THEN
            RAISE EXCEPTION USING ERRCODE = 'serialization_failure', MESSAGE = '""" + _MOVED + """';
        END IF;
    END IF;
    -- The queued outcomes this write folds (or drops) leave the inbox, their slots freed (in slot
    -- order, as a locking read locks them); one already gone was folded by another write: a
    -- conflict.
    IF cardinality(p_done) > 0 THEN
        WITH gone AS (SELECT i.slot, i.lessons FROM lamar_inbox AS i WHERE i.namespace = p_ns
                      AND i.ticket = ANY(p_done) ORDER BY i.slot FOR UPDATE),
             freed AS (UPDATE lamar_inbox AS i SET ticket = NULL, key = NULL, time = NULL, data = NULL, lessons = NULL
                       FROM gone WHERE i.namespace = p_ns AND i.slot = gone.slot RETURNING gone.lessons)
        SELECT count(*), (SELECT array_agg(DISTINCT l.id) FROM freed AS f, unnest(f.lessons) AS l(id))
            INTO held, batch FROM freed;
        IF held <> cardinality(p_done) THEN
            RAISE EXCEPTION USING ERRCODE = 'serialization_failure', MESSAGE = '""" + _MOVED + """';
        END IF;
    END IF;
    -- Only rows this transaction holds locked are updated (taken above or by the locking read),
    -- so the tuple each id finds stays where it is until this UPDATE: found by one index probe
    -- per id, written by its ctid (a TID scan per row; version 4 hashed every row of the table
    -- to join them).
    IF json_array_length(p_updated) > 0 THEN
        UPDATE lamar_lessons AS l SET status = u.status, scope = u.scope, state = u.state, version = l.version + 1
        FROM json_to_recordset(p_updated) AS u(id text, status text, scope jsonb, state text)
        CROSS JOIN LATERAL (SELECT x.ctid AS tid FROM lamar_lessons AS x WHERE x.namespace = p_ns AND x.id = u.id
                            LIMIT 1) AS x
        WHERE l.ctid = x.tid;
    END IF;
    IF json_array_length(p_added) > 0 THEN
        INSERT INTO lamar_lessons (namespace, id, added, status, scope, state)
        SELECT p_ns, a.id, nextval('lamar_seq'), a.status, a.scope, a.state
        FROM ROWS FROM (json_to_recordset(p_added) AS (id text, status text, scope jsonb, state text))
            WITH ORDINALITY AS a(id, status, scope, state, ord) ORDER BY a.ord;
    END IF;
    IF p_r_n > 0 OR p_active <> 0 THEN
        INSERT INTO lamar_rewards AS s (namespace, shard, n, mean, m2, active)
        VALUES (p_ns, mod(pg_backend_pid(), p_shards), p_r_n, p_r_mean, p_r_m2, p_active)
        ON CONFLICT (namespace, shard) DO UPDATE SET n = s.n + EXCLUDED.n,
            mean = CASE WHEN EXCLUDED.n = 0 THEN s.mean
                        ELSE s.mean + (EXCLUDED.mean - s.mean) * EXCLUDED.n / (s.n + EXCLUDED.n) END,
            m2 = CASE WHEN EXCLUDED.n = 0 THEN s.m2
                      ELSE s.m2 + EXCLUDED.m2 + (EXCLUDED.mean - s.mean) ^ 2 * s.n * EXCLUDED.n / (s.n + EXCLUDED.n) END,
            active = s.active + EXCLUDED.active;
    END IF;
    IF p_stale THEN
        UPDATE lamar_namespaces SET folded = NULL WHERE namespace = p_ns;
    END IF;
    WITH added AS (
        INSERT INTO lamar_events (namespace, seq, kind, key, time, data)
        SELECT p_ns, nextval('lamar_seq'), b.kind, b.key, b.time, b.data::text
        FROM ROWS FROM (json_to_recordset(p_events) AS (kind text, key text, time float8, data json))
            WITH ORDINALITY AS b(kind, key, time, data, ord) ORDER BY b.ord
        RETURNING lamar_events.seq)
    SELECT array_agg(a.seq ORDER BY a.seq) INTO seqs FROM added AS a;
    -- Reporters waiting for their turn learn from this write's notice, once it commits, what it
    -- did for them (version 7; a reporter not named in it asks lamar_turn): the tickets it folded
    -- with their seqs (the k-th event took the k-th seq; null: dropped, its key was taken), the
    -- tickets still waiting on its lessons, and those among them with none older on theirs,
    -- whose reporters fold next; and its lessons, where they are few and short (a reporter whose
    -- lessons share none of them knows the notice is not about it). At most 64 of each list: a
    -- notice stays under its 8000 bytes.
    IF cardinality(p_done) > 0 THEN
        PERFORM pg_notify('""" + INBOX_CHANNEL + """', json_build_object(
            'ns', p_ns,
            'done', p_done,
            'seqs', ARRAY(SELECT seqs[array_position(p_tickets, d.ticket)]
                          FROM unnest(p_done) WITH ORDINALITY AS d(ticket, ord) ORDER BY d.ord),
            'wait', ARRAY(SELECT i.ticket FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.lessons && batch
                          ORDER BY i.ticket LIMIT 64),
            'lead', ARRAY(SELECT i.ticket FROM lamar_inbox AS i WHERE i.namespace = p_ns AND i.lessons && batch
                          AND NOT EXISTS (SELECT FROM lamar_inbox AS o WHERE o.namespace = p_ns
                                          AND o.ticket < i.ticket AND o.lessons && i.lessons)
                          ORDER BY i.ticket LIMIT 64),
            'lessons', CASE WHEN cardinality(batch) <= 32 AND length(array_to_string(batch, ',')) <= 1500
                            THEN batch END)::text);
    END IF;
    RETURN QUERY SELECT unnest(seqs);
END
$fn$"""
# A read sees one snapshot: rows, counters and `folded` as one build or write left them (a
# snapshot per statement let a build commit between them, and made an empty set of rows look
# built: a recall then found no lesson eligible). `lamar_view` is STABLE, so one statement is
# one snapshot: it is sent alone, bound by the server and prepared once it recurs.
_VIEW = """SELECT part, id, body, version, n, mean, m2, active FROM lamar_view(%(ns)s, %(ctx)s::jsonb,
    %(scopes)s::jsonb, %(ids)s::text[])"""
_SUBSETS = 8  # most context items whose subsets a recall lists (2**8 scopes), above it rows are matched one by one
# Version 3's signatures of these functions, dropped by the migration to version 4 (which creates
# them anew: CREATE OR REPLACE cannot change what a function returns).
DROP_V3_FUNCTIONS = """
DROP FUNCTION IF EXISTS lamar_fold_inputs(text, text[], text[], boolean, integer);
DROP FUNCTION IF EXISTS lamar_view(text, jsonb, text[]);
DROP FUNCTION IF EXISTS lamar_write(text, integer, boolean, json, integer, text[], text, json, json, integer, bigint,
    double precision, double precision, boolean, json)"""


class LessonRows:
    """The fold mode's reads and writes for one `PostgresStore` (see the module docstring)."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store
        self._policies: dict[str, Policy | None] = {}
        self._experiences: dict[str, tuple[str, Experience]] = {}  # by id: the lesson's line in a row, parsed
        # Each row's state as last read or written here, by id, with its version: a read finds
        # most rows unchanged since (its own writes among them) and parses none of those again.
        # Only reads get these objects; a fold folds copies of them, so they never change.
        self._parsed: dict[str, tuple[int, LessonState]] = {}
        # What a report can fold without reading first (`_recalled_inputs`): each row's text as
        # last read, by id, with its version; the namespace-wide inputs of the last read, with when
        # it was taken; the episodes this store wrote lately, by key.
        self._texts: dict[str, tuple[int, str]] = {}
        self._last_read: tuple[str | None, list[tuple[Any, Any, Any]], int, float] | None = None
        self._recalled: dict[str, str] = {}
        # The last report here was queued behind others' (another write folded it, or its write
        # folded others' too): the next report of an episode this store wrote is queued at once.
        self._crowded = False
        self._optimistic = True  # False: every write locks its rows first (the benchmark's "before")
        self._between: Callable[[], None] | None = None  # tests: runs between a write's read and its write
        self._jitter = random.Random()
        self._conflicts = 0  # optimistic attempts that found their rows moved
        self._locked = 0  # writes that took the rows' locks after OPTIMISTIC_TRIES conflicts
        self._unread = 0  # reports folded from their recall's read, sent with no read of their own
        self._saved = _SAVED_LIMIT  # the recent share of reports that a read of their own saved a queuing
        self._moved = False  # whether the last report that read first found its rows moved since its recall
        self._reread = 0  # reports read first though their recall's read was at hand (_saved)
        self._queued = 0  # reports this store queued in the inbox (their rows were contended)
        self._combined = 0  # queued outcomes (anyone's) this store's writes folded
        self._waited = 0  # waits for a turn to fold the inbox that ran out (_LEASE)

    # -- reads -------------------------------------------------------------------------------

    def eligible(self, context: dict[str, str]) -> RowsView:
        """The non-retired lessons whose scope the context contains, in the order they were added."""
        items = sorted(context.items())
        # one JSON array, not a jsonb[]: psycopg escapes an array's elements one by one (that had
        # been most of a client's cost for this call)
        scopes = None if len(items) > _SUBSETS else json.dumps(
            [dict(subset) for size in range(len(items) + 1) for subset in itertools.combinations(items, size)])
        return self._view({"ctx": json.dumps(context), "scopes": scopes, "ids": None})

    def lessons(self, ids: Sequence[str] | None = None) -> RowsView:
        """The lessons with these ids (every lesson when None), in the order they were added."""
        return self._view({"ctx": None, "scopes": None, "ids": None if ids is None else list(ids)})

    def _view(self, params: dict[str, Any]) -> RowsView:
        store = self._store

        def run(conn: Connection[Any]) -> list[tuple[Any, ...]]:
            return conn.execute(_VIEW, {"ns": store.namespace, **params}).fetchall()

        rows, shards, built = result_parts(store._run(run), 3)
        tuning, active = built[0][2] if built else None, sum(int(row[7]) for row in shards)
        self._last_read = (tuning, [row[4:7] for row in shards], active, time.monotonic())
        self._texts.update((i, (int(v), raw)) for _, i, raw, v, *_ in rows)
        n, _, m2 = merge_shards(row[4:7] for row in shards)
        if tuning is not None and self._policy(tuning) is None:
            rows = []  # another design's states: not read (the engine sees other tuning and rebuilds)
        return RowsView([self._known(i, raw, int(v)) for _, i, raw, v, *_ in rows], fold.spread(n, m2), active,
                        tuning)

    def settled(self) -> int | None:
        """The seq through which the namespace's log is settled: every event with a seq at or
        below it that will ever commit has committed, so a read from now on sees them all. None
        when a write in flight did not end within _SETTLE_WAIT seconds (a writer stopped
        mid-write).

        Seq order is not commit order in this mode: a write may commit after another that took a
        later seq. But every write takes its seqs from one SEQUENCE while it holds the
        namespace's write lock (ROWS_LOCK), from before its first seq until it ends. So once the
        transactions that held the lock just after the SEQUENCE's last value V was read have
        ended, every event with a seq at or below V has committed or never will: a write that
        took the lock later takes seqs above V.
        """
        store = self._store
        params: dict[str, Any] = {"lock": ROWS_LOCK, "ns": store.namespace, "among": None}

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

        return store._run(run)

    # -- writes ------------------------------------------------------------------------------

    def append(self, events: list[Event], *, strict: bool = False) -> list[Event]:
        """Append `events` and fold them into the rows, in one transaction.

        Optimistic: the rows are read unlocked, folded here and written only if none moved
        meanwhile; a conflict rolls back and starts over after a short random wait, and after
        `OPTIMISTIC_TRIES` conflicts the write locks the rows before reading them. A first report
        (one outcome) goes its own way (`_report`).

        Args:
            strict: an outcome whose episode no key finds raises UnknownEpisode (nothing is
                written) instead of being stored with the rows marked stale.

        Raises:
            EventConflict: an event's key is taken, or an experience's id already has a row.
            UnknownEpisode: (strict) as above.
        """
        if not any(e.kind in LESSON_KINDS for e in events):
            written = self._attempt(events, "plain", strict)
            self._remember(written)
            return written
        if self._optimistic and len(events) == 1 and events[0].kind == "outcome" and events[0].key is not None \
                and not events[0].data.get("replace"):
            return self._report(events[0], strict)
        for attempt in range(OPTIMISTIC_TRIES if self._optimistic else 0):
            try:
                return self._attempt(events, "optimistic", strict)
            except _RowsMoved:
                self._conflicts += 1
                time.sleep(self._jitter.uniform(0.0, _BACKOFF * 2**attempt))
        self._locked += 1
        return self._attempt(events, "locking", strict)

    def _report(self, event: Event, strict: bool) -> list[Event]:
        """Write a first report: folded from its recall's read when this store recalled it moments
        ago (one message, `_recalled_inputs`), else, or where reads of their own have lately
        saved reports here from queuing (`_saved`, see _FRESH), from a read of its own.

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
        if self._crowded and self._recalled.pop(f"episode:{event.data.get('episode')}", None) is not None:
            queue_now, recalled = True, None
        else:
            queue_now, recalled = False, self._recalled_inputs([event])
        # tried: "recall" (written from its recall's read) or "read" (read first, with the recall's
        # read to compare), for what the report learns (`_learn`); attempt: optimistic tries so far
        attempt, tried = 0, None
        try:
            if queue_now:
                raise _Contended("the last report here was queued behind others")
            if recalled is None:
                return self._attempt([event], "report", strict)
            if self._saved < _SAVED_LIMIT:
                tried = "recall"
                written = self._attempt([event], "recalled", strict, recalled)
                self._unread += 1
                self._learn(False)
                return written
            tried = "read"
            self._reread += 1
            written = self._attempt([event], "report", strict, recalled)
            self._learn(self._moved)
            return written
        except _RowsMoved:
            self._conflicts += 1
            attempt = 1
        except _Contended:
            pass
        if tried == "read":
            self._learn(False)  # read first, and contended all the same: it is queued
        self._queued += 1
        self._crowded = True  # until a write of this store folds its report alone
        for _ in range(_REQUEUES):
            # A queued outcome that left the inbox unfolded (a server restarted while it waited:
            # the inbox is UNLOGGED) is queued again.
            try:
                written = self._fold_queued(event, attempt)
            except _Vanished:
                attempt = 0
                continue
            if tried == "recall":  # folded alone, nobody else waiting: a read of its own would have written it
                self._learn(not self._crowded)
            return written
        raise StoreError(f"a report queued in {self._store.location} vanished {_REQUEUES} times before it was "
                         "folded (is the server restarting?); nothing of it was written: report it again")

    def _learn(self, saved: bool) -> None:
        """Learn whether a read of its own saved (or would have saved) a report its queuing."""
        self._saved += _SAVED_WEIGHT * (float(saved) - self._saved)

    def _fold_queued(self, event: Event, attempt: int) -> list[Event]:
        """Queue a first report, wait for its turn, and fold it (or learn that another write
        did): `_report`'s contended path. `attempt`: optimistic tries so far."""
        ticket, lessons, done = self._queue(event, None, frozenset())  # queued, then its turn waited for
        while done is None:
            how = "combine" if attempt < OPTIMISTIC_TRIES else "combine-locking"
            try:
                folded = self._transaction([], how, False, ticket=ticket)
            except _RowsMoved:
                self._conflicts += 1
                time.sleep(self._jitter.uniform(0.0, _BACKOFF * 2 ** min(attempt, OPTIMISTIC_TRIES)))
                attempt += 1
                if attempt < OPTIMISTIC_TRIES:  # whose turn is it now?
                    ticket, lessons, done = self._queue(event, ticket, lessons)
                continue
            if how == "combine-locking":
                self._locked += 1
            if folded is None:  # another write folded (or dropped) it
                return self._folded(event)
            mine = [e for e in folded if e.key == event.key and e.time == event.time]
            if mine:
                self._crowded = len(folded) > 1
                return mine
            attempt = 0  # it lay beyond this write's outcomes: fold the next ones
        return done

    def _attempt(self, events: list[Event], how: str, strict: bool, recalled: _FoldInputs | None = None) -> list[Event]:
        written = self._transaction(events, how, strict, recalled)
        assert written is not None  # only a combining write can find nothing to do
        return written

    def _transaction(self, events: list[Event], how: str, strict: bool, recalled: _FoldInputs | None = None,
                     ticket: int | None = None) -> list[Event] | None:
        """One transaction of a write (see the module docstring), `how`: plain (no rows), recalled
        (folded from `recalled`, one message), optimistic, report (optimistic, raising _Contended
        if outcomes are queued; its read is compared with `recalled`, when given, to learn whether
        the rows moved since the recall), locking, or combine / combine-locking (the inbox's
        oldest outcomes; None once `ticket` has left the inbox)."""
        store = self._store
        outcomes = [e for e in events if e.kind == "outcome"]
        ids = sorted({i for e in events for i in _named(e)})
        params: dict[str, Any] = {"ns": store.namespace, "lock": ROWS_LOCK, "ids": ids, "ticket": ticket,
                                  "episodes": [f"episode:{e.data.get('episode')}" for e in outcomes]}
        alone = keyed(events)  # sent as one message, settled by its keys
        combining = how.startswith("combine")
        report, how = how in ("report", "recalled"), "optimistic" if how == "report" else how
        optimistic = how in ("optimistic", "recalled", "combine")

        def body(cur: Any, xid: list[str]) -> list[Event] | None:
            write = _empty_write(store.namespace)
            written = list(events)
            folded: dict[str, LessonState] = {}
            versions: dict[str, int] = {}
            if how == "plain" and not alone:
                store._begin(cur, xid)
            elif how == "recalled":
                assert recalled is not None
                read = recalled
            elif how != "plain":
                if how in ("optimistic", "combine") and (alone or combining):
                    cur.execute(_READ_ALONE, params)
                else:
                    cur.execute(_READ, {**params, "locking": how in ("locking", "combine-locking")})
                cur.nextset()
                read = _FoldInputs.of(cur.fetchall(), xid)
                if combining and not read.waiting:
                    if how == "combine-locking":
                        cur.execute("ROLLBACK")  # the locking read began a transaction: nothing to write
                    return None
                if report and read.inbox:
                    raise _Contended("reports are queued for these rows")
            if how != "plain":
                if combining:
                    written = [Event("outcome", json.loads(data), key=key, time=at)
                               for _, key, at, data, taken in read.inbox if not taken]
                    write["done"] = [entry[0] for entry in read.inbox]
                    write["tickets"] = [entry[0] for entry in read.inbox if not entry[4]]  # the events'
                    self._combined += len(written)
                versions = {exp_id: version for exp_id, _, version in read.rows}
                if recalled is not None and read is not recalled:  # a read of its own: did the rows move?
                    self._moved = any(versions.get(exp_id) != version for exp_id, _, version in recalled.rows)
                written = self._fold(written, read, write, strict, folded)
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
                    cur = store._alone(cur, _LOG_ONE, {"ns": store.namespace, "lock": ROWS_LOCK,
                                                       "events": write["events"]})
                elif how == "recalled" or (how == "optimistic" and alone) or how == "combine":
                    cur = store._alone(cur, _WRITE_ONE, write)
                else:
                    cur.execute(_WRITE, write)
            except store._pg.errors.SerializationFailure as exc:
                if _MOVED in str(exc):
                    raise _RowsMoved(_MOVED) from exc  # rolled back by the store
                raise
            except store._pg.errors.UniqueViolation as exc:
                if combining:  # a queued outcome's episode was just reported another way
                    raise _RowsMoved(_MOVED) from exc
                raise
            seqs = sorted(int(row[0]) for row in cur.fetchall())  # the events' seqs (COMMIT follows)
            for exp_id, state in folded.items():  # what the rows now hold, under their new versions
                self._parsed[exp_id] = (versions[exp_id] + 1 if exp_id in versions else 0, state)
            return [e.numbered(seq)
                    for e, seq in zip(written, seqs, strict=True)]

        def committed(seqs: list[int]) -> list[Event] | None:
            """A COMMIT whose answer was lost went through: the events with the seqs it wrote."""
            if combining:
                raise _RowsMoved("settled")  # read again: the reporter's own entry is gone, or not
            return [e.numbered(seq)
                    for e, seq in zip(events, seqs, strict=True)]

        return store._transact(body, committed, events)

    def _queue(self, event: Event, ticket: int | None,
               lessons: frozenset[str]) -> tuple[int, frozenset[str], list[Event] | None]:
        """Queue a first report in the inbox (`ticket` None), or after a write of its reporter
        conflicted ask again whose turn it is (`lamar_turn`), and wait while older queued
        outcomes that share a lesson with it wait too: their reporter folds them, and this one
        with them. Returns its ticket, its lessons (`lamar_enqueue` names them; `lessons` is what
        an earlier call returned) and the event as the log holds it once another write folded
        it, or None when this reporter is to fold: its outcome is the oldest of its lessons, a
        write named it first among those left (`_wait`), or _LEASE seconds passed with no fold
        of the outcomes ahead (their folder may be stopped).

        One connection throughout. The call that finds outcomes ahead LISTENs in the transaction
        that read them, but a LISTEN takes effect as that transaction commits, and PostgreSQL
        skips the notices of writes that committed before it: a fold that committed between the
        read and the commit would go unheard, and the reporter would wait out its lease for it
        (the benchmark's 4 clients sharing lessons showed a p99 of 209 ms). So a "wait" from a
        call that began listening is asked again, once the LISTEN has taken effect: from then on
        a fold is either seen by the question or heard. UNLISTEN ends a wait. A reporter that is
        first at once sends one message."""
        mine: list[int] = [] if ticket is None else [ticket]
        known = [lessons]

        def run(conn: Connection[Any]) -> tuple[int, frozenset[str], list[Event] | None]:
            if not mine:  # a lost answer is retried on a new connection: queuing is idempotent
                status, queued, ahead, known[0] = self._enqueue(conn, event)
                if status == "folded":  # this very outcome is in the log already
                    return -1, known[0], self._folded(event)
                mine.append(queued)
                if ahead is None:
                    return queued, known[0], None
            try:
                turn, ahead, at = self._turn(conn, event, mine[0])  # listening already, or from now on
                if turn == "wait" and ticket is not None:  # this call began listening: ask once more
                    turn, ahead, at = self._turn(conn, event, mine[0])
                if turn == "gone":
                    return mine[0], known[0], self._logged(event, None if ahead is None else (ahead, at))
                if turn == "lead" or ahead is None:
                    return mine[0], known[0], None
                return mine[0], known[0], self._wait(conn, event, mine[0], ahead, known[0])
            finally:
                conn.execute(f"UNLISTEN {INBOX_CHANNEL}")

        return self._store._run(run, "write")

    def _enqueue(self, conn: Connection[Any], event: Event) -> tuple[str, int, int | None, frozenset[str]]:
        """Queue a first report in the inbox (`lamar_enqueue`): ("queued", its ticket, the oldest
        outcome ahead of it that shares a lesson, None if none; then the connection LISTENs, and
        its lessons), or ("folded", ...) if the same outcome (key and time) is already in the
        log. Raises EventConflict where another writer reported that episode."""
        row = conn.execute("SELECT status, ticket, ahead, lessons FROM lamar_enqueue(%s, %s, %s, %s::json)",
                           (self._store.namespace, event.key, float(event.time), event.data_json())).fetchone()
        status, ticket, ahead, lessons = row if row is not None else ("taken", None, None, None)
        if status == "taken":
            raise self._taken(event)
        return (str(status), -1 if ticket is None else int(ticket), None if ahead is None else int(ahead),
                frozenset(lessons or ()))

    def _wait(self, conn: Connection[Any], event: Event, ticket: int, ahead: int,
              lessons: frozenset[str]) -> list[Event] | None:
        """Wait on a LISTENing connection while the outcome `ahead` (the oldest ahead of `ticket`
        that shares a lesson with it) waits: the event as the log holds it once a write folded
        it, None when this reporter is to fold.

        Each write that folds queued outcomes notifies what it did (`lamar_write`): a notice that
        names this ticket among those it folded, or first among those left, settles the wait
        with no query; one that names it waiting behind others changes nothing; any other
        notice of this namespace, or the lease running out, is answered by asking `lamar_turn`.
        Only a fold of the outcomes ahead gives a new lease: folds of other lessons do not
        extend a wait behind a stopped folder."""
        deadline = time.monotonic() + _LEASE
        while True:
            ask = time.monotonic() >= deadline
            if not ask:
                for note in conn.notifies(timeout=deadline - time.monotonic(), stop_after=1):
                    heard = self._heard(note.payload, ticket, lessons)
                    if heard == "lead":
                        return None
                    if isinstance(heard, int):  # folded, with this seq
                        return self._logged(event, (heard, event.time))
                    if heard == "dropped":  # its episode was reported another way
                        return self._folded(event)
                    ask = ask or heard == "ask"
                ask = ask or time.monotonic() >= deadline
            if not ask:
                continue
            turn, seq, at = self._turn(conn, event, ticket)
            if turn == "gone":
                return self._logged(event, None if seq is None else (seq, at))
            if turn == "lead" or seq is None:
                return None
            if seq != ahead:  # the outcomes ahead were folded: wait anew
                deadline, ahead = time.monotonic() + _LEASE, seq
            elif time.monotonic() >= deadline:
                self._waited += 1  # the lease ran out
                return None

    def _turn(self, conn: Connection[Any], event: Event, ticket: int) -> tuple[str, int | None, float | None]:
        """Whose turn it is (`lamar_turn`): ("gone", seq, time) once the outcome left the inbox,
        with what the log holds under its key (folded, or another writer's; None, None: nothing,
        it vanished), ("lead", None, None), or ("wait", the oldest outcome ahead, None), the
        connection then LISTENing."""
        row = conn.execute("SELECT turn, seq, at FROM lamar_turn(%s, %s, %s)",
                           (self._store.namespace, ticket, event.key)).fetchone()
        turn, seq, at = row if row is not None else ("gone", None, None)
        return str(turn), None if seq is None else int(seq), None if at is None else float(at)

    def _heard(self, payload: str, ticket: int, lessons: frozenset[str]) -> int | str:
        """What a write's notice says of `ticket`: its seq where the write folded it ("dropped"
        where it dropped it: its key was taken), "lead" where it is first among those left,
        "wait" where it waits behind another, "ask" where the notice does not name it, "other"
        for another namespace's, or one that names its lessons and none of this report's,
        `lessons` (the outcomes ahead of a report share a lesson with it, so their fold names
        one; empty: not known, no notice is skipped for it)."""
        try:
            note = json.loads(payload)
            if note["ns"] != self._store.namespace or (
                    lessons and note.get("lessons") is not None and lessons.isdisjoint(note["lessons"])):
                return "other"  # another namespace's, or a fold of none of this report's lessons
            if ticket in note["done"]:
                seq = note["seqs"][note["done"].index(ticket)]
                return "dropped" if seq is None else int(seq)
            if ticket in note["lead"]:
                return "lead"
            return "wait" if ticket in note["wait"] else "ask"
        except (ValueError, KeyError, TypeError, IndexError, AttributeError):
            return "ask"

    def _folded(self, event: Event) -> list[Event]:
        """A queued report that another write folded (or dropped: its episode was reported first
        another way, EventConflict): the event as the log holds it."""
        store = self._store
        return self._logged(event, store._run(lambda conn: conn.execute(
            "SELECT seq, time FROM lamar_events WHERE namespace = %s AND key = %s",
            (store.namespace, event.key)).fetchone()))

    def _logged(self, event: Event, row: tuple[Any, Any] | None) -> list[Event]:
        """`event` with its seq, where the log holds it under its key at its time (`row`: the seq
        and time found under the key); another writer's under its key: EventConflict; none
        under its key, and gone from the inbox unfolded (a restarted server empties it):
        _Vanished."""
        if row is None:
            raise _Vanished(f"the queued report {event.key} is neither in the inbox nor in the log")
        if float(row[1]) != float(event.time):
            raise self._taken(event)
        return [event.numbered(int(row[0]))]

    def _taken(self, event: Event) -> EventConflict:
        """Another writer reported this episode first (its key is in the log or the inbox)."""
        return EventConflict(f"an event key is already in {self._store.location} ({event.key}); "
                             "nothing of this write was kept")

    def _fold(self, events: list[Event], read: _FoldInputs, write: dict[str, Any], strict: bool,
              rows: dict[str, LessonState]) -> list[Event]:
        """Fold `events` into the rows in `read`; fills `write`, and `rows` with the states
        written; returns the events as they are to be stored (outcomes name the sigma and
        divisor their fold used)."""
        policy = None if read.folded is None else self._policy(read.folded)
        if policy is None:  # stale, never built, or another design's: the next engine builds them from the log
            missing = [e for e in events
                       if e.kind == "outcome" and f"episode:{e.data.get('episode')}" not in read.episodes]
            if strict and missing:
                raise UnknownEpisode(f"no episode {missing[0].data.get('episode')!r} is found by its key")
            return events
        # A copy of each row as parsed for a read (or written here) at that version: the fold
        # changes the copy, and the read's object stays as the row was.
        batch = _Batch(policy, [self._known(i, raw, v).copy() for i, raw, v in read.rows], read,
                       strict, self._store.location)
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
        write["updated"] = self._rows_json(touched)
        write["added"] = self._rows_json(batch.added.values())
        write["r_n"], write["r_mean"], write["r_m2"] = batch.rewards
        write["active"] = batch.active - read.active
        write["stale"] = batch.stale
        return out

    def _remember(self, written: list[Event]) -> None:
        """Keep the episodes just written, for their reports (`_recalled_inputs`)."""
        for event in written:
            if event.kind == "episode" and event.key is not None:
                self._recalled[event.key] = event.data_json()
                while len(self._recalled) > _RECALLED:
                    del self._recalled[next(iter(self._recalled))]

    def _recalled_inputs(self, events: list[Event]) -> _FoldInputs | None:
        """What a report's fold needs, as the recall before it read it, without a read: for a first
        report (one outcome) of an episode this store wrote, when the last read is under `_FRESH`
        seconds old and holds every row the episode made eligible. The write checks the rows'
        versions as it does after a read, so a row another writer moved since is a conflict; the
        spread and the count of active lessons are the last read's (a read's are never locked
        either: each outcome records the ones its fold used). None: read first."""
        if len(events) != 1 or events[0].kind != "outcome" or events[0].data.get("replace"):
            return None
        key = f"episode:{events[0].data.get('episode')}"
        episode, last = self._recalled.pop(key, None), self._last_read
        if episode is None or last is None or time.monotonic() - last[3] > _FRESH:
            return None
        try:
            eligible = sorted(set(json.loads(episode)["eligible"]))
            texts = [(i, self._texts[i][1], self._texts[i][0]) for i in eligible]
        except (KeyError, TypeError, ValueError):
            return None
        return _FoldInputs(last[0], {key: episode}, texts, last[1], last[2])

    def _state(self, exp_id: str, raw: str) -> LessonState:
        """A row's state; the lesson's line is parsed once while it does not change (most of the
        cost of reading a row had been checking an Experience, and rows are read on every call).

        Raises:
            CorruptStore: the row's text does not parse (written by hand, or damaged).
        """
        try:
            return row_text.decode(raw, lambda line: self._lesson(exp_id, line))
        except (LamarError, ValueError, KeyError, TypeError, IndexError, AttributeError, struct.error) as exc:
            raise CorruptStore(f"the row of lesson {exp_id} in {self._store.location} does not parse ({exc}); "
                               "the log is intact: build the rows again from it with Lamar(...).rebuild()") from exc

    def _lesson(self, exp_id: str, line: str) -> Experience:
        cached = self._experiences.get(exp_id)
        if cached is None or cached[0] != line:
            cached = self._experiences[exp_id] = (line, Experience.from_dict(json.loads(line)))
        return cached[1]

    def _rows_json(self, states: Iterable[LessonState]) -> str:
        """Lesson rows as the write sends them: a JSON array of {id, status, scope, state (the
        row's text, `row_text`)}, one object per row, which the server reads with one parse
        (json_to_recordset). A lesson's line is encoded once while the lesson is the same."""
        rows = []
        for s in states:
            exp = s.experience
            cached = self._experiences.get(exp.id)
            if cached is None or cached[1] is not exp:
                cached = self._experiences[exp.id] = (row_text.lesson_text(exp), exp)
            rows.append({"id": exp.id, "status": exp.status.value, "scope": dict(exp.scope),
                         "state": row_text.encode(s, cached[0])})
        return json.dumps(rows, separators=(",", ":"))

    def _known(self, exp_id: str, raw: str, version: int) -> LessonState:
        """A row's state for a read: the one parsed or written here before, if the row's version
        has not moved since."""
        known = self._parsed.get(exp_id)
        if known is not None and known[0] == version:
            return known[1]
        state = self._state(exp_id, raw)
        self._parsed[exp_id] = (version, state)
        return state

    def _policy(self, tuning: str) -> Policy | None:
        """The Policy the rows were folded under; None when they were folded by another design of
        the decision core (knobs this Policy does not have): their states are not read, and the
        next engine that reads them builds them again from the log."""
        if tuning not in self._policies:
            fields = {k: v for k, v in json.loads(tuning).items() if k not in _UNFOLDED_POLICY}
            try:
                self._policies[tuning] = Policy(**fields)
            except TypeError:
                self._policies[tuning] = None
        return self._policies[tuning]

    # -- builds ------------------------------------------------------------------------------

    def build(self, tuning: str, folder: Callable[[list[Event]], tuple[Iterable[LessonState], tuple[int, float, float]]],
              *, force: bool = False) -> None:
        """Build the rows again from the whole log, as `folder` folds it in-process.

        Heavy (a read and a fold of every event) and exclusive: fold-mode writes of the
        namespace wait. Used once for a namespace written in the log mode (a migration), and
        after an outcome the rows could not fold (a replacement). Unless `force`, nothing is
        done when, once the lock is held, the rows turn out built under `tuning` (a fleet that
        starts at once builds them once, not once per engine).
        """
        store = self._store
        ns = store.namespace

        def run(conn: Connection[Any]) -> None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (ROWS_LOCK, ns))
                built = conn.execute("SELECT folded FROM lamar_namespaces WHERE namespace = %s", (ns,)).fetchone()
                if not force and built is not None and built[0] == tuning:
                    return  # another engine built them while this one waited for the lock
                events = store._parse(conn.execute(
                    "SELECT seq, kind, key, time, data FROM lamar_events WHERE namespace = %s ORDER BY seq",
                    (ns,)).fetchall())
                folded, (n, mean, m2) = folder(events)
                states = list(folded)
                rows = [(s.experience.id, s.experience.status.value, json.dumps(dict(s.experience.scope)),
                         row_text.encode(s, row_text.lesson_text(s.experience))) for s in states]
                # Every row gets a version above any the namespace had: a write that read a row
                # before this build finds it moved, even a row that was rewritten as it was.
                (version,) = conn.execute("SELECT coalesce(max(version), 0) + 1 FROM lamar_lessons "
                                          "WHERE namespace = %s", (ns,)).fetchone() or (1,)
                conn.execute("DELETE FROM lamar_lessons WHERE namespace = %s", (ns,))
                conn.execute("DELETE FROM lamar_rewards WHERE namespace = %s", (ns,))
                last = events[-1].seq if events else 0
                # Seqs to come must follow every seq of the log, whichever mode wrote it.
                conn.execute("SELECT setval('lamar_seq', greatest(%s, (SELECT last_value FROM lamar_seq)))",
                             (max(last, 1),))
                with conn.cursor() as cur:
                    cur.executemany("INSERT INTO lamar_lessons (namespace, id, added, status, scope, state, version) "
                                    "VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s)",
                                    [(ns, i, order, st, sc, body, version) for order, (i, st, sc, body) in enumerate(rows)])
                active = sum(s.experience.status is not Status.RETIRED for s in states)
                conn.execute("INSERT INTO lamar_rewards (namespace, shard, n, mean, m2, active) "
                             "VALUES (%s, 0, %s, %s, %s, %s)", (ns, n, mean, m2, active))
                conn.execute("INSERT INTO lamar_namespaces (namespace, last_seq, folded) VALUES (%s, %s, %s) "
                             "ON CONFLICT (namespace) DO UPDATE SET folded = EXCLUDED.folded, "
                             "last_seq = greatest(lamar_namespaces.last_seq, EXCLUDED.last_seq)", (ns, last, tuning))

        store._run(run, "build the lesson rows of")

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the namespace's write lock exclusively (no fold-mode write runs meanwhile): a
        checkpoint folds and rewrites the log under it, so no event commits below its seq."""
        store = self._store
        with store._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (ROWS_LOCK, store.namespace))
            yield


class _RowsMoved(LamarError):
    """An optimistic write found a row it had read changed (or added, or the rows rebuilt)."""


class _Vanished(LamarError):
    """A queued report left the inbox without being folded (a restarted server empties it)."""


class _Contended(LamarError):
    """A report's read found outcomes queued for the rows: the report is queued too (`_report`)."""


class _FoldInputs(NamedTuple):
    """What a write's first message read (`lamar_fold_inputs`), for its fold."""

    folded: str | None  # the tuning the rows were folded under; None: stale or never built
    episodes: dict[str, str]  # the batch's outcomes' episodes: key -> data
    rows: list[tuple[str, str, int]]  # the rows the batch touches: id, state, version
    shards: list[tuple[Any, Any, Any]]  # the reward-spread counters: n, mean, m2
    active: int  # lessons not retired (the sum of the counter shards')
    inbox: tuple[tuple[int, str, float, str, bool], ...] = ()  # queued outcomes: ticket, key, time, data, key taken
    waiting: bool = False  # the reader's own queued outcome is still in the inbox

    @classmethod
    def of(cls, result: list[tuple[Any, ...]], xid: list[str]) -> _FoldInputs:
        """From the function's parts; its first part, the transaction's id if it asked, goes to `xid`."""
        begun, folded, episodes, rows, shards, inbox, waiting = result_parts(result, 7)
        if begun:  # the read began the write's transaction: its id
            xid.append(str(begun[0][2]))
        return cls(folded[0][2] if folded else None, {r[1]: r[2] for r in episodes},
                   [(r[1], r[2], int(r[3])) for r in rows], [r[4:7] for r in shards], sum(int(r[7]) for r in shards),
                   tuple((int(r[3]), r[1], float(r[5]), r[2], bool(r[4])) for r in inbox), bool(waiting))


class _Batch:
    """The rows one write read, and the events of the write folded into them in order."""

    def __init__(self, policy: Policy, rows: list[LessonState], read: _FoldInputs, strict: bool,
                 location: str) -> None:
        self.policy, self.strict, self.location = policy, strict, location
        self.episodes = {key: json.loads(data) for key, data in read.episodes.items()}
        self.states = {state.experience.id: state for state in rows}
        self.n, self.mean, self.m2 = merge_shards(read.shards)
        self.active = read.active
        self.touched: dict[str, LessonState] = {}
        self.added: dict[str, LessonState] = {}
        self.rewards: tuple[int, float, float] = (0, 0.0, 0.0)  # this write's, for its shard
        self.stale = False

    def fold(self, event: Event) -> Event:
        data, states = event.data, self.states
        if event.kind == "experience":
            exp = Experience.from_dict(data)
            if exp.id in states:
                raise EventConflict(f"experience {exp.id!r} is already in {self.location}")
            # Its creation rank as the log's fold gives it while no lesson was retired (the rows do
            # not count retired lessons; docs/limitations.md): a rebuild from the log renumbers.
            states[exp.id] = self.added[exp.id] = LessonState(exp, rank=self.active + 1)
            self.active += exp.status is not Status.RETIRED
        elif event.kind == "status" and data["id"] in states:
            state = states[data["id"]]
            was = state.experience.status is not Status.RETIRED
            fold.set_status(state, Status(data["status"]))
            self.active += (state.experience.status is not Status.RETIRED) - was
            self.touched[data["id"]] = state
        elif event.kind == "scope" and data["id"] in states:
            if fold.narrow(states[data["id"]], data["key"], data["value"]):
                self.touched[data["id"]] = states[data["id"]]
        elif event.kind == "merge":
            into = states.get(data["into"])
            retired = fold.merge(into, [states.get(i) for i in data["from"]], data["from"])
            self.active -= len(retired)
            self.touched.update((s.experience.id, s) for s in [*retired, *([into] if into else [])])
        elif event.kind == "outcome" and not data.get("expired"):
            return self._outcome(event)
        return event

    def _outcome(self, event: Event) -> Event:
        data = event.data
        episode = self.episodes.get(f"episode:{data['episode']}")
        if data.get("replace") or episode is None:
            if self.strict and episode is None:
                raise UnknownEpisode(f"no episode {data['episode']!r} is found by its key")
            self.stale = True  # a replacement unfolds an outcome: the rows are built again from the log
            return event
        reward = float(data["reward"])
        self.n, self.mean, self.m2 = fold.welford(self.n, self.mean, self.m2, reward)
        self.rewards = fold.welford(*self.rewards, reward)
        sigma = fold.spread(self.n, self.m2)
        for state in fold.fold_outcome(self.states.get, episode["eligible"], episode["injected"], episode["p"],
                                       episode["context"], reward, sigma, self.policy, self.active):
            self.touched[state.experience.id] = state
        return Event(kind="outcome", data={**data, "fold": {"sigma": sigma, "active": self.active}},
                     key=event.key, time=event.time)


def merge_shards(shards: Iterable[tuple[Any, Any, Any]]) -> tuple[int, float, float]:
    """(n, mean, m2) of the union of sharded Welford counters (Chan et al.'s parallel formula)."""
    n, mean, m2 = 0, 0.0, 0.0
    for count, shard_mean, shard_m2 in shards:
        count = int(count)
        if count <= 0:
            continue
        total = n + count
        delta = float(shard_mean) - mean
        mean += delta * count / total
        m2 += float(shard_m2) + delta * delta * n * count / total
        n = total
    return n, mean, m2


def _named(event: Event) -> list[str]:
    """The lessons an event names directly (an outcome's come from its episode, in SQL)."""
    data = event.data
    if event.kind in ("status", "scope"):
        return [str(data.get("id"))]
    if event.kind == "merge":
        return [str(data.get("into")), *map(str, data.get("from", ()))]
    if event.kind == "experience":
        return [str(data.get("id"))]
    return []


def _empty_write(namespace: str) -> dict[str, Any]:
    return {"ns": namespace, "lock": ROWS_LOCK, "stale": False, "r_n": 0, "r_mean": 0.0, "r_m2": 0.0, "active": 0,
            "shards": SHARDS, "updated": "[]", "added": "[]", "expected": None, "n_expected": 0, "absent": [],
            "folded": None, "done": [], "queue": False, "tickets": []}


def events_json(events: Iterable[Event]) -> str:
    """Events as a write sends them: one JSON array of {kind, key, time, data}, which the server
    reads with one parse (json_to_recordset), keeping each `data` text exactly as sent."""
    return "[" + ",".join(
        f'{{"kind":{json.dumps(e.kind)},"key":{json.dumps(e.key)},"time":{float(e.time)!r},"data":{e.data_json()}}}'
        for e in events) + "]"


def keyed(events: Sequence[Event]) -> bool:
    """Whether every event has a key: a write of them is one message, settled by its keys."""
    return bool(events) and all(e.key is not None for e in events)


def result_parts(rows: list[tuple[Any, ...]], count: int) -> list[list[tuple[Any, ...]]]:
    """The rows of a result made of `count` parts (its first column: the part's number), by part."""
    parts: list[list[tuple[Any, ...]]] = [[] for _ in range(count)]
    for row in rows:
        parts[row[0]].append(row)
    return parts


__all__ = ["DROP_V3_FUNCTIONS", "FUNCTIONS", "ROWS_LOCK", "SHARDS", "LessonRows", "events_json", "keyed", "merge_shards", "result_parts"]
