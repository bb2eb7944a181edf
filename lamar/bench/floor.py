"""The machine's floor for a fleet: `python -m lamar.bench.floor` runs the fleet benchmark's
clients with episodes that carry no work, each M messages of which one is a committed one-row
write (`SELECT $1` otherwise), and prints episodes per second and CPU per episode."""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import threading
import time
import uuid
from typing import Any

from lamar.bench.arguments import counts as whole_numbers
from lamar.bench.arguments import positive
from lamar.bench.fleet.clients import DEFAULT_URL, MAX_PROCESSES, WARM, run_together, server_cpu
from lamar.bench.fleet.figures import describe_machine, pct


def _connect(url: str) -> Any:
    """One client's connection, warmed up: its statement prepared (from the fifth run on), as the
    fleet benchmark's clients warm up before the measured time."""
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    for _ in range(WARM):
        conn.execute("SELECT %s::int", (0,)).fetchone()
    return conn


def _client(conn: Any, table: str, messages: int, end: float, out: list[Any]) -> None:
    """One client on its own connection: episodes of `messages` messages until `end`."""
    with conn:
        backend = conn.info.backend_pid
        took: list[float] = []
        server, cpu, n = server_cpu(backend), time.thread_time(), 0
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            for _ in range(messages - 1):
                conn.execute("SELECT %s::int", (n,)).fetchone()
            conn.execute(f"INSERT INTO {table} (n) VALUES (%s)", (n,))  # commits: a WAL flush
            took.append(time.perf_counter() - t0)
            n += 1
        out.append((took, time.thread_time() - cpu, server_cpu(backend) - server))


def _process(url: str, table: str, messages: int, threads: int, seconds: float, barrier: Any,
             results: Any) -> None:
    """`threads` clients, connected and warmed up before the measured time begins."""
    connections = [_connect(url) for _ in range(threads)]
    out: list[Any] = []
    barrier.wait()
    end = time.perf_counter() + seconds
    workers = [threading.Thread(target=_client, args=(conn, table, messages, end, out)) for conn in connections]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    results.put(out)


def measure_floor(base: str, clients: int, messages: int, seconds: float) -> dict[str, Any]:
    """`clients` clients (processes up to 16, then threads in each, as the fleet benchmark runs
    them) sending empty episodes of `messages` messages for `seconds`: one flat row.

    An episode of the fold mode sends 3 messages (recall's read, its episode, the report's write)
    where its rows are its own, about 5 where reports share rows (docs/postgres.md, "The floor").
    What the fleet benchmark measures above this floor is Lamar's work: its Python and its SQL.
    """
    import psycopg

    url = base.split("?", 1)[0]
    table = f"lamar_floor_{uuid.uuid4().hex[:12]}"
    processes = min(clients, MAX_PROCESSES)
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(processes + 1), ctx.Queue()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (n bigint)")
    try:
        procs = [ctx.Process(target=_process, args=(url, table, messages, len(range(p, clients, processes)),
                                                    seconds, barrier, results)) for p in range(processes)]
        collected = run_together(procs, barrier, results, seconds)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    took = [x for t, _, _ in collected for x in t]
    ms = 1000.0
    return {
        "clients": clients, "messages": messages, "processes": processes, "seconds": seconds,
        "episodes_per_s": len(took) / seconds,
        "episode_p50_ms": statistics.median(took) * ms, "episode_p99_ms": pct(took, 0.99) * ms,
        "client_cpu_ms": statistics.mean(cpu / len(t) for t, cpu, _ in collected if t) * ms,
        "server_cpu_ms": sum(server for _, _, server in collected) / max(len(took), 1) * ms,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.bench.floor", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,16", help="clients, comma separated")
    parser.add_argument("--messages", default="3,5", help="messages per episode, comma separated (2 or more)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured run time per row")
    parser.add_argument("--postgres", default=DEFAULT_URL, help="server URL (default: $LAMAR_POSTGRES or local)")
    args = parser.parse_args(argv)
    counts = whole_numbers(parser, "--messages", args.messages)
    if any(m < 2 for m in counts):
        parser.error("an episode here is 2 messages or more: one committed write and a read at least")
    clients_counts = whole_numbers(parser, "--clients", args.clients)
    positive(parser, seconds=args.seconds)
    print(f"episodes with no work, {args.seconds:g} s per row; {describe_machine(args.postgres)}")
    print("each episode: M messages on the client's own connection, M - 1 of them SELECT $1 and one a "
          "committed one-row INSERT; CPU per episode: each client's thread (mean), and its backend's")
    print(f"{'clients':>8}{'messages':>10}{'episodes/s':>12}{'p50 ms':>9}{'p99 ms':>9}{'client CPU ms':>15}"
          f"{'server CPU ms':>15}")
    for clients in clients_counts:
        for messages in counts:
            row = measure_floor(args.postgres, clients, messages, args.seconds)
            print(f"{clients:>8}{messages:>10}{row['episodes_per_s']:>12.0f}{row['episode_p50_ms']:>9.2f}"
                  f"{row['episode_p99_ms']:>9.2f}{row['client_cpu_ms']:>15.3f}{row['server_cpu_ms']:>15.3f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
