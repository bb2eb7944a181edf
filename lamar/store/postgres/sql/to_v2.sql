-- The fold mode: a lesson's row holds its folded state (`row_text`), rewritten by every report
-- that involves it: half-empty pages let those updates stay on the page, without index entries,
-- and be pruned there. `folded` names the tuning the rows were folded under (NULL: not built, or
-- stale); the reward spread sits in sharded Welford counters; seqs come from lamar_seq. Every
-- namespace's rows are built from its log on first use.
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
