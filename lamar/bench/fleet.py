"""Fleet benchmark: `python -m lamar.bench.fleet` prints recall+report throughput, latency and CPU
per episode for 1 to 64 clients sharing one PostgreSQL namespace, the log mode (every client
folds every event) beside the fold mode (PostgreSQL holds the folded state), in one run.

Clients: up to 16 OS processes; beyond 16 each process runs several client threads (each its
own `Lamar` and connection), since the machine's CPUs, not the client count, are then the
limit. All start together and run recall + report for a fixed time. `--big` also builds (once)
a namespace of 10^6 episodes and times opening it and the first recall in fresh processes.
A benchmark prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal

CLIENTS = (1, 4, 16, 32, 64)
# log: lamar_fold=off; fold: lamar_fold=on, optimistic writes; fold-lock: lamar_fold=on with every
# write locking its rows before reading them (the fold mode's write before it was optimistic).
MODES = ("log", "fold", "fold-lock")
DEFAULT_MODES = ("log", "fold")
# shared: every client recalls in one context, so every report folds into the same 10 lessons
# (the workload). spread: client i works in project i % 16, with 2 lessons of its own
# project and none shared, so clients of different projects touch different rows.
WORKLOADS = ("shared", "spread")
PROJECTS = 16
MAX_PROCESSES = 16
_WARM = 6  # episodes each client runs before the measured time (psycopg's prepare_threshold is 5)
DEFAULT_URL = os.environ.get("LAMAR_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
_CONTEXT = {"task": "bench", "project": "fleet"}


def _url(base: str, namespace: str, mode: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}lamar_namespace={namespace}&lamar_fold=" + ("on" if mode.startswith("fold") else "off")


def _context(workload: str, seed: int) -> dict[str, str]:
    return _CONTEXT if workload == "shared" else {"task": "bench", "project": f"p{seed % PROJECTS}"}


def _server_cpu(pid: int) -> float:
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
    backend = lam.store.connections.run(lambda conn: conn.info.backend_pid)  # type: ignore[attr-defined]
    counted = _counts(lam)  # since the store opened: its warm-up's are not this run's
    server, cpu = _server_cpu(backend), time.thread_time()
    due = time.perf_counter() + (rng.uniform(0.0, 1.0 / rate) if rate else 0.0)
    while time.perf_counter() < end:
        if rate:  # paced: the next episode starts on schedule, or at once if this client is behind
            time.sleep(max(0.0, due - time.perf_counter()))
            due += 1.0 / rate
            if time.perf_counter() >= end:
                break
        if rate:
            before, own = _server_cpu(backend), time.thread_time()
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
            each.append((own, _server_cpu(backend) - before))
    retried = tuple(b - a for a, b in zip(counted, _counts(lam), strict=True))
    out.append((took, time.thread_time() - cpu, _server_cpu(backend) - server, retried, each))


def _counts(lam: Lamar) -> tuple[int, int, int]:
    """The fold mode's counts of conflicting writes, writes that took the rows' locks and queued
    reports, so far (zeros in the log mode)."""
    counters = lam.store.counters  # type: ignore[attr-defined]
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
    for _ in range(_WARM):
        episodes = [lam.recall(_context(workload, seed)).episode_id for lam, seed in zip(engines, seeds, strict=True)]
        time.sleep(turn)
        for lam, episode in zip(engines, episodes, strict=True):
            lam.report(episode, warm.choice(list(Signal)))
    for lam in engines:
        if getattr(lam.store, "rows", None) is not None:
            # Every client warms up at once, a burst whose reports queue in the inbox, and a store
            # whose report was queued behind others' queues its next one at once. In a paced row of
            # short segments that one report per client and segment was a third of all reports.
            lam.store.rows.reset_contention()  # type: ignore[attr-defined]
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


def _drop_namespace(base: str, namespace: str) -> None:
    import psycopg

    with psycopg.connect(base.split("?", 1)[0], autocommit=True) as conn:
        for table in ("lamar_events", "lamar_namespaces", "lamar_lessons", "lamar_rewards", "lamar_inbox"):
            if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() != (None,):  # older schemas lack some
                conn.execute(f"DELETE FROM {table} WHERE namespace = %s", (namespace,))


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


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
    location = _url(base, namespace, mode)
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
        _drop_namespace(base, namespace)
    return {"mode": mode, "workload": workload, "clients": clients, "busy": busy, "processes": processes,
            "threads": clients // processes, "seconds": seconds, "load": load, "collected": collected}


def summarize(segments: list[dict[str, Any]]) -> dict[str, Any]:
    """One flat row of figures from the segments of one row (its configuration run one or more
    times): episodes/s over their total time, latency percentiles and CPU over all their episodes."""
    collected = [c for segment in segments for c in segment["collected"]]
    seconds = sum(segment["seconds"] for segment in segments)
    took = [x for t, *_ in collected for x in t]
    each = [x for *_, e in collected for x in e]
    ms = 1000.0
    row = {
        **{key: segments[0][key] for key in ("mode", "workload", "clients", "busy", "processes", "threads")},
        "segments": len(segments), "seconds": seconds, "episodes": len(took),
        "episodes_per_s": len(took) / seconds,
        "episode_p50_ms": statistics.median(took) * ms, "episode_p99_ms": _pct(took, 0.99) * ms,
        "client_cpu_ms": statistics.mean(cpu / len(t) for t, cpu, *_ in collected if t) * ms,
        "server_cpu_ms": sum(server for _, _, server, *_ in collected) / max(len(took), 1) * ms,
        "conflicts_per_episode": sum(r[0] for *_, r, _ in collected) / max(len(took), 1),
        "queued_per_episode": sum(r[2] for *_, r, _ in collected) / max(len(took), 1),
        "locked_per_episode": sum(r[1] for *_, r, _ in collected) / max(len(took), 1),
        "load": statistics.mean(segment["load"] for segment in segments),
    }
    if len(each) > 1:  # paced: each episode's CPU, so that a row's mean comes with its 95 % interval
        for i, side in enumerate(("client", "server")):
            row[f"{side}_cpu_ms"], row[f"{side}_cpu_ci_ms"] = mean_interval([e[i] * ms for e in each])
    return row


def mean_interval(samples: list[float]) -> tuple[float, float]:
    """The mean of `samples` and the half-width of its 95 % confidence interval (normal
    approximation, 1.96 standard errors; episodes taken as independent draws)."""
    return statistics.mean(samples), 1.96 * statistics.stdev(samples) / len(samples) ** 0.5


def flatness(rows: list[dict[str, Any]], side: str = "client") -> list[str]:
    """For each workload and mode of paced `rows`, how far apart its rows' CPU per episode (`side`)
    lie: the highest mean over the lowest, with the range that ratio takes between the ends of
    the two rows' 95 % intervals."""
    out = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if f"{side}_cpu_ci_ms" in r and not r["busy"]:
            groups.setdefault((r["workload"], r["mode"]), []).append(r)
    for (workload, mode), group in groups.items():
        if len(group) < 2:
            continue
        key, ci = f"{side}_cpu_ms", f"{side}_cpu_ci_ms"
        low, high = min(group, key=lambda r: r[key]), max(group, key=lambda r: r[key])
        floor = low[key] - low[ci]
        top = "inf" if floor <= 0 else f"{(high[key] + high[ci]) / floor:.2f}"
        out.append(f"{workload:<9}{mode:<10}{side + ' CPU':<12}{low[key]:>6.2f} ms ({low['clients']:>2} clients) to "
                   f"{high[key]:>5.2f} ms ({high['clients']:>2}): x{high[key] / low[key]:.2f}, "
                   f"95 % intervals x{max(high[key] - high[ci], 0.0) / (low[key] + low[ci]):.2f} to x{top}")
    return out


