"""A namespace of 10^6 episodes: built once with one COPY, then opening it and the first recall,
and a fresh process's stats, timed in new processes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from typing import Any

from lamar.bench.fleet.clients import drop_namespace, namespace_url
from lamar.engine import Lamar
from lamar.experience import Experience, Scope

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

    PostgresStore(namespace_url(base, namespace, "fold")).close()  # creates or migrates the schema
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
    lam = Lamar(namespace_url(base, namespace, "fold"), k=3, seed=0)
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
# The first recalls before it: only a process that wrote saves the state, a reader leaves the store as it was.
_STATS = """
import time, psycopg, psycopg_pool, lamar.engine, lamar.store, lamar.store.postgres, lamar.store.postgres.rows
t0 = time.perf_counter()
store = lamar.store.open_store({url!r})
starts, read = [], store.read
store.read = lambda after=0: starts.append(after) or read(after)
lam = lamar.engine.Lamar(store, k=3, seed=1)
if {write}:
    lam.recall({{"task": "t1"}})
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
        drop_namespace(base, namespace)
        build = build_big(base, namespace, episodes)
    timings = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", _OPEN.format(url=namespace_url(base, namespace, "fold"))],
                              capture_output=True, text=True, check=True)
        timings.append(float(done.stdout.split()[0]))
    with psycopg.connect(base.split("?", 1)[0], autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('lamar_state')").fetchone() != (None,):  # an earlier run saved one
            conn.execute("DELETE FROM lamar_state WHERE namespace = %s", (namespace,))
    stats = []
    for run in range(1 + runs):
        code = _STATS.format(url=namespace_url(base, namespace, "fold"), write=run == 0)
        done = subprocess.run([sys.executable, "-c", code],
                              capture_output=True, text=True, check=True)
        took, counted, resumed = done.stdout.split()
        assert int(counted) >= episodes  # (and the recalls of the runs above)
        stats.append((float(took), bool(int(resumed))))
    return {"episodes": episodes, "build_s": build, "open_recall_ms": [t * 1000 for t in timings], "stats_s": stats}
