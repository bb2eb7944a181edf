"""Speed of `lamar whatif`: `python -m lamar.whatif.bench` times it in fresh processes on a copy of a
SQLite store of the engine's own episodes (and, with --postgres, a namespace holding the same
events), then each step of its first read. It prints figures; it asserts nothing."""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from lamar.engine import Lamar
from lamar.gym.policies import LamarPolicy
from lamar.gym.world import World
from lamar.store import episode_rows, open_store
from lamar.store.base import Event, StoredText, event_of
from lamar.store.decode import EventDecoder, no_cycle_collection
from lamar.store.sqlite import SqliteStore
from lamar.store.sqlite_checks import event_crc
from lamar.whatif.ask import MIN_EPISODES
from lamar.whatif.cache import Folded, kept_fold


def build_store(path: Path, episodes: int, seed: int = 1, k: int = 3) -> None:
    """The engine run through `episodes` of a gym world in memory, its log copied into SQLite, then
    one more episode written by an engine over the file (which saves its state, as any engine
    that writes does, so that opening it folds only a short tail)."""
    imported_store(path, episodes, seed, k)
    log_more(path, 1, seed)


def imported_store(path: Path, episodes: int, seed: int = 1, k: int = 3) -> None:
    """The engine run through `episodes` of a gym world in memory, its log appended to the store at
    `path` through `store.append`, as an importer writes it: no engine saved a state there."""
    world = World(seed, episodes)
    policy = LamarPolicy(world, k, seed)
    for t in range(episodes):
        injected, _ = policy.choose(t, world.tasks[t])
        policy.learn(world.outcome(t, injected), policy.ticket)
    events = policy.lam.store.read(0)
    store = open_store(str(path))
    try:
        for start in range(0, len(events), 5000):
            store.append([Event(e.kind, e.data, e.key, time=e.time) for e in events[start:start + 5000]])
    finally:
        store.close()


def log_more(path: Path, episodes: int, seed: int) -> None:
    """`episodes` more recalls and reports through an engine over the file."""
    world = World(seed + 1000, episodes)
    with Lamar(str(path), k=3, seed=seed) as lam:
        for t in range(episodes):
            rec = lam.recall(world.context(t, world.tasks[t]))
            lam.report(rec.episode_id, "shipped" if world.coins[t] < 0.5 else "corrected")


def copy_to_postgres(path: Path, base: str) -> str:
    """The URL of a namespace of the PostgreSQL server at `base` holding the events of the SQLite
    store at `path`: copied on the first run, kept for later ones."""
    source = open_store(str(path))
    events = source.read(0)
    source.close()
    url = f"{base}{'&' if '?' in base else '?'}lamar_namespace=whatif-bench-{len(events)}"
    target = open_store(url)
    try:
        held = len(target.read(0))
        if held == 0:
            for start in range(0, len(events), 5000):
                target.append([Event(e.kind, e.data, e.key, time=e.time) for e in events[start:start + 5000]])
        elif held != len(events):
            raise SystemExit(f"namespace whatif-bench-{len(events)} holds {held} events, not this store's "
                             f"{len(events)}: delete its rows (DELETE FROM lamar_events WHERE namespace = ...) "
                             "and run again")
    finally:
        target.close()
    return url


def scratch_copy(source: Path, target: Path) -> None:
    """A consistent copy of the SQLite file at `source`, opened read-only: the runs timed (and the
    episodes the bench logs) go to the copy, so a user's store is never written.

    Raises:
        SystemExit: `source` is not a SQLite file.
    """
    try:
        with contextlib.closing(sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)) as db, \
                contextlib.closing(sqlite3.connect(target)) as copy:
            db.execute("SELECT seq FROM events LIMIT 1")
            db.backup(copy)
    except sqlite3.Error as exc:
        raise SystemExit(f"--store {source}: not a Lamar SQLite store ({exc}); name a .db file that "
                         "`lamar stats --store` opens, or a new path to build one into") from None


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `argv` in a fresh process.

    Raises:
        SystemExit: the command failed (its error is passed on, not timed).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(argv[2:])} failed, nothing to time:\n{done.stderr.strip()}")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def uncached(argv: list[str], env: dict[str, str], runs: int) -> list[tuple[float, float]]:
    """`timed` runs of `argv`, each after the what-if cache folder of `env` is removed."""
    out = []
    for _ in range(runs):
        subprocess.run(["rm", "-rf", env["XDG_CACHE_HOME"]], check=True)
        out.append(timed(argv, env))
    return out


