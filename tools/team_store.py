"""A team's store at two sizes, built with the public API, and what a user's commands cost on it:
CPU seconds at a quarter of the size and at the whole, side by side with their ratio, so that a
step that grows faster than the store (a ratio well above 4) shows (docs/speed.md, "A team's store").

    python tools/team_store.py --lessons 2500 --episodes 25000

Every command runs in a fresh process, as `lamar` does, on a copy of the store. Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

OPEN = "import sys; from lamar import Lamar; Lamar(sys.argv[1]).close()"
CHECKPOINT = "import sys; from lamar import Lamar; lam = Lamar(sys.argv[1]); lam.checkpoint(); lam.close()"
ADD = ("import sys; from lamar import Experience, Lamar, Scope; lam = Lamar(sys.argv[1]); "
       "lam.add(Experience('one more case', 'one more fix', scope=Scope(task='t1'))); lam.close()")
LIST = "import sys; from lamar import Lamar; Lamar(sys.argv[1]).experiences()"
EVIDENCE = "import sys; from lamar import Lamar; lam = Lamar(sys.argv[1]); [lam.evidence(e.id) for e in lam.experiences()]"


def build(path: str, lessons: int, episodes: int) -> str:
    """A SQLite store of `lessons` lessons, 20 eligible per context, and `episodes` episodes (one
    in 50 never reported), written through `add`, `recall` and `report`; returns a lesson's id."""
    from lamar import Experience, Lamar, Scope, Signal

    lam = Lamar(path, k=3, seed=1)
    tasks = max(1, lessons // 20)
    ids = [lam.add(Experience(f"when task {i % tasks} step {i}", f"do thing {i}", scope=Scope(task=f"t{i % tasks}")))
           for i in range(lessons)]
    rng = random.Random(2)
    for j in range(episodes):
        rec = lam.recall({"task": f"t{rng.randrange(tasks)}"})
        if j % 50:
            lam.report(rec.episode_id, rng.choice((Signal.SHIPPED, Signal.ACCEPTED, Signal.REVERTED)))
    lam.close()
    return ids[len(ids) // 2]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(path: str, lesson: str) -> dict[str, float]:
    """CPU seconds of each step, in a fresh process each, on a copy of the store at `path`."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cli = [sys.executable, "-m", "lamar.cli", "--store", path]
    steps = {
        "open, from the saved state": [sys.executable, "-c", OPEN, path],
        "lamar ls": [*cli, "ls"],
        "lamar stats": [*cli, "stats"],
        "lamar show ID": [*cli, "show", lesson],
        "lamar html --out": [*cli, "html", "--out", path + ".html"],
        "experiences()": [sys.executable, "-c", LIST, path],
        "evidence() of every lesson": [sys.executable, "-c", EVIDENCE, path],
        "add one more lesson": [sys.executable, "-c", ADD, path],
        "lamar sleep --out": [*cli, "sleep", "--out", path + ".sleep.json"],
        "checkpoint": [sys.executable, "-c", CHECKPOINT, path],
        "open, after the checkpoint": [sys.executable, "-c", OPEN, path],
        "lamar ls, after the checkpoint": [*cli, "ls"],
    }
    out = {}
    for name, argv in steps.items():
        before = _cpu()
        subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
        out[name] = _cpu() - before
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=2500, help="lessons at the larger size")
    parser.add_argument("--episodes", type=int, default=25000, help="episodes at the larger size")
    args = parser.parse_args(argv)
    if args.lessons < 4 or args.episodes < 4:
        parser.error("--lessons and --episodes are whole numbers of at least 4")
    folder = tempfile.mkdtemp(prefix="lamar-team-")
    try:
        sizes = [(args.lessons // 4, args.episodes // 4), (args.lessons, args.episodes)]
        figures = []
        for lessons, episodes in sizes:
            path = os.path.join(folder, f"team-{lessons}.db")
            started = time.process_time()
            lesson = build(path, lessons, episodes)
            print(f"built {lessons} lessons, {episodes} episodes: {time.process_time() - started:.1f} s CPU", flush=True)
            figures.append(measure(path, lesson))
        small, large = (f"{n} lessons, {e} episodes" for n, e in sizes)
        print(f"{'CPU seconds':<32}{small:>30}{large:>30}{'ratio':>8}")
        for name, cost in figures[0].items():
            print(f"{name:<32}{cost:>30.2f}{figures[1][name]:>30.2f}{figures[1][name] / max(cost, 1e-3):>8.1f}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
