"""Seconds per `Lamar.erase` on a store of N reported episodes and 120 lessons (SQLite, JSON, memory).

    python tools/erase_speed.py                             # this tree, at 500, 2000 and 8000 episodes
    python tools/erase_speed.py --against ../base --sizes 500,2000
    python tools/erase_speed.py --profile --sizes 2000 --backends sqlite   # where the time goes

Each store is built once per size and backend (a checkpoint half way, so a snapshot holds the
lessons too), copied for each tree, and erased three times (three lessons, the last with its
contexts). The trees run in turns in fresh processes (--rounds, the best mean kept), so a busy
machine slows both alike; "ratio" is base time / this tree's time. Figures go in the commit
message of a change to erase.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSONS = 120


def build(location: str, episodes: int) -> list[str]:
    """A store of LESSONS lessons and `episodes` reported episodes; the ids to erase."""
    from lamar import Experience, Lamar, Scope, Signal

    rng = random.Random(episodes)
    lam = Lamar(location, k=3, seed=0)
    ids = [lam.add(Experience(f"case {i}: the build of Quorvath {i} fails", f"do {i}",
                              scope=Scope(task=f"t{i % 6}"))) for i in range(LESSONS)]
    for n in range(episodes):
        rec = lam.recall({"task": f"t{n % 6}", "user": f"u{n % 17}"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
        if n == episodes // 2 and location != ":memory:":
            lam.checkpoint()
    lam.close()
    return ids[:3]


def erase_times(location: str, ids: list[str], episodes: int) -> list[float]:
    """Seconds for each erase of `ids` (the last with its contexts), the engine opened first."""
    from lamar import Lamar

    if location == ":memory:":  # nothing to copy: build it in this process
        lam = Lamar(location, k=3, seed=0)
        from lamar import Experience, Scope, Signal

        rng = random.Random(episodes)
        ids = [lam.add(Experience(f"case {i}: the build of Quorvath {i} fails", f"do {i}",
                                  scope=Scope(task=f"t{i % 6}"))) for i in range(LESSONS)][:3]
        for n in range(episodes):
            rec = lam.recall({"task": f"t{n % 6}", "user": f"u{n % 17}"})
            lam.report(rec.episode_id, rng.choice(list(Signal)))
            if n == episodes // 2:
                lam.checkpoint()
    else:
        lam = Lamar(location, k=3, seed=0)
    times = []
    for number, exp_id in enumerate(ids):
        start = time.perf_counter()
        lam.erase(exp_id, contexts=number == len(ids) - 1, by="bench")
        times.append(time.perf_counter() - start)
    lam.close()
    return times


def _child(args: argparse.Namespace) -> None:
    location, ids = args.child, json.loads(args.ids)
    if args.profile:
        import cProfile
        import pstats

        profile = cProfile.Profile()
        profile.enable()
        times = erase_times(location, ids, args.size)
        profile.disable()
        pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(45)
    else:
        times = erase_times(location, ids, args.size)
    print(json.dumps(times))


def _run(tree: Path, location: str, ids: list[str], size: int, profile: bool) -> list[float]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'integrations'}"}
    command = [sys.executable, str(Path(__file__).resolve()), "--child", location, "--ids", json.dumps(ids),
               "--sizes", str(size)] + (["--profile"] if profile else [])
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr[-3000:]}")
    if profile:
        print(done.stderr)
    return list(json.loads(done.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout to time side by side")
    parser.add_argument("--sizes", default="500,2000,8000")
    parser.add_argument("--backends", default="sqlite,json,memory")
    parser.add_argument("--rounds", type=int, default=2, help="turns per tree, the best kept")
    parser.add_argument("--profile", action="store_true", help="print cProfile's figures of this tree's erases")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--ids", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.size = int(args.sizes)
        _child(args)
        return
    trees = [("this", ROOT)] + ([("base", args.against.resolve())] if args.against else [])
    print(f"{'backend':8} {'episodes':>8} " + " ".join(f"{name + ' s/erase':>15}" for name, _ in trees)
          + ("    ratio" if args.against else ""))
    for size in (int(s) for s in args.sizes.split(",")):
        for backend in args.backends.split(","):
            with tempfile.TemporaryDirectory() as folder:
                suffix = {"sqlite": "db", "json": "json"}.get(backend)
                built = os.path.join(folder, f"built.{suffix}") if suffix else ":memory:"
                ids = build(built, size) if suffix else []
                means = {name: float("inf") for name, _ in trees}
                for turn in range(args.rounds):  # in turns, each tree's best mean kept
                    for name, tree in trees[::-1] if turn % 2 else trees:
                        location = built
                        if suffix:
                            location = os.path.join(folder, f"{name}.{suffix}")
                            for file in Path(folder).glob("built.*"):  # the log and what sits beside it
                                shutil.copyfile(file, os.path.join(folder, name + file.name[len("built"):]))
                        times = _run(tree, location, ids, size, args.profile and name == "this" and not turn)
                        means[name] = min(means[name], sum(times) / len(times))
                best = [means[name] for name, _ in trees]
                ratio = f"  {best[1] / best[0]:7.2f}" if args.against else ""
                print(f"{backend:8} {size:8} " + " ".join(f"{m:15.3f}" for m in best) + ratio, flush=True)


if __name__ == "__main__":
    main()
