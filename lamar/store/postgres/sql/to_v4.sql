-- The fold mode's reads touch only the rows they return: the count of lessons not retired is a
-- column of the counter shards (each write adds its change; an older store gets each namespace's
-- count in shard 0), and an index finds a recall's rows by scope. The inbox holds first reports
-- queued where reports contend for the same rows, until a write folds them. The functions of the
-- previous signatures go first (functions.sql follows this step).
DROP FUNCTION IF EXISTS lamar_fold_inputs(text, text[], text[], boolean, integer);
DROP FUNCTION IF EXISTS lamar_view(text, jsonb, text[]);
DROP FUNCTION IF EXISTS lamar_write(text, integer, boolean, json, integer, text[], text, json, json, integer, bigint,
    double precision, double precision, boolean, json);
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
