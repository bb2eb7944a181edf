"""The fleet's clients: N clients (processes, then threads) on one fresh PostgreSQL namespace,
each running recall + report for a fixed time and handing back what it measured."""

from __future__ import annotations

import multiprocessing
import os
import random
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from lamar.bench.fleet.figures import summarize
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal

if TYPE_CHECKING:
    from lamar.store.postgres import PostgresStore

CLIENTS = (1, 4, 16, 32, 64)
# log: lamar_fold=off; fold: lamar_fold=on, optimistic writes; fold-lock: lamar_fold=on with every
# write locking its rows before reading them (the pessimistic write, the yardstick for the optimistic one).
MODES = ("log", "fold", "fold-lock")
DEFAULT_MODES = ("log", "fold")
# shared: every client recalls in one context, so every report folds into the same 10 lessons
# (the contended case). spread: client i works in project i % 16, with 2 lessons of its own
# project and none shared, so clients of different projects touch different rows.
WORKLOADS = ("shared", "spread")
PROJECTS = 16
MAX_PROCESSES = 16
WARM = 6  # episodes each client runs before the measured time (psycopg's prepare_threshold is 5)
DEFAULT_URL = os.environ.get("LAMAR_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
CONTEXT = {"task": "bench", "project": "fleet"}


def namespace_url(base: str, namespace: str, mode: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}lamar_namespace={namespace}&lamar_fold=" + ("on" if mode.startswith("fold") else "off")


def _context(workload: str, seed: int) -> dict[str, str]:
    return CONTEXT if workload == "shared" else {"task": "bench", "project": f"p{seed % PROJECTS}"}


def server_cpu(pid: int) -> float:
    """CPU seconds the PostgreSQL backend `pid` has used (it runs on this machine): from the
    scheduler's nanosecond count where the kernel keeps one, else from clock ticks (10 ms)."""
    try:
        with open(f"/proc/{pid}/schedstat") as fh:
            return int(fh.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        pass
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _agent(lam: Lamar, context: dict[str, str], seed: int, end: float, rate: float, turn: float,
           out: list[Any]) -> None:
    """One client: recall, report, repeat until `end` (as fast as it can, or `rate` episodes per
    second from a random phase), each report `turn` seconds after its recall (the agent's turn and
    the human's answer; not counted in the latency); its latencies, its own CPU time and its
    server backend's (the store has one connection), and when paced each episode's CPU, client
    and server (the reads of the backend's count fall outside the client's window)."""
    rng = random.Random(seed)
    signals = list(Signal)
    took: list[float] = []
    each: list[tuple[float, float]] = []
    backend = postgres_store(lam).connections.run(lambda conn: conn.info.backend_pid)
    counted = _counts(lam)  # since the store opened: its warm-up's are not this run's
    server, cpu = server_cpu(backend), time.thread_time()
    due = time.perf_counter() + (rng.uniform(0.0, 1.0 / rate) if rate else 0.0)
    while time.perf_counter() < end:
        if rate:  # paced: the next episode starts on schedule, or at once if this client is behind
            time.sleep(max(0.0, due - time.perf_counter()))
            due += 1.0 / rate
            if time.perf_counter() >= end:
                break
        if rate:
            before, own = server_cpu(backend), time.thread_time()
        t0 = time.perf_counter()
        rec = lam.recall(context)
        if turn:
            recalled = time.perf_counter() - t0
            time.sleep(turn)
            t0 = time.perf_counter() - recalled
        lam.report(rec.episode_id, rng.choice(signals))
        took.append(time.perf_counter() - t0)
        if rate:
            own = time.thread_time() - own
            each.append((own, server_cpu(backend) - before))
    retried = tuple(b - a for a, b in zip(counted, _counts(lam), strict=True))
    out.append((took, time.thread_time() - cpu, server_cpu(backend) - server, retried, each))


def postgres_store(lam: Lamar) -> PostgresStore:
    """`lam`'s store, which in a fleet is PostgreSQL's (its connections and counters are its own)."""
    from lamar.store.postgres import PostgresStore

    if not isinstance(lam.store, PostgresStore):
        raise TypeError(f"the fleet benchmark runs on PostgreSQL; got {type(lam.store).__name__}")
    return lam.store


def _counts(lam: Lamar) -> tuple[int, int, int]:
    """The fold mode's counts of conflicting writes, writes that took the rows' locks and queued
    reports, so far (zeros in the log mode)."""
    counters = postgres_store(lam).counters
    return counters.conflicts, counters.locked, counters.queued


def _process(location: str, mode: str, workload: str, seeds: list[int], seconds: float, rate: float,
             turn: float, barrier: Any, results: Any) -> None:
    """One OS process running len(seeds) clients (threads beyond the first)."""
    from lamar.store import open_store

    writes = "locking" if mode == "fold-lock" else "optimistic"
    engines = [Lamar(open_store(location, pool_size=1, writes=writes), k=3, seed=seed) for seed in seeds]
    # Warm, as a long-running agent is: the first call pays for imports and the rows' check, a
    # connection plans a function's statements on its first call of it, psycopg prepares a
    # statement on its 5th run, and a store learns whether its rows move during a turn. A paced
    # row of short segments would otherwise time that. This process's clients take their turns
    # side by side.
    warm = random.Random(-1 - seeds[0])
    for _ in range(WARM):
        episodes = [lam.recall(_context(workload, seed)).episode_id for lam, seed in zip(engines, seeds, strict=True)]
        time.sleep(turn)
        for lam, episode in zip(engines, episodes, strict=True):
            lam.report(episode, warm.choice(list(Signal)))
    for lam in engines:
        rows = postgres_store(lam).rows
        if rows is not None:
            # Every client warms up at once, a burst whose reports queue in the inbox, and a store
            # whose report was queued behind others' queues its next one at once. A paced row of short
            # segments has few reports per client, so counting that burst would swamp the row's own.
            rows.reset_contention()
    out: list[Any] = []
    barrier.wait()
    end = time.perf_counter() + seconds
    threads = [threading.Thread(target=_agent, args=(lam, _context(workload, seed), seed, end, rate, turn, out))
               for lam, seed in zip(engines, seeds, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for lam in engines:
        lam.close()
    results.put(out)


def _seed_lessons(location: str, workload: str, lessons: int) -> None:
    lam = Lamar(location, k=3, seed=0)
    for i in range(lessons if workload == "shared" else 2 * PROJECTS):
        if workload == "spread":
            scope = Scope(project=f"p{i % PROJECTS}")
        else:
            scope = Scope(task="bench") if i % 2 == 0 else Scope(task=f"other{i}")
        lam.add(Experience(f"working on case {i}", f"apply fix {i}", scope=scope))
    lam.close()


# Every table that holds rows of a namespace; lamar_state and lamar_notes come with their first row, not the schema.
NAMESPACE_TABLES = ("lamar_events", "lamar_namespaces", "lamar_lessons", "lamar_rewards", "lamar_inbox", "lamar_state",
                    "lamar_notes")


def drop_namespace(base: str, *namespaces: str) -> None:
    """Delete every row of `namespaces` from every table that holds one, in the schema `base` writes in:
    the one clean-up of the benchmarks, the tools and the tests, so that a run leaves nothing behind."""
    import psycopg

    from lamar.store.postgres.url import parse_url

    # The URL's own parameters stay (a search_path among them names the schema the run wrote in).
    with psycopg.connect(parse_url(base, None)[0], autocommit=True) as conn:
        for table in NAMESPACE_TABLES:
            if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() != (None,):  # older schemas lack some
                conn.execute(f"DELETE FROM {table} WHERE namespace = ANY(%s)", (list(namespaces),))


def _spin() -> None:
    while True:
        pass


def run_together(procs: list[Any], barrier: Any, results: Any, seconds: float) -> list[Any]:
    """Start `procs`, let them all begin at `barrier` (theirs and this process's), and gather
    the rows each puts on `results` once its `seconds` are over."""
    for p in procs:
        p.start()
    barrier.wait(timeout=600)
    collected = [row for _ in procs for row in results.get(timeout=seconds + 600)]
    for p in procs:
        p.join()
    return collected


def measure(mode: str, workload: str, clients: int, seconds: float, lessons: int, base: str,
            busy: int = 0, rate: float = 0.0, min_episodes: int = 0, turn: float = 0.0) -> dict[str, Any]:
    """Run `clients` clients against a fresh namespace for `seconds`; one flat row of figures.

    `busy` processes spin beside them (a control: the CPU contention of a fleet without its work);
    `rate` paces each client at that many episodes per second (0: as fast as it can), and then the
    row runs long enough for about `min_episodes` episodes in all; `turn`: seconds between each
    episode's recall and its report.
    """
    return summarize([run_segment(mode, workload, clients, row_seconds(seconds, clients, rate, min_episodes),
                                  lessons, base, busy, rate, turn)])


def row_seconds(seconds: float, clients: int, rate: float, min_episodes: int) -> float:
    """How long a row runs: `seconds`, or when paced long enough for `min_episodes` episodes."""
    return max(seconds, min_episodes / (clients * rate)) if rate else seconds


def run_segment(mode: str, workload: str, clients: int, seconds: float, lessons: int, base: str,
                busy: int = 0, rate: float = 0.0, turn: float = 0.0) -> dict[str, Any]:
    """Run `clients` clients against a fresh namespace for `seconds`: what each client measured
    (`_agent`), unsummarized, so that segments of one row run at different times can be merged."""
    namespace = f"bench-{uuid.uuid4().hex[:12]}"
    location = namespace_url(base, namespace, mode)
    _seed_lessons(location, workload, lessons)
    processes = min(clients, MAX_PROCESSES)
    seeds = [list(range(p, clients, processes)) for p in range(processes)]
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes + 1)
    results = ctx.Queue()
    procs = [ctx.Process(target=_process, args=(location, mode, workload, s, seconds, rate, turn, barrier,
                                                           results))
             for s in seeds]
    load = os.getloadavg()[0]
    spinners = [ctx.Process(target=_spin, daemon=True) for _ in range(busy)]
    for spinner in spinners:
        spinner.start()
    try:
        collected = run_together(procs, barrier, results, seconds)
    finally:
        for spinner in spinners:
            spinner.terminate()
        drop_namespace(base, namespace)
    return {"mode": mode, "workload": workload, "clients": clients, "busy": busy, "processes": processes,
            "threads": clients // processes, "seconds": seconds, "load": load, "collected": collected}
