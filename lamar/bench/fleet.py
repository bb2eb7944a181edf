"""Fleet benchmark: `python -m lamar.bench.fleet` prints recall+report throughput and latency
with 1, 4 and 16 client processes sharing one store, SQLite beside PostgreSQL.

Each client is its own OS process with its own `Lamar`; all start together and run
recall + report for a fixed time. A benchmark prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from typing import Any

from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal

CLIENTS = (1, 4, 16)
BACKENDS = ("sqlite", "postgres", "postgres-async")
DEFAULT_URL = os.environ.get("LAMAR_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
_CONTEXT = {"task": "bench", "project": "fleet"}


def _client(location: str, seed: int, seconds: float, barrier: Any, results: Any) -> None:
    """One agent: recall, report, repeat until the time is up; sends its latencies back."""
    lam = Lamar(location, k=3, seed=seed)
    rng = random.Random(seed)
    signals = list(Signal)
    recall_s: list[float] = []
    report_s: list[float] = []
    barrier.wait()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        rec = lam.recall(_CONTEXT)
        t1 = time.perf_counter()
        lam.report(rec.episode_id, rng.choice(signals))
        t2 = time.perf_counter()
        recall_s.append(t1 - t0)
        report_s.append(t2 - t1)
    lam.close()
    results.put((recall_s, report_s))


def _location(backend: str, folder: str, url: str) -> str:
    if backend == "sqlite":
        return os.path.join(folder, f"fleet-{uuid.uuid4().hex[:8]}.db")
    sep = "&" if "?" in url else "?"
    extra = "options=-c%20synchronous_commit%3Doff&" if backend == "postgres-async" else ""
    return f"{url}{sep}{extra}lamar_namespace=bench-{uuid.uuid4().hex[:12]}"


def _seed_lessons(location: str, lessons: int) -> None:
    lam = Lamar(location, k=3, seed=0)
    for i in range(lessons):
        scope = Scope(task="bench") if i % 2 == 0 else Scope(task=f"other{i}")
        lam.add(Experience(f"working on case {i}", f"apply fix {i}", scope=scope))
    lam.close()


def _drop_namespace(location: str) -> None:
    """Delete a PostgreSQL benchmark namespace (psycopg is only imported for PostgreSQL)."""
    import psycopg

    from lamar.store.postgres import PostgresStore

    store = PostgresStore(location)
    namespace = store.namespace
    store.close()
    base = location.split("?", 1)[0]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute("DELETE FROM lamar_events WHERE namespace = %s", (namespace,))
        conn.execute("DELETE FROM lamar_namespaces WHERE namespace = %s", (namespace,))


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(backend: str, clients: int, seconds: float, lessons: int, folder: str, url: str) -> dict[str, Any]:
    """Run `clients` processes against a fresh store for `seconds`; one flat row of figures."""
    location = _location(backend, folder, url)
    _seed_lessons(location, lessons)
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(clients)
    results = ctx.Queue()
    procs = [ctx.Process(target=_client, args=(location, seed, seconds, barrier, results))
             for seed in range(clients)]
    try:
        for p in procs:
            p.start()
        collected = [results.get(timeout=seconds + 300) for _ in procs]
        for p in procs:
            p.join()
    finally:
        if backend != "sqlite":
            _drop_namespace(location)
    recall_s = [x for r, _ in collected for x in r]
    report_s = [x for _, r in collected for x in r]
    both = [a + b for r, s in collected for a, b in zip(r, s)]
    ms = 1000.0
    return {
        "backend": backend, "clients": clients, "seconds": seconds, "episodes": len(both),
        "episodes_per_s": len(both) / seconds,
        "recall_p50_ms": statistics.median(recall_s) * ms, "recall_p99_ms": _pct(recall_s, 0.99) * ms,
        "report_p50_ms": statistics.median(report_s) * ms, "report_p99_ms": _pct(report_s, 0.99) * ms,
        "episode_p50_ms": statistics.median(both) * ms, "episode_p99_ms": _pct(both, 0.99) * ms,
    }


def _machine(url: str, backends: list[str]) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    line = f"{os.cpu_count()} CPUs, load average {load:.1f}"
    if any(b.startswith("postgres") for b in backends):
        import psycopg

        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT current_setting('server_version'), current_setting('synchronous_commit')"
                               ).fetchone()
        if row:
            line += f"; PostgreSQL {row[0]} (synchronous_commit={row[1]}) on {url.split('@')[-1]}"
    return line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.bench.fleet", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default=",".join(map(str, CLIENTS)), help="client processes, comma separated")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="sqlite, postgres (durable commits), postgres-async (synchronous_commit=off)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured run time per configuration")
    parser.add_argument("--lessons", type=int, default=20, help="lessons in the store, half of them eligible")
    parser.add_argument("--postgres", default=DEFAULT_URL, help="server URL (default: $LAMAR_POSTGRES or local)")
    parser.add_argument("--json", dest="json_out", help="also write the rows to this file")
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - set(BACKENDS)
    if unknown:
        parser.error(f"unknown backend(s) {sorted(unknown)}; choose from {', '.join(BACKENDS)}")
    print(f"recall+report by N client processes for {args.seconds:g} s each; {_machine(args.postgres, backends)}")
    print(f"{'backend':<16}{'clients':>8}{'episodes/s':>12}{'recall p50':>12}{'p99':>8}"
          f"{'report p50':>12}{'p99':>8}{'episode p50':>13}{'p99':>8}   (ms)")
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for backend in backends:
            for clients in map(int, args.clients.split(",")):
                row = measure(backend, clients, args.seconds, args.lessons, folder, args.postgres)
                rows.append(row)
                print(f"{backend:<16}{clients:>8}{row['episodes_per_s']:>12.0f}"
                      f"{row['recall_p50_ms']:>12.1f}{row['recall_p99_ms']:>8.1f}"
                      f"{row['report_p50_ms']:>12.1f}{row['report_p99_ms']:>8.1f}"
                      f"{row['episode_p50_ms']:>13.1f}{row['episode_p99_ms']:>8.1f}", flush=True)
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
