-- The log of a new database, before the steps to the current version. In the log mode a
-- namespace's appends serialize on its row of lamar_namespaces: the upsert that allocates their
-- sequence numbers locks it until COMMIT, so a namespace's seq order is its commit order.
CREATE TABLE lamar_namespaces (namespace text PRIMARY KEY, last_seq bigint NOT NULL);
CREATE TABLE lamar_events (
    namespace text NOT NULL,
    seq       bigint NOT NULL,
    kind      text NOT NULL,
    key       text,
    time      double precision NOT NULL,
    data      text NOT NULL,
    PRIMARY KEY (namespace, seq),
    UNIQUE (namespace, key)
)
