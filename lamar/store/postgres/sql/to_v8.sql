-- A checkpoint replaces the events of applied proposals by a snapshot that lists them, so their
-- `proposal:<id>` keys leave the unique index; this trigger refuses those keys as the index did.
-- It first waits out a rewrite of the namespace in progress (its advisory lock, taken shared
-- here: the rewrite lock of store.py), so it reads the snapshot that rewrite commits.
CREATE OR REPLACE FUNCTION lamar_held_key() RETURNS trigger
LANGUAGE plpgsql SET enable_seqscan = off AS $fn$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(1279348050, hashtext(NEW.namespace));
    IF EXISTS (SELECT 1 FROM lamar_events AS e
               WHERE e.namespace = NEW.namespace AND e.kind = 'snapshot'
                 AND e.seq = (SELECT min(f.seq) FROM lamar_events AS f WHERE f.namespace = NEW.namespace)
                 AND (e.data::jsonb -> 'applied') ? substr(NEW.key, length('proposal:') + 1)) THEN
        RAISE unique_violation USING
            MESSAGE = format('the key %s is held by the checkpoint of namespace %s', NEW.key, NEW.namespace),
            DETAIL = format('Key (namespace, key)=(%s, %s) is held by the checkpoint at the start of the log: '
                            'that proposal is applied.', NEW.namespace, NEW.key);
    END IF;
    RETURN NEW;
END
$fn$;
DROP TRIGGER IF EXISTS lamar_held_keys ON lamar_events;  -- a step run again replaces it
CREATE TRIGGER lamar_held_keys BEFORE INSERT ON lamar_events FOR EACH ROW
    WHEN (NEW.key LIKE 'proposal:%') EXECUTE FUNCTION lamar_held_key()
