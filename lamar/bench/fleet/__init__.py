"""Fleet benchmark: `python -m lamar.bench.fleet` prints recall+report throughput, latency and CPU
per episode for 1 to 64 clients sharing one PostgreSQL namespace, the log mode (every client
folds every event) beside the fold mode (PostgreSQL holds the folded state), in one run.

Clients: up to 16 OS processes; beyond 16 each process runs several client threads (each its
own `Lamar` and connection), since the machine's CPUs, not the client count, are then the
limit. All start together and run recall + report for a fixed time. `--big` also builds (once)
a namespace of 10^6 episodes and times opening it and the first recall in fresh processes.
A benchmark prints figures; it asserts nothing.

    clients.py      the clients on one namespace, and what each measured
    figures.py      one flat row of figures, its printed line, comparisons between rows
    big.py          a namespace of 10^6 episodes: opening it, the first recall, stats
    one_client.py   one client as the namespace changes (many lessons, grown tables, compression)
    cli.py          the options and the printout
"""

from __future__ import annotations

from lamar.bench.fleet.big import build_big, measure_big
from lamar.bench.fleet.cli import main
from lamar.bench.fleet.clients import measure, row_seconds, run_segment, run_together
from lamar.bench.fleet.figures import flatness, mean_interval, row_line, summarize
from lamar.bench.fleet.one_client import measure_compression, measure_grown, measure_lessons

__all__ = ["build_big", "flatness", "main", "mean_interval", "measure", "measure_big", "measure_compression",
           "measure_grown", "measure_lessons", "row_line", "row_seconds", "run_segment", "run_together",
           "summarize"]
