-- From the unversioned single-namespace layout, lamar_events(seq bigserial PRIMARY KEY, kind,
-- key UNIQUE, time, data): its events become the "default" namespace, their seqs unchanged.
ALTER TABLE lamar_events ADD COLUMN namespace text NOT NULL DEFAULT 'default';
ALTER TABLE lamar_events ALTER COLUMN namespace DROP DEFAULT, ALTER COLUMN seq DROP DEFAULT;
DROP SEQUENCE IF EXISTS lamar_events_seq_seq;
ALTER TABLE lamar_events DROP CONSTRAINT IF EXISTS lamar_events_pkey,
    DROP CONSTRAINT IF EXISTS lamar_events_key_key,
    ADD PRIMARY KEY (namespace, seq), ADD UNIQUE (namespace, key);
CREATE TABLE lamar_namespaces (namespace text PRIMARY KEY, last_seq bigint NOT NULL);
INSERT INTO lamar_namespaces SELECT 'default', max(seq) FROM lamar_events HAVING count(*) > 0
