"""A team's store at two sizes, built with the public API, and what a user's commands cost on it:
CPU seconds at a quarter of the size and at the whole, side by side with their ratio, so that a
step that grows faster than the store (a ratio well above 4) shows (docs/speed.md, "A team's store").

    python tools/team_store.py --lessons 2500 --episodes 25000 [--against OLD_CHECKOUT]

Every command runs in a fresh process, as `lamar` does, on a copy of the store; with --against, each
also runs on its own copy with the lamar/ of another checkout (before, after). Prints, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
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
EVIDENCE = ("import sys; from lamar import Lamar; lam = Lamar(sys.argv[1]); "
            "[lam.evidence(e.id) for e in lam.experiences()]")


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


def measure(built: str, lesson: str, code: str | None = None) -> dict[str, float]:
    """CPU seconds of each step, in a fresh process each, on a copy of the store at `built`, with
    the lamar/ of the checkout `code` (this one when None)."""
    path = f"{built}.{'against' if code else 'this'}.db"
    for suffix in ("", "-wal"):
        if os.path.exists(built + suffix):
            shutil.copyfile(built + suffix, path + suffix)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if code is not None:  # first on the path, and the directory `-m` and `-c` look in first
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (code, env.get("PYTHONPATH"))))
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
        "lamar apply, but the compaction": [*cli, "apply", path + ".apply.json"],
        "checkpoint": [sys.executable, "-c", CHECKPOINT, path],
        "open, after the checkpoint": [sys.executable, "-c", OPEN, path],
        "lamar ls, after the checkpoint": [*cli, "ls"],
    }
    out = {}
    for name, argv in steps.items():
        before = _cpu()
        subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, cwd=code)
        out[name] = _cpu() - before
        if name == "lamar sleep --out":  # the proposals the lessons alone judge; compaction has its own steps
            with open(path + ".sleep.json", encoding="utf-8") as file:
                report = json.load(file)
            report["proposals"] = [p for p in report["proposals"] if p["kind"] != "compact"]
            with open(path + ".apply.json", "w", encoding="utf-8") as file:
                json.dump(report, file)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", type=int, default=2500, help="lessons at the larger size")
    parser.add_argument("--episodes", type=int, default=25000, help="episodes at the larger size")
    parser.add_argument("--against", metavar="CHECKOUT", help="also time the lamar/ of this checkout (before)")
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
            print(f"built {lessons} lessons, {episodes} episodes: {time.process_time() - started:.1f} s CPU",
                  flush=True)
            after = measure(path, lesson)
            figures.append((measure(path, lesson, os.path.abspath(args.against)) if args.against else {}, after))
        _table(sizes, figures)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def _table(sizes: list[tuple[int, int]], figures: list[tuple[dict[str, float], dict[str, float]]]) -> None:
    """CPU seconds by step at both sizes (before and after, with --against), and the growth ratios."""
    heads = [f"{n} lessons, {e} episodes" for n, e in sizes]
    both = bool(figures[0][0])
    width = 30 if not both else 32
    if both:
        print(f"{'':<34}{heads[0]:>{width}}{heads[1]:>{width}}{'ratio':>16}")
        print(f"{'CPU seconds':<34}" + f"{'before':>16}{'after':>16}" * 3)
    else:
        print(f"{'CPU seconds':<34}{heads[0]:>{width}}{heads[1]:>{width}}{'ratio':>8}")
    sides = (0, 1) if both else (1,)
    for name in figures[1][1]:
        cells = [figures[size][side][name] for size in (0, 1) for side in sides]
        ratios = [figures[1][side][name] / max(figures[0][side][name], 1e-3) for side in sides]
        if both:
            print(f"{name:<34}" + "".join(f"{c:>16.2f}" for c in cells) + "".join(f"{r:>16.1f}" for r in ratios))
        else:
            print(f"{name:<34}{cells[0]:>{width}.2f}{cells[1]:>{width}.2f}{ratios[0]:>8.1f}")

if __name__ == "__main__":
    raise SystemExit(main())
