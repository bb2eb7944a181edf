-- The engine's saved state per namespace, a cache beside the log: created by the first save,
-- with no schema version of its own.
CREATE TABLE IF NOT EXISTS lamar_state (namespace text PRIMARY KEY, seq bigint NOT NULL, body text NOT NULL)
