"""What a read-only command (`lamar stats`) costs where it may fold the whole log: on a PostgreSQL namespace whose
agents never save a state (no `pending_after`), with no state saved, after another `lamar stats` saved the state
it folded, and after one process with `pending_after` recalls and reports once; with `--sqlite`, on SQLite files
its agents wrote (docs/postgres.md, "Calls that need the whole fold"; docs/speed.md, "Cold start").

    python tools/reader_fold.py --url postgresql://postgres@127.0.0.1:5432/test --episodes 5000
    python tools/reader_fold.py --sqlite --episodes 1000 4000 16000

PostgreSQL: builds a namespace named lamar_reader_fold_<pid>, drops it at the end; prints the wall seconds of a
fresh `lamar stats` process and their ratio. SQLite: in a temporary folder, for each count of episodes over 40
lessons, the CPU seconds of a fresh `lamar stats` (least of 5) on a file its agents closed (default tuning), on
one whose agents ran with `holdout=0.2`, on one a `lamar erase` of a lesson then closed, on one without a
saved state (the whole fold), and on a `lamar import` of the tuned one into a new file. Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def _stats(location: str, *, cpu: bool = False) -> float:
    """Wall seconds of a fresh `lamar stats` process; with `cpu`, its CPU seconds (steadier on a busy machine)."""
    command = [sys.executable, "-m", "lamar.cli", "stats", "--store", location]
    if cpu:
        return _cpu(command)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _cpu(command: list[str]) -> float:
    """CPU seconds of running `command` to its end."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.ru_utime - used.ru_utime + done.ru_stime - used.ru_stime


def _sqlite(episodes: int) -> None:
    import shutil
    import sqlite3
    import tempfile

    from lamar import Experience, Lamar, Scope

    folder = tempfile.mkdtemp(prefix="lamar-reader-fold-")
    try:
        seconds = {}
        for name, tuning in (("saved", {}), ("tuned", {"holdout": 0.2}), ("erased", {}), ("no state", {})):
            path = os.path.join(folder, f"{name.replace(' ', '_')}.db")
            with Lamar(path, k=2, seed=1, **tuning) as agent:  # type: ignore[arg-type]
                ids = [agent.add(Experience(f"when step {i} fails", f"do fix {i}", scope=Scope(task="t")))
                       for i in range(40)]
                for i in range(episodes):
                    agent.report(agent.recall({"task": "t"}).episode_id, 1.0 if i % 3 else -1.0)
            if name == "erased":
                subprocess.run([sys.executable, "-m", "lamar.cli", "erase", ids[0], "--store", path], check=True,
                               stdout=subprocess.DEVNULL)
            if name == "no state":
                with sqlite3.connect(path) as db:
                    db.execute("DELETE FROM state")
                db.close()
            seconds[name] = min(_stats(path, cpu=True) for _ in range(5))
        copied = os.path.join(folder, "copied.db")  # as a store moved to a new file is first read
        copying = _cpu([sys.executable, "-m", "lamar.cli", "import", os.path.join(folder, "tuned.db"), "--store",
                        copied])
        seconds["copied"] = min(_stats(copied, cpu=True) for _ in range(5))
        print(f"episodes {episodes}: CPU of lamar stats " + ", ".join(f"{k} {v:.3f}s" for k, v in seconds.items())
              + f"; of the lamar import that made the copy {copying:.2f}s")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _in_process(location: str) -> float:
    """Milliseconds of a fresh engine's first `stats()` (the fold it needs), opened and closed around it."""
    from lamar import Lamar

    with Lamar(location, k=2, seed=3) as reader:
        started = time.perf_counter()
        reader.stats()
        return 1000 * (time.perf_counter() - started)


def _forget_state(url: str, namespace: str) -> None:
    import psycopg

    with psycopg.connect(url) as conn:
        if conn.execute("SELECT to_regclass('lamar_state')").fetchone() not in (None, (None,)):
            conn.execute("DELETE FROM lamar_state WHERE namespace = %s", (namespace,))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--episodes", type=int, nargs="+", default=[5000])
    parser.add_argument("--sqlite", action="store_true", help="measure SQLite files instead")
    args = parser.parse_args()
    if args.sqlite:
        for episodes in args.episodes:
            _sqlite(episodes)
        return
    args.episodes = args.episodes[0]
    from lamar import Experience, Lamar, Scope

    namespace = f"lamar_reader_fold_{os.getpid()}"
    location = f"{args.url}?lamar_namespace={namespace}"
    try:
        with Lamar(location, k=2, seed=1) as agent:  # an agent as teams run them: no pending_after
            for i in range(20):
                agent.add(Experience(f"when step {i} fails", f"do fix {i}", scope=Scope(task="t")))
            for i in range(args.episodes):
                agent.report(agent.recall({"task": "t"}).episode_id, 1.0 if i % 3 else -1.0)
        with Lamar(f"{args.url}?lamar_namespace={namespace}_empty") as empty:  # what a process costs at all
            empty.add(Experience("when step 0 fails", "do fix 0", scope=Scope(task="t")))
        floor = min(_stats(f"{args.url}?lamar_namespace={namespace}_empty") for _ in range(3))
        cold = []
        for _ in range(3):  # each with no state saved: the one the run before saved is deleted
            _forget_state(args.url, namespace)
            cold.append(_stats(location))
        after_reader = [_stats(location) for _ in range(3)]  # the first of them resumes from the last cold's state
        engine_cold = []
        for _ in range(5):
            _forget_state(args.url, namespace)
            engine_cold.append(_in_process(location))
        engine_warm = [_in_process(location) for _ in range(5)]
        print(f"episodes {args.episodes}: a fresh engine's stats() with no saved state "
              f"{min(engine_cold):.0f}-{max(engine_cold):.0f} ms, after another reader's "
              f"{min(engine_warm):.0f}-{max(engine_warm):.0f} ms (5 each)")
        with Lamar(location, k=2, seed=2, pending_after=3600.0) as settler:  # one recall and report, then gone
            settler.report(settler.recall({"task": "t"}).episode_id, 1.0)
        warm = [_stats(location) for _ in range(3)]
        print(f"episodes {args.episodes}: lamar stats with no saved state {min(cold):.2f}s, after another lamar stats "
              f"{min(after_reader):.2f}s, after one process with pending_after wrote {min(warm):.2f}s, ratio "
              f"{min(cold) / min(warm):.1f}x; on a namespace of one "
              f"lesson {floor:.2f}s (a process's start and connection), so the whole fold was "
              f"{min(cold) - floor:.2f}s of it")
    finally:
        from lamar.bench.fleet.clients import drop_namespace

        drop_namespace(args.url, namespace, f"{namespace}_empty")


if __name__ == "__main__":
    main()
