-- Small records a namespace's users all read, such as the last sleep's figures that `lamar stats` shows:
-- created by the first note, with no schema version of its own.
CREATE TABLE IF NOT EXISTS lamar_notes (namespace text NOT NULL, name text NOT NULL, body text NOT NULL,
                                        PRIMARY KEY (namespace, name))
