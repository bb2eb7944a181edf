"""Growth benchmark: `python -m lamar.bench.growth` drives many episodes through one store and
prints its size and the recall + report latency as it grows, with compaction and without."""

from __future__ import annotations

import _thread
import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time
import types
from collections.abc import Iterator
from typing import Any

from lamar.bench.arguments import positive
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.policy.config import Policy
from lamar.sleep.compaction import KEEP_LAST, KEEP_UNREPORTED
from lamar.state.episode import EpisodeRecord

CONTEXT = {"task": "bench", "project": "growth"}
LIFTS = (0.2, 0.1, 0.0, 0.0, -0.1, -0.2)  # the 6 eligible lessons' true effects on reward
OTHER_LESSONS = 44  # in scopes the benchmark never recalls
UNREPORTED_EVERY = 50  # one episode in 50 never gets an outcome


def _engine(location: str) -> Lamar:
    lam = Lamar(location, k=3, seed=7)
    for i, _ in enumerate(LIFTS):
        lam.add(Experience(f"the growth case {i} appears", f"apply fix {i}", scope=Scope(task="bench")))
    for i in range(OTHER_LESSONS):
        lam.add(Experience(f"another case {i}", f"do {i}", scope=Scope(task=f"other{i % 8}")))
    return lam


def _deep_size(root: object, stop: tuple[object, ...]) -> tuple[int, int]:
    """Bytes of the Python objects reachable from `root`, and how many of them are episode
    records, not entering `stop`, the engine's fixed parts (its tuning, lock and coins) or shared
    machinery (classes, modules, functions)."""
    seen = {id(obj) for obj in stop}
    shared = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
              Policy, _thread.RLock, random.Random)
    total, episodes, stack = 0, 0, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, shared):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        episodes += isinstance(obj, EpisodeRecord)
        stack.extend(gc.get_referents(obj))
    return total, episodes


def _disk_bytes(location: str) -> int | None:
    if location == ":memory:":
        return None
    return sum(os.path.getsize(location + suffix) for suffix in ("", "-wal", "-shm")
               if os.path.exists(location + suffix))


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(location: str, episodes: int, *, every: int | None, rows: int,
        keep_last: int = KEEP_LAST) -> Iterator[dict[str, Any]]:
    """Drive `episodes` recall + report pairs, compacting every `every` (None: never); yield
    a row of figures `rows` times along the way.

    Every episode is a real `recall` (6 eligible lessons of 50, k = 3), and all but 1 in 50 are
    reported. At each compaction `sleep` runs and only its compact proposal is applied (the newest
    `keep_last` episodes kept, sleep's 10 000 by default; an unreported one folded once 100 000
    newer were recalled), which checkpoints the store. Latency figures are the median and 99th
    percentile of the episodes since the previous row; "heap" is the engine's Python objects (plus
    the log, for the in-memory store).
    """
    lam = _engine(location)
    rng = random.Random(11)
    ids = [e.id for e in lam.experiences()][: len(LIFTS)]
    lift = dict(zip(ids, LIFTS))
    window: list[float] = []
    compact_s: list[float] = []
    step = max(1, episodes // rows)
    clock = time.perf_counter
    for n in range(1, episodes + 1):
        start = clock()
        rec = lam.recall(CONTEXT)
        reward = 0.1 + sum(lift[i] for i in rec.ids) + rng.gauss(0.0, 0.5)
        if n % UNREPORTED_EVERY:
            lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
        window.append(clock() - start)
        if n % step == 0 or n == episodes:  # measured before a compaction due now: the peak
            heap, cached = _deep_size(lam, (lam.store,) if location != ":memory:" else ())
            row = {"episodes": n, "events": len(lam.store.read(0)), "disk": _disk_bytes(location),
                   "heap": heap, "cached": cached, "timed": len(window),
                   "p50_us": statistics.median(window) * 1e6, "p99_us": _pct(window, 0.99) * 1e6}
        if every and n % every == 0:
            start = clock()
            report = lam.sleep(keep_last=keep_last)
            lam.apply(report, only=[p.id for p in report.of_kind("compact")])
            compact_s.append(clock() - start)
        if n % step == 0 or n == episodes:
            yield {**row, "compact_s": max(compact_s, default=0.0), "after": len(lam.store.read(0))}
            window, compact_s = [], []
    lam.close()


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:.1f}"


