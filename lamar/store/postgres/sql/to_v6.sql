-- lamar_view is STABLE (one snapshot for its statements), so a recall's read is one statement.
-- A lesson row is stored as it is up to 8160 bytes: rows are about 2 kB, where PostgreSQL's
-- default starts compressing them on every write.
DO $$ BEGIN
    -- (a store migrated from further back got the current lamar_view, STABLE already)
    IF to_regprocedure('lamar_view(text, jsonb, jsonb[], text[])') IS NOT NULL THEN
        ALTER FUNCTION lamar_view(text, jsonb, jsonb[], text[]) STABLE;
    END IF;
END $$;
ALTER TABLE lamar_lessons SET (toast_tuple_target = 8160)
