-- The inbox is a set of slots, each rewritten in place for the next queued report once its
-- outcome is folded, so that reads of the inbox never walk past the index entries of folded
-- reports until a VACUUM. Outcomes queued when the migration runs move to slots of their own.
-- The inbox is UNLOGGED: an outcome waits there only while its reporter waits for its fold (a
-- report returns once the outcome is in the log), so a crash that empties it loses no report
-- that returned, and a queuing commits without a WAL flush. functions.sql follows this step.
CREATE UNLOGGED TABLE lamar_inbox_v7 (
    namespace text NOT NULL,
    slot      bigint NOT NULL,
    ticket    bigint,
    key       text,
    time      double precision,
    data      text,
    lessons   text[],
    PRIMARY KEY (namespace, slot)
) WITH (fillfactor = 50);
INSERT INTO lamar_inbox_v7 (namespace, slot, ticket, key, time, data, lessons)
    SELECT namespace, ticket, ticket, key, time, data, lessons FROM lamar_inbox WHERE ticket IS NOT NULL;
DROP TABLE lamar_inbox;
ALTER TABLE lamar_inbox_v7 RENAME TO lamar_inbox;
ALTER INDEX lamar_inbox_v7_pkey RENAME TO lamar_inbox_slots;