def _table(title: str, rows: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    print(f"\n{title}")
    print(f"{'episodes':>10}{'events':>9}{'disk MiB':>10}{'heap MiB':>10}{'cached':>8}{'p50 us':>8}"
          f"{'p99 us':>8}{'compact s':>11}{'events after':>14}")
    done = []
    for row in rows:
        done.append(row)
        print(f"{row['episodes']:>10}{row['events']:>9}{_mib(row['disk']):>10}{_mib(row['heap']):>10}"
              f"{row['cached']:>8}{row['p50_us']:>8.0f}{row['p99_us']:>8.0f}{row['compact_s']:>11.2f}"
              f"{row['after']:>14}", flush=True)
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.bench.growth", description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000, help="in-memory run, with compaction")
    parser.add_argument("--sqlite-episodes", type=int, default=200_000, help="SQLite run, with compaction")
    parser.add_argument("--plain-episodes", type=int, default=200_000, help="in-memory run without compaction")
    parser.add_argument("--plain-sqlite-episodes", type=int, default=100_000, help="SQLite run without compaction")
    parser.add_argument("--every", type=int, default=50_000, help="episodes between compactions")
    parser.add_argument("--keep-last", type=int, default=KEEP_LAST, help="newest episodes a compaction keeps")
    parser.add_argument("--rows", type=int, default=10, help="rows per table")
    args = parser.parse_args(argv)
    sizes = (args.episodes, args.sqlite_episodes, args.plain_episodes, args.plain_sqlite_episodes)
    if min(sizes) < 0 or max(sizes) < 1 or args.keep_last < 0:
        parser.error("--episodes, --sqlite-episodes, --plain-episodes and --plain-sqlite-episodes are at least 0 "
                     "(0 leaves that run out), one of them at least 1, and --keep-last at least 0")
    positive(parser, every=args.every, rows=args.rows)
    every, keep = args.every, args.keep_last
    print(f"recall + report, 6 eligible lessons of {len(LIFTS) + OTHER_LESSONS}, k=3, 1 in {UNREPORTED_EVERY} "
          f"episodes never reported; compaction every {every} episodes keeps the newest {keep}.")
    print("'events' is the log's length and 'cached' the episodes the engine holds, just before a compaction due "
          "then; 'compact s' the longest sleep + apply + checkpoint in the row; p50/p99 the latency of the row's "
          "episodes in microseconds; 'events after' the log's length after the row's compaction.")
    print(f"Bound with compaction: the log holds 1 snapshot + at most 2 x {every} events (+ lesson changes), and "
          f"the engine at most {every} + {keep} episodes + the unreported ones of the last {KEEP_UNREPORTED}, "
          "however many episodes the store has seen.")
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        runs = [
            ("memory, compacted", ":memory:", args.episodes, every),
            ("memory, never compacted", ":memory:", args.plain_episodes, None),
            ("SQLite, compacted", os.path.join(folder, "compacted.db"), args.sqlite_episodes, every),
            ("SQLite, never compacted", os.path.join(folder, "plain.db"), args.plain_sqlite_episodes, None),
        ]
        for title, location, episodes, interval in runs:
            if episodes > 0:
                started = time.perf_counter()
                results[title] = _table(title, run(location, episodes, every=interval, rows=args.rows,
                                                   keep_last=keep))
                print(f"({time.perf_counter() - started:.0f} s)")
    print()
    for title, rows in results.items():
        full = [r for r in rows if r["timed"] >= 100] or rows  # not a short last row
        disk = max((r["disk"] or 0) for r in rows)
        print(f"{title}: {rows[-1]['episodes']} episodes, at most {max(r['events'] for r in rows)} events in the "
              f"log, {max(r['heap'] for r in rows) / 2**20:.0f} MiB heap"
              + (f", {disk / 2**20:.0f} MiB on disk" if disk else "")
              + f"; recall + report p50 {max(r['p50_us'] for r in full):.0f} us, "
              f"p99 {max(r['p99_us'] for r in full):.0f} us in the worst row")
    return 0


if __name__ == "__main__":
    sys.exit(main())
