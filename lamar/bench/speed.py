"""Speed benchmark: `python -m lamar.bench` prints recall and report latency as the store grows."""

from __future__ import annotations

import argparse
import gc
import math
import os
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from typing import Any

from lamar.bench.arguments import at_most, counts, names, positive, save_rows, writable
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.store import Event, open_store

SIZES = (10, 1_000, 10_000, 100_000)
ELIGIBLE = (6, 50)
BACKENDS = ("memory", "json", "sqlite")
MAX_SIZE = 1_000_000  # --sizes: each store is built whole in memory before it is timed
MAX_REPS = 100_000  # --reps, --json-reps: episodes timed per row


def _populate(location: str, n: int, eligible: int, seed: int) -> None:
    """Write n lessons (`eligible` of them in the benchmark's scope) and n reported episodes."""
    rng = random.Random(seed)
    events: list[Event] = []
    ids: list[str] = []
    others = max(1, n // 20)
    for i in range(n):
        scope = Scope(task="bench") if i < eligible else Scope(task=f"other{i % others}")
        exp = Experience(f"working on {scope['task']} case {i}", f"apply fix number {i} carefully",
                         scope=scope).with_identity()
        ids.append(exp.id)
        events.append(Event("experience", exp.to_dict(), key=f"experience:{exp.id}"))
    for j in range(n):
        lesson = ids[rng.randrange(len(ids))]
        ep = f"ep_seed{j}"
        events.append(Event("episode", {"id": ep, "context": {"task": "elsewhere"}, "eligible": [lesson],
                                        "injected": [lesson], "held_out": [], "p": {lesson: 0.8}},
                            key=f"episode:{ep}"))
        events.append(Event("outcome", {"episode": ep, "reward": rng.choice((1.0, -1.0)), "signal": None,
                                        "replace": False}, key=f"outcome:{ep}"))
    store = open_store(location)
    store.append(events)
    store.close()


def _similarity_topk(lessons: list[tuple[Counter[str], float]], query: Counter[str], k: int) -> list[int]:
    """Bag-of-words cosine of the query against every lesson: what memory layers do today."""
    qn = math.sqrt(sum(v * v for v in query.values()))
    scores = []
    for i, (bag, norm) in enumerate(lessons):
        dot = sum(c * bag.get(w, 0) for w, c in query.items())
        scores.append((dot / (norm * qn or 1.0), i))
    scores.sort(reverse=True)
    return [i for _, i in scores[:k]]


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(backend: str, n: int, eligible: int, reps: int, folder: str) -> dict[str, Any]:
    location = {"memory": ":memory:", "json": os.path.join(folder, f"b{n}_{eligible}.json"),
                "sqlite": os.path.join(folder, f"b{n}_{eligible}.db")}[backend]
    if backend == "memory":
        store = open_store(location)
        tracemalloc.start()
        _fill_memory(store, n, eligible)
        lam = Lamar(store, k=3, seed=1)
    else:
        _populate(location, n, eligible, seed=1)
        tracemalloc.start()
        lam = Lamar(location, k=3, seed=1)
    heap = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    gc.collect()
    recall_us, report_us = [], []
    context = {"task": "bench", "project": "p"}
    for i in range(reps):
        t0 = time.perf_counter()
        rec = lam.recall(context)
        t1 = time.perf_counter()
        lam.report(rec.episode_id, 1.0 if i % 2 else -1.0)
        t2 = time.perf_counter()
        recall_us.append((t1 - t0) * 1e6)
        report_us.append((t2 - t1) * 1e6)
    bags = []
    for exp in lam.experiences():
        bag = Counter(f"{exp.precondition} {exp.action}".lower().split())
        bags.append((bag, math.sqrt(sum(v * v for v in bag.values()))))
    query = Counter(["working", "on", "bench", "case", "apply", "fix"])
    sim_us = []
    for _ in range(max(3, min(reps, 20))):
        t0 = time.perf_counter()
        _similarity_topk(bags, query, 3)
        sim_us.append((time.perf_counter() - t0) * 1e6)
    lam.close()
    both = [a + b for a, b in zip(recall_us, report_us)]
    return {
        "backend": backend, "experiences": n, "eligible": eligible, "reps": reps,
        "recall_median_us": statistics.median(recall_us), "recall_p99_us": _pct(recall_us, 0.99),
        "report_median_us": statistics.median(report_us), "report_p99_us": _pct(report_us, 0.99),
        "episode_median_us": statistics.median(both),
        "similarity_median_us": statistics.median(sim_us),
        "heap_mib": heap / 2**20,
    }


def _fill_memory(store: Any, n: int, eligible: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "fill.db")
        _populate(path, n, eligible, seed=1)
        source = open_store(path)
        store.append([Event(e.kind, e.data, e.key, time=e.time) for e in source.read()])
        source.close()


def main(argv: list[str] | None = None) -> int:
    """Print recall and report latency as the store grows.

    For each backend (memory, JSON, SQLite) and store size N (experiences, and as many
    reported episodes), it times `recall` and `report` for a context with 6 or 50 eligible
    lessons, and times a plain similarity top-k over all N lessons beside it. Figures are
    medians and 99th percentiles in microseconds; memory is the Python heap after loading.
    """
    parser = argparse.ArgumentParser(prog="python -m lamar.bench", description=__doc__.splitlines()[0],
                                     epilog="python -m lamar.bench --cold [--help]: the cold-start benchmark instead")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="store sizes, comma separated")
    parser.add_argument("--eligible", default=",".join(map(str, ELIGIBLE)),
                        help="lessons eligible for the timed context, comma separated (default %(default)s)")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="stores to time, comma separated, from %(default)s")
    parser.add_argument("--reps", type=int, default=300, help="episodes timed per configuration")
    parser.add_argument("--json-reps", type=int, default=20, help="episodes timed on JSON stores above 1 000")
    parser.add_argument("--json", dest="json_out", help="also write the rows to this file")
    args = parser.parse_args(argv)
    sizes = counts(parser, "--sizes", args.sizes, most=MAX_SIZE)
    eligible_counts = counts(parser, "--eligible", args.eligible, most=MAX_SIZE)
    backends = names(parser, "--backends", args.backends, BACKENDS)
    if min(eligible_counts) > max(sizes):
        parser.error("every --eligible count is above every --sizes: a store cannot hold more eligible lessons "
                     "than lessons, so nothing would be timed")
    positive(parser, reps=args.reps, json_reps=args.json_reps)
    at_most(parser, "--reps", args.reps, MAX_REPS)
    at_most(parser, "--json-reps", args.json_reps, MAX_REPS)
    writable(parser, "--json", args.json_out)
    rows = []
    header = (f"{'backend':<8}{'lessons':>9}{'elig':>6}{'recall p50':>12}{'p99':>9}{'report p50':>12}"
              f"{'p99':>9}{'episode':>10}{'similarity':>12}{'heap MiB':>10}")
    print("microseconds per call (median = p50); similarity = bag-of-words top-3 over all lessons, unindexed")
    print(header)
    with tempfile.TemporaryDirectory() as folder:
        for backend in backends:
            for n in sizes:
                for eligible in eligible_counts:
                    if eligible > n:
                        continue
                    reps = args.json_reps if backend == "json" and n > 1000 else args.reps
                    row = measure(backend, n, eligible, reps, folder)
                    rows.append(row)
                    print(f"{backend:<8}{n:>9}{eligible:>6}{row['recall_median_us']:>12.0f}{row['recall_p99_us']:>9.0f}"
                          f"{row['report_median_us']:>12.0f}{row['report_p99_us']:>9.0f}"
                          f"{row['episode_median_us']:>10.0f}{row['similarity_median_us']:>12.0f}"
                          f"{row['heap_mib']:>10.1f}", flush=True)
    return save_rows(parser.prog, args.json_out, rows) if args.json_out else 0


if __name__ == "__main__":
    sys.exit(main())
