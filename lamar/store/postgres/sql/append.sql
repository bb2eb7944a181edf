-- The log mode's write, a function so that PostgreSQL plans its statements once per connection;
-- the events travel as one JSON text, parsed once (json_to_recordset keeps `data` as sent).
-- Part 0 is the seqs this write got, part 1 the log after `p_since` up to them (at most p_tail
-- events besides its own).
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
$fn$