def read_steps(path: Path, runs: int) -> tuple[float, list[tuple[str, float]]]:
    """(MB of event text, [(step, median seconds)]) of a first read, step by step, in this process:
    the episode table's read, then the log's fold that it stands in for."""
    steps: dict[str, list[float]] = {}
    megabytes = 0.0
    store = open_store(str(path))
    assert isinstance(store, SqliteStore), "the bench's store is SQLite"
    for _ in range(runs):
        with no_cycle_collection():
            marks = [("", time.perf_counter())]
            kept, tail = kept_fold(store)
            assert kept is not None, "the bench's store keeps its episode table"
            kept.fold_texts(store, tail)
            marks.append(("the episode table and the events since (what a first run reads)", time.perf_counter()))
            db = sqlite3.connect(path)
            marks.append(("", time.perf_counter()))
            rows = db.execute("SELECT seq, kind, key, time, data, crc FROM events ORDER BY seq").fetchall()
            marks.append(("the log it stands in for: SQLite hands over the rows", time.perf_counter()))
            texts = [StoredText(seq, kind, key, at, data) for seq, kind, key, at, data, crc in rows
                     if crc == event_crc(kind, key, at, data)]
            marks.append(("every event's checksum", time.perf_counter()))
            folded = Folded()
            folded.fold_texts(store, texts)
            marks.append(("folding the texts into the what-if columns (each distinct one decoded once)",
                          time.perf_counter()))
            decode = EventDecoder()
            by_event = Folded()
            for row in texts:
                by_event.fold(event_of(row, decode))
            marks.append(("for comparison, not a step: decoding and checking each event, then folding it",
                          time.perf_counter()))
            for row in rows:
                json.loads(row[4])
            marks.append(("for comparison, not a step: decoding each text whole (json.loads)", time.perf_counter()))
            megabytes = sum(len(row[4]) for row in rows) / 1e6
            db.close()
        for (_, before), (name, at) in itertools.pairwise(marks):
            if name:  # an unnamed mark only starts the next step
                steps.setdefault(name, []).append(at - before)
        del rows, texts, folded, by_event, kept, tail
        gc.collect()
    store.close()
    return megabytes, [(name, statistics.median(times)) for name, times in steps.items()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.whatif.bench", description=__doc__)
    parser.add_argument("--episodes", type=int, default=100_000, help="episodes in the store (default 100 000)")
    parser.add_argument("--store", type=Path, help="reuse (or build once into) this SQLite file; only read: "
                        "the runs are timed on a copy")
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (median shown)")
    parser.add_argument("--postgres", metavar="URL",
                        help="also time it on a namespace of this PostgreSQL server holding the same events")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.episodes < MIN_EPISODES:
        parser.error(f"--runs is at least 1 and --episodes at least {MIN_EPISODES} (what `lamar whatif` reads)")
    if args.store and args.store.suffix.lower() not in (".db", ".sqlite", ".sqlite3"):
        parser.error(f"--store is a SQLite file (.db, .sqlite or .sqlite3); got {str(args.store)!r}")
    scratch = tempfile.TemporaryDirectory()
    source = args.store or Path(scratch.name) / "built.db"
    if not source.exists():
        started = time.perf_counter()
        build_store(source, args.episodes)
        print(f"built {source}: {args.episodes} episodes in {time.perf_counter() - started:.0f} s")
    path = Path(scratch.name) / "whatif.db"
    scratch_copy(source, path)
    env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch.name) / "cache")}
    lamar = [sys.executable, "-m", "lamar.cli"]
    whatif, stats = [*lamar, "whatif", "--store", str(path)], [*lamar, "stats", "--store", str(path)]
    rows: list[tuple[str, list[tuple[float, float]]]] = []
    rows.append(("lamar whatif, no cache (the first run)", uncached(whatif, env, min(args.runs, 2))))
    rows.append(("lamar whatif, cached", [timed(whatif, env) for _ in range(args.runs)]))
    if args.postgres:
        url = copy_to_postgres(path, args.postgres)
        pg_whatif = [*lamar, "whatif", "--store", url]
        timed([*lamar, "stats", "--store", url], env)  # the fold mode builds its rows once, first
        rows.append(("PostgreSQL, lamar whatif, no cache (the first run)", uncached(pg_whatif, env, min(args.runs, 2))))
        rows.append(("PostgreSQL, lamar whatif, cached", [timed(pg_whatif, env) for _ in range(args.runs)]))
    tail: list[tuple[float, float]] = []
    for _ in range(min(args.runs, 3)):
        log_more(path, 200, seed=len(tail))
        tail.append(timed(whatif, env))
    rows.append(("lamar whatif, cached, 200 episodes logged since", tail))
    rows.append(("lamar stats (start and open the engine only)", [timed(stats, env) for _ in range(args.runs)]))
    print(f"\n{source.name} (a copy): {path.stat().st_size / 1e6:.1f} MB; median of the runs (each a fresh process); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    print("command | runs | wall s | CPU s")
    print("---|---|---|---")
    for name, runs in rows:
        print(f"{name} | {len(runs)} | {statistics.median(w for w, _ in runs):.2f} | "
              f"{statistics.median(c for _, c in runs):.2f}")
    megabytes, steps = read_steps(path, 3)
    print(f"\nthe first read's steps, in one process ({megabytes:.1f} MB of event text; median of 3)\n")
    print("step | s\n---|---")
    for name, seconds in steps:
        print(f"{name} | {seconds:.2f}")
    events, seconds = catch_up_cost(path)
    print(f"\nbringing the episode table up to date: {seconds / events * 1e6:.1f} µs of CPU per event "
          f"(the whole log's {events} events folded into it again, in one process)")
    scratch.cleanup()
    return 0


def catch_up_cost(path: Path) -> tuple[int, float]:
    """(events, CPU seconds) of folding the whole log into the episode table of the SQLite file at
    `path` again, as a state save does for the events since the last one."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN IMMEDIATE")
        started = time.process_time()
        episode_rows.rebuild(db, event_crc)
        seconds = time.process_time() - started
        db.execute("COMMIT")
        (events,) = db.execute("SELECT count(*) FROM events").fetchone()
    return int(events), seconds


if __name__ == "__main__":
    raise SystemExit(main())
