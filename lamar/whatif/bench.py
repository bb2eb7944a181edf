"""Speed of `lamar whatif`: `python -m lamar.whatif.bench` times it in fresh processes on a SQLite
store of the engine's own episodes, without the cache, with it and after new episodes, beside
`lamar stats` (starting Python and opening the engine). It prints figures; it asserts nothing."""

from __future__ import annotations

import argparse
import os
import resource
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
from lamar.store import open_store
from lamar.store.base import Event


def build_store(path: Path, episodes: int, seed: int = 1, k: int = 3) -> None:
    """The engine run through `episodes` of a gym world in memory, its log copied into SQLite, then
    one more episode written by an engine over the file (which saves its state, as any engine
    that writes does, so that opening it folds only a short tail)."""
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
    log_more(path, 1, seed)


def log_more(path: Path, episodes: int, seed: int) -> None:
    """`episodes` more recalls and reports through an engine over the file."""
    world = World(seed + 1000, episodes)
    with Lamar(str(path), k=3, seed=seed) as lam:
        for t in range(episodes):
            rec = lam.recall(world.context(t, world.tasks[t]))
            lam.report(rec.episode_id, "shipped" if world.coins[t] < 0.5 else "corrected")


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of `argv` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.whatif.bench", description=__doc__)
    parser.add_argument("--episodes", type=int, default=100_000, help="episodes in the store (default 100 000)")
    parser.add_argument("--store", type=Path, help="reuse (or build once into) this SQLite file")
    parser.add_argument("--runs", type=int, default=5, help="runs of each command (median shown)")
    args = parser.parse_args(argv)
    scratch = tempfile.TemporaryDirectory()
    path = args.store or Path(scratch.name) / "whatif.db"
    if not path.exists():
        started = time.perf_counter()
        build_store(path, args.episodes)
        print(f"built {path}: {args.episodes} episodes in {time.perf_counter() - started:.0f} s")
    env = {**os.environ, "XDG_CACHE_HOME": str(Path(scratch.name) / "cache")}
    lamar = [sys.executable, "-m", "lamar.cli"]
    whatif, stats = [*lamar, "whatif", "--store", str(path)], [*lamar, "stats", "--store", str(path)]
    rows: list[tuple[str, list[tuple[float, float]]]] = []
    cold: list[tuple[float, float]] = []
    for _ in range(min(args.runs, 2)):
        subprocess.run(["rm", "-rf", env["XDG_CACHE_HOME"]], check=True)
        cold.append(timed(whatif, env))
    rows.append(("lamar whatif, no cache (the first run)", cold))
    rows.append(("lamar whatif, cached", [timed(whatif, env) for _ in range(args.runs)]))
    tail: list[tuple[float, float]] = []
    for _ in range(min(args.runs, 3)):
        log_more(path, 200, seed=len(tail))
        tail.append(timed(whatif, env))
    rows.append(("lamar whatif, cached, 200 episodes logged since", tail))
    rows.append(("lamar stats (start and open the engine only)", [timed(stats, env) for _ in range(args.runs)]))
    print(f"\n{path.name}: {path.stat().st_size / 1e6:.1f} MB; median of the runs (each a fresh process); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    print("command | runs | wall s | CPU s")
    print("---|---|---|---")
    for name, runs in rows:
        print(f"{name} | {len(runs)} | {statistics.median(w for w, _ in runs):.2f} | "
              f"{statistics.median(c for _, c in runs):.2f}")
    scratch.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
