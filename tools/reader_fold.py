"""What a read-only command (`lamar stats`) costs on a PostgreSQL namespace whose agents never save a state
(no `pending_after`), before and after one process with `pending_after` recalls and reports once:
wall seconds of a fresh `lamar stats` process, and their ratio (docs/postgres.md, "Calls that need the whole fold").

    python tools/reader_fold.py --url postgresql://postgres@127.0.0.1:5432/test --episodes 5000

Builds a namespace named lamar_reader_fold_<pid>, drops it at the end. Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def _stats(location: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lamar.cli", "stats", "--store", location], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--episodes", type=int, default=5000)
    args = parser.parse_args()
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
        cold = [_stats(location) for _ in range(3)]
        with Lamar(location, k=2, seed=2, pending_after=3600.0) as settler:  # one recall and report, then gone
            settler.report(settler.recall({"task": "t"}).episode_id, 1.0)
        warm = [_stats(location) for _ in range(3)]
        print(f"episodes {args.episodes}: lamar stats with no saved state {min(cold):.2f}s, after one process with "
              f"pending_after wrote {min(warm):.2f}s, ratio {min(cold) / min(warm):.1f}x; on a namespace of one "
              f"lesson {floor:.2f}s (a process's start and connection), so the whole fold was "
              f"{min(cold) - floor:.2f}s of it")
    finally:
        from lamar.bench.fleet.clients import drop_namespace

        drop_namespace(args.url, namespace, f"{namespace}_empty")


if __name__ == "__main__":
    main()
