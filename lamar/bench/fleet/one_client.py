"""One client's recall + report as the namespace changes: many lessons, tables grown after the
statements were planned, lesson rows compressed or stored as they are."""

from __future__ import annotations

import contextlib
import random
import statistics
import time
import uuid
from collections.abc import Iterator
from typing import Any

from lamar.bench.fleet.clients import CONTEXT, drop_namespace, namespace_url, postgres_store, server_cpu
from lamar.bench.fleet.figures import pct
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.signals import Signal


def measure_lessons(base: str, lessons: int, modes: list[str], episodes: int = 500) -> list[dict[str, Any]]:
    """One client's recall+report in a namespace of `lessons` lessons, 2 per project (a recall
    has 2 eligible): what a call costs as the namespace grows, in each mode side by side. The
    lessons are laid down as one batch of events (the fold mode builds its rows from them once,
    before the timing)."""
    from lamar.store import Event, open_store

    rows = []
    for mode in modes:
        namespace = f"bench-lessons-{uuid.uuid4().hex[:8]}"
        url = namespace_url(base, namespace, mode)
        store = open_store(namespace_url(base, namespace, "log"))
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
            drop_namespace(base, namespace)
        rows.append({"mode": mode, "lessons": lessons, "episode_p50_ms": pct(took, 0.5) * 1000,
                     "episode_p99_ms": pct(took, 0.99) * 1000, "client_cpu_ms": cpu / episodes * 1000})
    return rows


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
            lam = Lamar(PostgresStore(namespace_url(in_schema, "grown", mode), pool_size=1), k=3, seed=1)
            for i in range(3):
                lam.add(Experience(f"working on case {i}", f"apply fix {i}"))
            rng = random.Random(1)
            before = statistics.median(_timed(lam, CONTEXT, rng, episodes)) * 1000.0
            with psycopg.connect(base.split("?", 1)[0], autocommit=True, options=f"-c search_path={schema}") as conn:
                conn.execute("INSERT INTO lamar_lessons (namespace, id, added, status, scope, state) SELECT 'other', "
                             "'exp_' || i, i, 'active', '{}', repeat('x', 1800) "
                             "FROM generate_series(1, %s) AS i", (rows,))
                conn.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) SELECT 'other', i, "
                             "'episode', 'episode:' || i, 0, repeat('x', 300) "
                             "FROM generate_series(1, %s) AS i", (rows,))
            out.append({"mode": mode, "grown_rows": rows, "p50_before_ms": before,
                        "p50_after_ms": statistics.median(_timed(lam, CONTEXT, rng, episodes)) * 1000.0})
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
        lam = Lamar(PostgresStore(namespace_url(in_schema, "toast", "fold"), pool_size=1), k=3, seed=1)
        for _ in range(10):
            lam.add(Experience(text(25), text(35), rationale=text(50), scope=Scope(task="bench")))
        backend = postgres_store(lam).connections.run(lambda conn: conn.info.backend_pid)
        _timed(lam, CONTEXT, rng, 200)
        for _ in range(rounds):
            for setting in ("RESET (toast_tuple_target)", "SET (toast_tuple_target = 8160)"):
                admin.execute(f"ALTER TABLE {schema}.lamar_lessons {setting}")
                _timed(lam, CONTEXT, rng, 100)  # every row rewritten under the setting
                stored, size = admin.execute(f"SELECT avg(pg_column_size(state)), avg(octet_length(state)) "
                                             f"FROM {schema}.lamar_lessons").fetchone() or (0, 0)
                server, cpu = server_cpu(backend), time.thread_time()
                _timed(lam, CONTEXT, rng, episodes)
                out.append({"compressed": setting.startswith("RESET"), "stored_bytes": float(stored),
                            "row_bytes": float(size), "client_cpu_ms": (time.thread_time() - cpu) / episodes * 1e3,
                            "server_cpu_ms": (server_cpu(backend) - server) / episodes * 1e3})
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