# -- a namespace of 10^6 episodes -----------------------------------------------------------------

_BIG_LESSONS = 12  # 3 per task: every episode has 3 eligible lessons


def build_big(base: str, namespace: str, episodes: int) -> float:
    """Lay down `episodes` episodes and their outcomes with one COPY, then let the fold mode build
    the rows from that log (the engine's own fold, as a migration does). Returns the build's seconds."""
    import psycopg

    rng = random.Random(0)
    lessons = [Experience(f"case {i}", f"fix {i}", scope=Scope(task=f"t{i % 4}")).with_identity()
               for i in range(_BIG_LESSONS)]
    by_task = {f"t{t}": [e.id for e in lessons if e.scope["task"] == f"t{t}"] for t in range(4)}
    start = time.time() - episodes
    from lamar.store.postgres import PostgresStore

    PostgresStore(_url(base, namespace, "fold")).close()  # creates or migrates the schema
    with psycopg.connect(base.split("?", 1)[0], autocommit=True) as conn:
        with conn.cursor() as cur, cur.copy(
                "COPY lamar_events (namespace, seq, kind, key, time, data) FROM STDIN") as copy:
            seq = 0
            for exp in lessons:
                seq += 1
                copy.write_row((namespace, seq, "experience", f"experience:{exp.id}", start,
                                json.dumps(exp.to_dict(), separators=(",", ":"), sort_keys=True)))
            for n in range(episodes):
                task = f"t{n % 4}"
                eligible = by_task[task]
                held = [i for i in eligible if rng.random() < 0.15]
                injected = [i for i in eligible if i not in held]
                episode = {"id": f"ep_{n:08d}", "context": {"task": task}, "eligible": eligible,
                           "injected": injected, "held_out": held, "p": dict.fromkeys(eligible, 0.85)}
                outcome = {"episode": episode["id"], "reward": rng.choice((-1.0, -0.5, 0.5, 1.0)),
                           "signal": None, "replace": False}
                for kind, key, data in (("episode", f"episode:{episode['id']}", episode),
                                        ("outcome", f"outcome:{episode['id']}", outcome)):
                    seq += 1
                    copy.write_row((namespace, seq, kind, key, start + n,
                                    json.dumps(data, separators=(",", ":"), sort_keys=True)))
        conn.execute("INSERT INTO lamar_namespaces (namespace, last_seq) VALUES (%s, %s)", (namespace, seq))
    t0 = time.perf_counter()
    lam = Lamar(_url(base, namespace, "fold"), k=3, seed=0)
    lam.evidence(lessons[0].id)  # the rows are missing: this folds the log once and writes them
    lam.close()
    return time.perf_counter() - t0


