"""Fleet benchmark: `python -m lamar.bench.fleet` prints recall+report throughput, latency and CPU
per episode for 1 to 64 clients sharing one PostgreSQL namespace, the log mode beside the fold mode
(docs/postgres.md, "The fleet benchmark"). A benchmark prints figures; it asserts nothing."""

from __future__ import annotations

from lamar.bench.fleet.big import build_big, measure_big
from lamar.bench.fleet.cli import main
from lamar.bench.fleet.clients import measure, row_seconds, run_segment, run_together
from lamar.bench.fleet.figures import flatness, mean_interval, row_line, summarize
from lamar.bench.fleet.one_client import measure_compression, measure_grown, measure_lessons

__all__ = ["build_big", "flatness", "main", "mean_interval", "measure", "measure_big", "measure_compression",
           "measure_grown", "measure_lessons", "row_line", "row_seconds", "run_segment", "run_together",
           "summarize"]
