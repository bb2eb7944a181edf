"""Benchmarks: they print figures measured side by side in one run and assert nothing.

    python -m lamar.bench           recall and report latency as the store grows (`speed`)
    python -m lamar.bench --cold    cold start: import, open, a fresh process per episode (`cold`)
    python -m lamar.bench.fleet     1-64 clients on PostgreSQL, the log mode beside the fold mode
    python -m lamar.bench.floor     the same clients with episodes of messages carrying no work
    python -m lamar.bench.rows      decode, copy and encode of one fold-mode lesson row
    python -m lamar.bench.placement namespaces placed on N database nodes, by hash and greedily
    python -m lamar.bench.growth    a million episodes with and without compaction
"""
