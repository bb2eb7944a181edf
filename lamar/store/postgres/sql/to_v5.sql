-- The log mode's function runs with sequential scans off too, as the fold mode's do.
ALTER FUNCTION lamar_append(text, integer, json, bigint, integer) SET enable_seqscan = off