_OPEN = """
import time, psycopg, psycopg_pool, lamar.engine, lamar.store.postgres, lamar.store.postgres.rows
t0 = time.perf_counter()
lam = lamar.engine.Lamar({url!r}, k=3, seed=1)
rec = lam.recall({{"task": "t1"}})
t1 = time.perf_counter()
print(t1 - t0, len(rec.eligible))
"""


# A call that folds the log (stats) in a new process: the first folds it all and saves the state,
# the next ones resume from that state and fold the tail (they never read the log from its start).
_STATS = """
import time, psycopg, psycopg_pool, lamar.engine, lamar.store, lamar.store.postgres, lamar.store.postgres.rows
t0 = time.perf_counter()
store = lamar.store.open_store({url!r})
starts, read = [], store.read
store.read = lambda after=0: starts.append(after) or read(after)
lam = lamar.engine.Lamar(store, k=3, seed=1)
episodes = lam.stats()["episodes"]
print(time.perf_counter() - t0, episodes, int(0 not in starts))
"""


def measure_big(base: str, episodes: int, runs: int) -> dict[str, Any]:
    import psycopg

    namespace = f"bench-big-{episodes}"
    with psycopg.connect(base.split("?", 1)[0], autocommit=True) as conn:
        have = conn.execute("SELECT count(*) FROM lamar_events WHERE namespace = %s AND kind = 'episode'",
                            (namespace,)).fetchone()
    build = None
    if not have or have[0] < episodes:
        _drop_namespace(base, namespace)
        build = build_big(base, namespace, episodes)
    timings = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", _OPEN.format(url=_url(base, namespace, "fold"))],
                              capture_output=True, text=True, check=True)
        timings.append(float(done.stdout.split()[0]))
    with psycopg.connect(base.split("?", 1)[0], autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('lamar_state')").fetchone() != (None,):  # an earlier run saved one
            conn.execute("DELETE FROM lamar_state WHERE namespace = %s", (namespace,))
    stats = []
    for _ in range(1 + runs):
        done = subprocess.run([sys.executable, "-c", _STATS.format(url=_url(base, namespace, "fold"))],
                              capture_output=True, text=True, check=True)
        took, counted, resumed = done.stdout.split()
        assert int(counted) >= episodes  # (and the recalls of the runs above)
        stats.append((float(took), bool(int(resumed))))
    return {"episodes": episodes, "build_s": build, "open_recall_ms": [t * 1000 for t in timings], "stats_s": stats}


# -- namespaces of many lessons -------------------------------------------------------------------


def measure_lessons(base: str, lessons: int, modes: list[str], episodes: int = 500) -> list[dict[str, Any]]:
    """One client's recall+report in a namespace of `lessons` lessons, 2 per project (a recall
    has 2 eligible): what a call costs as the namespace grows, in each mode side by side. The
    lessons are laid down as one batch of events (the fold mode builds its rows from them once,
    before the timing)."""
    from lamar.store import Event, open_store

    rows = []
    for mode in modes:
        namespace = f"bench-lessons-{uuid.uuid4().hex[:8]}"
        url = _url(base, namespace, mode)
        store = open_store(_url(base, namespace, "log"))
        for start in range(0, lessons, 5000):
            store.append([Event("experience", e.to_dict(), key=f"experience:{e.id}") for e in (
                Experience(f"working on case {i}", f"apply fix {i}", scope=Scope(project=f"p{i // 2}")).with_identity()
                for i in range(start, min(lessons, start + 5000)))])
        store.close()
        try:
            lam = Lamar(url, k=3, seed=1)
            rng, signals, context = random.Random(1), list(Signal), {"task": "bench", "project": "p3"}
            for _ in range(50):  # warm: the fold mode builds its rows here
                lam.report(lam.recall(context).episode_id, rng.choice(signals))
            cpu = time.thread_time()
            took = _timed(lam, context, rng, episodes)
            cpu = time.thread_time() - cpu
            lam.close()
        finally:
            _drop_namespace(base, namespace)
        rows.append({"mode": mode, "lessons": lessons, "episode_p50_ms": _pct(took, 0.5) * 1000,
                     "episode_p99_ms": _pct(took, 0.99) * 1000, "client_cpu_ms": cpu / episodes * 1000})
    return rows


def _machine(url: str) -> str:
    import psycopg

    load = os.getloadavg()[0]
    line = f"{os.cpu_count()} CPUs, load average {load:.1f}"
    with psycopg.connect(url.split("?", 1)[0]) as conn:
        row = conn.execute("SELECT current_setting('server_version'), current_setting('synchronous_commit')"
                           ).fetchone()
    if row:
        line += f"; PostgreSQL {row[0]} (synchronous_commit={row[1]}) on {url.split('@')[-1].split('?')[0]}"
    return line


_HEADER = (f"{'workload':<9}{'mode':<10}{'clients':>8}{'procs x thr':>13}{'episodes/s':>12}{'p50 ms':>9}{'p99 ms':>9}"
           f"{'client CPU ms':>15}{'server CPU ms':>15}{'retries':>9}{'queued':>8}{'load':>6}")


def _line(row: dict[str, Any]) -> str:
    client, server = (f"{row[f'{side}_cpu_ms']:.2f}" + (f" ±{row[f'{side}_cpu_ci_ms']:.2f}"
                                                         if f"{side}_cpu_ci_ms" in row else "")
                      for side in ("client", "server"))
    return (f"{row['workload']:<9}{row['mode']:<10}{row['clients']:>8}{row['processes']:>8} x {row['threads']:<2}"
            f"{row['episodes_per_s']:>12.0f}{row['episode_p50_ms']:>9.1f}{row['episode_p99_ms']:>9.1f}"
            f"{client:>15}{server:>15}"
            f"{row['conflicts_per_episode']:>9.3f}{row['queued_per_episode']:>8.2f}{row['load']:>6.1f}")


def _ratios(rows: list[dict[str, Any]], modes: list[str]) -> list[str]:
    """Each mode's episodes/s, p99 and CPU per episode over the log mode's, measured next to each other."""
    base = {(r["workload"], r["clients"]): r for r in rows if r["mode"] == "log" and not r["busy"]}
    out = []
    for mode in [m for m in modes if m != "log"]:
        for r in rows:
            other = base.get((r["workload"], r["clients"]))
            if r["mode"] == mode and not r["busy"] and other is not None and other["episodes_per_s"]:
                cpu = r["client_cpu_ms"] + r["server_cpu_ms"]
                out.append(f"{r['workload']:<9}{mode + '/log':<14}{r['clients']:>8}"
                           f"{r['episodes_per_s'] / other['episodes_per_s']:>13.2f}"
                           f"{r['episode_p99_ms'] / max(other['episode_p99_ms'], 1e-9):>13.2f}"
                           f"{cpu / max(other['client_cpu_ms'] + other['server_cpu_ms'], 1e-9):>13.2f}")
    return out


@contextlib.contextmanager
def _own_schema(base: str, prefix: str) -> Iterator[tuple[str, str]]:
    """A PostgreSQL schema of its own (its name, and `base` with the search path set to it),
    dropped with everything in it on the way out."""
    import psycopg

    schema = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(base.split("?", 1)[0], autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in base else "?"
    try:
        yield schema, f"{base}{sep}options=-c%20search_path%3D{schema}"
    finally:
        with psycopg.connect(base.split("?", 1)[0], autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def measure_grown(base: str, rows: int, modes: list[str], episodes: int = 300) -> list[dict[str, Any]]:
    """One client's recall+report p50 in a schema of its own, whose tables were empty when the
    client's connection planned its statements, before and after `rows` rows of another
    namespace are added to the lessons and events tables: whether a plan made on a tiny table
    keeps scanning it as it grows."""
    import psycopg

    from lamar.store.postgres import PostgresStore

    out = []
    for mode in modes:
        with _own_schema(base, "bench_grown") as (schema, in_schema):
            lam = Lamar(PostgresStore(_url(in_schema, "grown", mode), pool_size=1), k=3, seed=1)
            for i in range(3):
                lam.add(Experience(f"working on case {i}", f"apply fix {i}"))
            rng = random.Random(1)
            before = statistics.median(_timed(lam, _CONTEXT, rng, episodes)) * 1000.0
            with psycopg.connect(base.split("?", 1)[0], autocommit=True, options=f"-c search_path={schema}") as conn:
                conn.execute("INSERT INTO lamar_lessons (namespace, id, added, status, scope, state) SELECT 'other', "
                             "'exp_' || i, i, 'active', '{}', repeat('x', 1800) FROM generate_series(1, %s) AS i", (rows,))
                conn.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) SELECT 'other', i, "
                             "'episode', 'episode:' || i, 0, repeat('x', 300) FROM generate_series(1, %s) AS i", (rows,))
            out.append({"mode": mode, "grown_rows": rows, "p50_before_ms": before,
                        "p50_after_ms": statistics.median(_timed(lam, _CONTEXT, rng, episodes)) * 1000.0})
            lam.close()
    return out


def measure_compression(base: str, rounds: int = 3, episodes: int = 1500) -> list[dict[str, Any]]:
    """One fold-mode client on 10 shared lessons of a few sentences each (rows about 2 kB), in a
    schema of its own: its CPU per episode with lesson rows compressed past PostgreSQL's default
    threshold (toast_tuple_target reset) and stored as they are (8160, schema version 6), in
    alternating rounds."""
    import psycopg

    from lamar.store.postgres import PostgresStore

    rng = random.Random(0)
    words = ["cache", "build", "module", "xcode", "derived", "data", "stale", "clean", "rebuild", "dependency",
             "bump", "swift", "target", "linker"]

    def text(n: int) -> str:
        return " ".join(rng.choice(words) for _ in range(n))

    out = []
    with _own_schema(base, "bench_toast") as (schema, in_schema), \
            psycopg.connect(base.split("?", 1)[0], autocommit=True) as admin:
        lam = Lamar(PostgresStore(_url(in_schema, "toast", "fold"), pool_size=1), k=3, seed=1)
        for _ in range(10):
            lam.add(Experience(text(25), text(35), rationale=text(50), scope=Scope(task="bench")))
        backend = lam.store.connections.run(lambda conn: conn.info.backend_pid)  # type: ignore[attr-defined]
        _timed(lam, _CONTEXT, rng, 200)
        for _ in range(rounds):
            for setting in ("RESET (toast_tuple_target)", "SET (toast_tuple_target = 8160)"):
                admin.execute(f"ALTER TABLE {schema}.lamar_lessons {setting}")
                _timed(lam, _CONTEXT, rng, 100)  # every row rewritten under the setting
                stored, size = admin.execute(f"SELECT avg(pg_column_size(state)), avg(octet_length(state)) "
                                             f"FROM {schema}.lamar_lessons").fetchone() or (0, 0)
                server, cpu = _server_cpu(backend), time.thread_time()
                _timed(lam, _CONTEXT, rng, episodes)
                out.append({"compressed": setting.startswith("RESET"), "stored_bytes": float(stored),
                            "row_bytes": float(size), "client_cpu_ms": (time.thread_time() - cpu) / episodes * 1e3,
                            "server_cpu_ms": (_server_cpu(backend) - server) / episodes * 1e3})
        lam.close()
    return out


def _timed(lam: Lamar, context: dict[str, str], rng: random.Random, episodes: int) -> list[float]:
    """Seconds each of `episodes` recall+report took, one after another, with random signals."""
    signals, took = list(Signal), []
    for _ in range(episodes):
        t0 = time.perf_counter()
        lam.report(lam.recall(context).episode_id, rng.choice(signals))
        took.append(time.perf_counter() - t0)
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.bench.fleet", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default=",".join(map(str, CLIENTS)),
                        help="clients, comma separated ('' for none: only --big)")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES),
                        help="log (lamar_fold=off), fold (lamar_fold=on), fold-lock (the fold mode, every "
                             "write locking its rows first: how it wrote before its writes were optimistic)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="shared (one context, the same 10 lessons for all), spread (16 projects)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured run time per configuration")
    parser.add_argument("--lessons", type=int, default=20, help="lessons in the store, half of them eligible")
    parser.add_argument("--postgres", default=DEFAULT_URL, help="server URL (default: $LAMAR_POSTGRES or local)")
    parser.add_argument("--big", type=int, default=0, metavar="EPISODES",
                        help="also time opening a namespace of this many episodes and its first recall")
    parser.add_argument("--control", action="store_true",
                        help="also run 1 client beside 15 busy-looping processes (contention without work)")
    parser.add_argument("--rate", type=float, default=0.0, metavar="EPISODES_PER_S",
                        help="pace each client at this many episodes per second (default 0: as fast as it "
                             "can); below the machine's limit, CPU per episode shows the work, not the queue")
    parser.add_argument("--turn", type=float, default=0.0, metavar="SECONDS",
                        help="each report this long after its recall (default 0: at once), as an agent's turn "
                             "and its user's answer take; other clients' reports move the rows meanwhile")
    parser.add_argument("--rounds", type=int, default=3, metavar="R",
                        help="paced: run the rows in R rounds, each row a part of its time in each (default 3), "
                             "so that a slow spell of the machine falls on every row rather than one")
    parser.add_argument("--min-episodes", type=int, default=60, metavar="N",
                        help="paced: run each row long enough for about N episodes in all (default 60), so "
                             "that even one client's CPU per episode has a usable 95%% interval")
    parser.add_argument("--lesson-counts", default="", metavar="N,N,...",
                        help="also time one client's recall+report in namespaces of these many lessons "
                             "(2 eligible per recall), in each mode")
    parser.add_argument("--grown", type=int, default=0, metavar="ROWS",
                        help="also time one client before and after its tables grow by this many rows of "
                             "another namespace (its statements planned while they were empty)")
    parser.add_argument("--compression", action="store_true",
                        help="also compare one client's CPU per episode with lesson rows of about 2 kB "
                             "compressed (PostgreSQL's default) and stored as they are")
    parser.add_argument("--json", dest="json_out", help="also write the rows to this file")
    args = parser.parse_args(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if set(modes) - set(MODES):
        parser.error(f"unknown mode(s) {sorted(set(modes) - set(MODES))}; choose from {', '.join(MODES)}")
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    pace = (f"each client paced at {args.rate:g} episodes/s (a row runs for {args.min_episodes} episodes if that "
            f"takes longer, in {max(1, args.rounds)} rounds over every row)") if args.rate else "each client as fast as it can"
    if args.turn:
        pace += f", each report {args.turn:g} s after its recall (latency: the two calls only)"
    print(f"recall+report for {args.seconds:g} s per row, {pace}; {_machine(args.postgres)}")
    print("clients: up to 16 processes, then threads in each (processes x threads); the modes of a row "
          "count run one after another; CPU per episode: each client's own thread (mean over clients), and "
          "its PostgreSQL backend's; retries: optimistic writes that found their rows moved, per episode; "
          "queued: the share of reports queued in the inbox (their rows contended) and folded with others; "
          "load: the 1-minute load average as the row began"
          + ("; paced, CPU per episode is the mean over every episode, ± the half-width of its 95 % interval"
             if args.rate else ""))
    print(_HEADER)
    rows: list[dict[str, Any]] = []
    configurations = [(workload, clients, mode) for workload in workloads
                      for clients in [int(c) for c in args.clients.split(",") if c.strip()] for mode in modes]
    rounds = max(1, args.rounds) if args.rate else 1
    segments: dict[tuple[str, int, str], list[dict[str, Any]]] = {c: [] for c in configurations}
    for done in range(rounds):
        for workload, clients, mode in configurations:
            seconds = row_seconds(args.seconds, clients, args.rate, args.min_episodes) / rounds
            segments[workload, clients, mode].append(
                run_segment(mode, workload, clients, seconds, args.lessons, args.postgres, rate=args.rate,
                            turn=args.turn))
            if done == rounds - 1:  # its last segment: the row is complete
                rows.append(summarize(segments[workload, clients, mode]))
                print(_line(rows[-1]), flush=True)
    if args.control and rows:
        print(f"control: 1 client with {MAX_PROCESSES - 1} busy-looping processes beside it "
              "(the CPU contention of 16 clients, without their work)")
        for workload in workloads:
            for mode in modes:
                row = measure(mode, workload, 1, args.seconds, args.lessons, args.postgres, busy=MAX_PROCESSES - 1)
                rows.append(row)
                print(_line(row), flush=True)
    flat = flatness(rows) + flatness(rows, "server")
    if flat:
        print("paced, CPU per episode across client counts (± above: each row's 95 % interval, episodes taken as "
              "independent): the highest row's mean over the lowest's")
        print("\n".join(flat))
    ratios = _ratios(rows, modes)
    if ratios:
        print("side by side (same run): episodes/s, p99 and CPU per episode (client + server) over the log mode's")
        print(f"{'workload':<9}{'modes':<14}{'clients':>8}{'episodes/s':>13}{'p99':>13}{'CPU':>13}")
        print("\n".join(ratios))
    if args.big:
        big = measure_big(args.postgres, args.big, runs=5)
        rows.append(big)
        built = "" if big["build_s"] is None else f"; built its rows from the log once in {big['build_s']:.0f} s"
        print(f"namespace of {args.big} episodes (fold mode){built}")
        print("open + first recall in a fresh process (imports excluded), 5 runs: "
              + ", ".join(f"{t:.1f}" for t in big["open_recall_ms"]) + " ms; median "
              + f"{statistics.median(big['open_recall_ms']):.1f} ms")
        (first, saved), *later = big["stats_s"]
        print(f"stats in a fresh process: {first:.2f} s with no saved state (folds the whole log"
              + (", saves the state" if saved or later and later[0][1] else "") + "), then "
              + ", ".join(f"{t * 1000:.0f}" for t, _ in later) + " ms"
              + (" (resumed from it)" if all(resumed for _, resumed in later) else " (NOT resumed)"))
    counts = [int(n) for n in args.lesson_counts.split(",") if n.strip()]
    if counts:
        print("one client, recall+report, in namespaces of many lessons (2 eligible per recall)")
        print(f"{'lessons':>8}  {'mode':<10}{'p50 ms':>9}{'p99 ms':>9}{'client CPU ms':>15}")
        for lessons in counts:
            for row in measure_lessons(args.postgres, lessons, [m for m in modes if m != "fold-lock"]):
                rows.append(row)
                print(f"{row['lessons']:>8}  {row['mode']:<10}{row['episode_p50_ms']:>9.2f}{row['episode_p99_ms']:>9.2f}"
                      f"{row['client_cpu_ms']:>15.2f}", flush=True)
    if args.grown:
        print(f"one client, recall+report p50 in ms, planned on empty tables, then {args.grown} rows of another "
              "namespace added to the lessons and events tables")
        for row in measure_grown(args.postgres, args.grown, [m for m in modes if m != "fold-lock"]):
            rows.append(row)
            print(f"  {row['mode']:<6} before {row['p50_before_ms']:.2f}, after {row['p50_after_ms']:.2f}", flush=True)
    if args.compression:
        print("one fold-mode client, 10 shared lessons of a few sentences each, CPU per episode with lesson rows "
              "compressed (PostgreSQL's default) or stored as they are (toast_tuple_target 8160)")
        for row in measure_compression(args.postgres):
            rows.append(row)
            print(f"  {'compressed' if row['compressed'] else 'as they are':<12} rows {row['row_bytes']:.0f} B, "
                  f"stored {row['stored_bytes']:.0f} B; client {row['client_cpu_ms']:.3f} ms, "
                  f"server {row['server_cpu_ms']:.3f} ms", flush=True)
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
