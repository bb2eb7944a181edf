-- The fold mode's server functions, created by a migration and never changed in place: a new body
-- takes a new schema version whose migration creates it anew. Each runs with a generic plan made
-- once per connection, and with sequential scans off, so that a plan made while a table was tiny
-- never scans it once it has grown. Every part of a result has the same columns; a part leaves
-- NULL what it does not use. A lookup by key or id is one index probe per key (a LATERAL subquery
-- with LIMIT, which the planner never turns into a join).

-- Older signatures of these functions: CREATE OR REPLACE cannot change what a function takes or
-- returns.
DROP FUNCTION IF EXISTS lamar_enqueue(text, text, double precision, json);
DROP FUNCTION IF EXISTS lamar_view(text, jsonb, jsonb[], text[]);
DROP FUNCTION IF EXISTS lamar_write(text, integer, boolean, json, integer, text[], text, json, json, integer, bigint,
    double precision, double precision, bigint, boolean, json, bigint[], boolean);

-- What a fold-mode write folds, read in its first message: the rows' tuning, the episodes of the
-- batch's outcomes, the rows the batch touches with their versions, the namespace's counters (the
-- reward spread and the count of lessons not retired) and the inbox's queued outcomes that share
-- a lesson with the batch, as parts of one result. `p_locking` takes the namespace's write lock
-- shared and locks the rows before reading them; `p_xid` returns the transaction's id first.
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
        -- in a free slot (its last outcome folded), else in a new one: a slot is rewritten in
        -- place, so a busy inbox leaves no dead entries for its reads to pass over
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
    -- there is one, this transaction LISTENs. That takes effect only as it commits, and the notice
    -- of a fold committed before then is never sent to it: the reporter asks its turn again once
    -- listening (Inbox.queue).
    SELECT min(i.ticket) INTO older FROM lamar_inbox AS i
        WHERE i.namespace = p_ns AND i.ticket < queued AND i.lessons && mine;
    IF older IS NOT NULL THEN
        LISTEN lamar_inbox;
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
        LISTEN lamar_inbox;
    END IF;
    RETURN QUERY SELECT CASE WHEN older IS NULL THEN 'lead' ELSE 'wait' END, older, NULL::float8;
END
$fn$;

-- An episode's write: the namespace's write lock shared, as every fold-mode write
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

-- A read of the rows: the eligible ones for a context (by its subsets, `p_scopes`, or row by row,
-- `p_ctx`), the ones with these ids, or all; then the counters and the rows' tuning.
CREATE OR REPLACE FUNCTION lamar_view(p_ns text, p_ctx jsonb, p_scopes jsonb, p_ids text[])
    RETURNS TABLE (part integer, id text, body text, version bigint, n bigint, mean double precision,
                   m2 double precision, active bigint)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
BEGIN
    -- STABLE: its statements all read the snapshot of the query that calls it (a VOLATILE
    -- function takes one per statement), so its parts agree without a REPEATABLE READ
    -- transaction around it.
    -- A lesson is eligible where its scope is one of the context's subsets (`p_scopes`, a JSON
    -- array): one probe of the scope index per subset. A context too large to list its subsets
    -- is matched row by row (`p_ctx`).
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

-- A fold-mode write's second message:
--   1. Take the namespace's write lock shared (unless the first message did).
--   2. An optimistic write (`p_expected` not NULL) locks the rows it read in id order (so two
--      writes never deadlock) where their version has not moved, and goes on only if every one
--      of them matched, no row appeared under an id it found absent, and the rows' tuning is the
--      one it read; else it raises serialization_failure and the write starts over. A row
--      updated while this one waited for its lock is re-checked against the join, so a moved
--      version drops it: a conflict, never a lost fold.
--   3. Write the folded rows, the new rows, this connection's shard of the namespace's counters
--      (its rewards, and the change in the count of lessons not retired), the stale mark and the
--      events. A `json` value's text is kept as sent, so `data` is stored exactly; the SEQUENCE
--      is read in the events' order (volatile output is computed after ORDER BY).
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
            RAISE EXCEPTION USING ERRCODE = 'serialization_failure', MESSAGE = 'lamar: the lesson rows moved since they were read';
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
            RAISE EXCEPTION USING ERRCODE = 'serialization_failure', MESSAGE = 'lamar: the lesson rows moved since they were read';
        END IF;
    END IF;
    -- Only rows this transaction holds locked are updated (taken above or by the locking read),
    -- so the tuple each id finds stays where it is until this UPDATE: found by one index probe
    -- per id, written by its ctid (a TID scan per row, where a join would hash every row of the
    -- table).
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
    -- did for them (a reporter not named in it asks lamar_turn): the tickets it folded
    -- with their seqs (the k-th event took the k-th seq; null: dropped, its key was taken), the
    -- tickets still waiting on its lessons, and those among them with none older on theirs,
    -- whose reporters fold next; and its lessons, where they are few and short (a reporter whose
    -- lessons share none of them knows the notice is not about it). At most 64 of each list: a
    -- notice stays under its 8000 bytes.
    IF cardinality(p_done) > 0 THEN
        PERFORM pg_notify('lamar_inbox', json_build_object(
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
$fn$
