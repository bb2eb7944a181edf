"""Cold-start benchmark: `python -m lamar.bench --cold` prints what a fresh process pays."""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lamar.bench.arguments import at_most, counts, names, positive
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.store import Event, open_store

TASKS = 5

# One episode the way a hook runs it: a new interpreter that imports, opens, recalls, reports, exits.
HOOK = """
import sys, time
from lamar import Lamar, Signal
lam = Lamar(sys.argv[1], k=3)
rec = lam.recall({"task": "t1", "project": "p"})
lam.report(rec.episode_id, Signal.SHIPPED)
lam.close()
"""
# Open and answer the first recall, timed inside the process (the interpreter's start apart).
OPEN = """
import sys, time
from lamar import Lamar, Signal
t1, c1 = time.perf_counter(), time.process_time()
lam = Lamar(sys.argv[1], k=3)
rec = lam.recall({"task": "t1", "project": "p"})
t2, c2 = time.perf_counter(), time.process_time()
lam.report(rec.episode_id, Signal.SHIPPED)
lam.close()
print((t2 - t1) * 1000, (c2 - c1) * 1000)
"""


def populate(location: str, lessons: int, episodes: int, seed: int = 1) -> list[str]:
    """A store of `lessons` lessons over TASKS scopes and `episodes` reported episodes; returns the lesson ids."""
    rng = random.Random(seed)
    events: list[Event] = []
    ids: list[str] = []
    for i in range(lessons):
        exp = Experience(f"working on task t{i % TASKS} case {i}", f"apply fix number {i}",
                         scope=Scope(task=f"t{i % TASKS}")).with_identity()
        ids.append(exp.id)
        events.append(Event("experience", exp.to_dict(), key=f"experience:{exp.id}"))
    by_task = [[e for j, e in enumerate(ids) if j % TASKS == t] for t in range(TASKS)]
    now = time.time() - episodes
    for j in range(episodes):
        eligible = by_task[j % TASKS]
        wanted = rng.sample(eligible, min(3, len(eligible)))
        held = [e for e in wanted if rng.random() < 0.1]
        episode = f"ep_bench{j:08d}"
        p = {e: (0.9 if e in wanted else 0.0) for e in eligible}
        data = {"id": episode, "context": {"task": f"t{j % TASKS}", "project": "p"}, "eligible": eligible,
                "injected": [e for e in wanted if e not in held], "held_out": held, "p": p}
        events.append(Event("episode", data, key=f"episode:{episode}", time=now + j))
        events.append(Event("outcome", {"episode": episode, "reward": rng.choice((1.0, -1.0)), "signal": None,
                                        "replace": False}, key=f"outcome:{episode}", time=now + j + 0.5))
    store = open_store(location)
    for start in range(0, len(events), 50_000):
        store.append(events[start:start + 50_000])
    store.close()
    return ids


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# Children compile to and load from __pycache__ as an installed package does, whatever this
# shell says (PYTHONDONTWRITEBYTECODE would make every start compile every module again).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


Sample = tuple[float, float]  # (wall ms, CPU ms)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


# Each child runs in a process group of its own: a Ctrl+C at the terminal reaches this process
# alone, which stops the child (`subprocess.run` kills it) instead of the child printing a
# KeyboardInterrupt traceback from wherever its import stood.
def _wall(argv: list[str], cwd: str | None = None) -> Sample:
    c0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=cwd, env=_ENV, process_group=0)
    return (time.perf_counter() - t0) * 1000, _children_cpu() - c0


def _inner(argv: list[str]) -> Sample:
    done = subprocess.run(argv, check=True, capture_output=True, text=True, env=_ENV, process_group=0)
    wall, cpu = done.stdout.split()[-2:]
    return float(wall), float(cpu)


def _row(label: str, samples: list[Sample], note: str = "") -> None:
    wall, cpu = [s[0] for s in samples], [s[1] for s in samples]
    print(f"{label:<56}{statistics.median(wall):>9.1f}{_pct(wall, 0.99):>9.1f}{statistics.median(cpu):>9.1f}"
          f"{len(samples):>6}  {note}", flush=True)


def _interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[Sample]]:
    """Each command `runs` times, interleaved so that a busy moment on the machine hits all alike."""
    out: dict[str, list[Sample]] = {name: [] for name in commands}
    for argv in commands.values():
        _wall(argv)  # compiles what is not yet in __pycache__
    for _ in range(runs):
        for name, argv in commands.items():
            out[name].append(_wall(argv))
    return out


def _fsync_floor(folder: str, reps: int) -> list[Sample]:
    """What one durable append costs on this disk: a JSON write (and an SQLite commit) waits for it."""
    fd = os.open(os.path.join(folder, "probe"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    samples = []
    try:
        for _ in range(reps):
            t0, c0 = time.perf_counter(), time.process_time()
            os.write(fd, b"x" * 300 + b"\n")
            os.fsync(fd)
            samples.append(((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000))
    finally:
        os.close(fd)
    return samples


def warm_episode_ms(location: str, reps: int) -> list[Sample]:
    """recall + report in one warm process on an existing store, in ms each."""
    lam = Lamar(location, k=3, seed=2)
    samples = []
    for i in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        rec = lam.recall({"task": f"t{i % TASKS}", "project": "p"})
        lam.report(rec.episode_id, 1.0 if i % 2 else -1.0)
        samples.append(((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000))
    lam.close()
    return samples


SECTIONS = ("start", "open", "hook", "warm", "cli", "quickstart")
# Past these a run goes on for days, or builds its stores in memory until it runs out.
MOST = {"--episodes": 1_000_000, "--lessons": 1_000, "--runs": 10_000, "--hook-runs": 10_000, "--reps": 100_000}


def main(argv: list[str] | None = None) -> int:
    """Print what a fresh process pays.

    Hooks and CLIs start a new interpreter per call, so what counts is the interpreter's start,
    `import lamar`, opening a store that already holds many episodes, and one recall + report.
    Side by side in one run: `python -c pass`, `import json, sqlite3`, `import lamar`; opening a
    store of N reported episodes over 50 lessons and answering the first recall (SQLite and JSON,
    with and without the engine's saved state); a fresh process per episode on SQLite (start,
    import, open, recall, report, exit); recall + report on a warm JSON and SQLite store as it
    grows; `lamar stats`, `ls`, `show`; and the quickstart. Milliseconds of wall-clock time and,
    beside them, of CPU time (user + system), which a busy machine inflates less. It asserts nothing.
    """
    parser = argparse.ArgumentParser(prog="python -m lamar.bench --cold", description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000, help="reported episodes in the opened stores")
    parser.add_argument("--lessons", type=int, default=50)
    parser.add_argument("--runs", type=int, default=15, help="fresh processes per start-up figure")
    parser.add_argument("--hook-runs", type=int, default=60, help="fresh processes per episode, on SQLite")
    parser.add_argument("--sizes", default="1000,10000,100000", help="store sizes for warm recall + report")
    parser.add_argument("--reps", type=int, default=200, help="warm recall + report pairs timed per size")
    parser.add_argument("--skip", default="", help=f"comma-separated sections to leave out: {','.join(SECTIONS)}")
    args = parser.parse_args(argv)
    sizes = counts(parser, "--sizes", args.sizes, most=MOST["--episodes"])
    skip = set(names(parser, "--skip", args.skip, SECTIONS)) if args.skip.strip() else set()
    if skip == set(SECTIONS):  # printed the header, timed nothing, and said 0
        parser.error(f"--skip leaves out every section ({','.join(SECTIONS)}), so nothing would be timed; "
                     "keep one")
    positive(parser, episodes=args.episodes, lessons=args.lessons, runs=args.runs, hook_runs=args.hook_runs,
             reps=args.reps)
    for flag, most in MOST.items():
        at_most(parser, flag, getattr(args, flag[2:].replace("-", "_")), most)
    py = sys.executable
    print(f"milliseconds; p50 = median; {args.lessons} lessons, {args.episodes} reported episodes unless said")
    print(f"{'what':<56}{'wall p50':>9}{'p99':>9}{'CPU p50':>9}{'runs':>6}")
    if "start" not in skip:
        starts = _interleaved({"pass": [py, "-c", "pass"], "base": [py, "-c", "import json, sqlite3"],
                               "lamar": [py, "-c", "import lamar"]}, args.runs)
        _row("python -c pass", starts["pass"])
        _row('python -c "import json, sqlite3"', starts["base"])
        extra = [statistics.median(s[i] for s in starts["lamar"]) - statistics.median(s[i] for s in starts["base"])
                 for i in (0, 1)]
        _row('python -c "import lamar"', starts["lamar"],
             f"{extra[0]:+.1f} ms wall, {extra[1]:+.1f} ms CPU over json, sqlite3 (p50)")
    with tempfile.TemporaryDirectory() as folder:
        stores = {kind: os.path.join(folder, f"cold.{kind}") for kind in ("db", "json")}
        ids: dict[str, list[str]] = {}
        if {"open", "hook", "cli"} - skip:
            for kind, location in stores.items():
                ids[kind] = populate(location, args.lessons, args.episodes)
        if "open" not in skip:
            for kind, location in stores.items():
                name = "SQLite" if kind == "db" else "JSON"
                first = _inner([py, "-c", OPEN, location])  # folds the whole log; its close saves the state
                _row(f"{name}: open + first recall, no saved state", [first], "the whole log folded, once")
                again = [_inner([py, "-c", OPEN, location]) for _ in range(args.runs)]
                _row(f"{name}: open + first recall, from the saved state", again, "timed in the process, after import")
        if "hook" not in skip:
            _wall([py, "-c", HOOK, stores["db"]])  # compiles the modules an episode needs
            hook = [_wall([py, "-c", HOOK, stores["db"]]) for _ in range(args.hook_runs)]
            _row("SQLite: a fresh process per episode", hook, "start, import, open, recall, report, exit")
            hook = [_wall([py, "-c", HOOK, stores["json"]]) for _ in range(max(5, args.hook_runs // 4))]
            _row("JSON: a fresh process per episode", hook, "start, import, open, recall, report, exit")
        if "cli" not in skip:
            for kind, location in stores.items():
                name = "SQLite" if kind == "db" else "JSON"
                for command in (["stats"], ["ls"], ["show", ids[kind][0]]):
                    argv = [py, "-m", "lamar.cli", "--store", location, *command]
                    _row(f"{name}: lamar {command[0]}", [_wall(argv) for _ in range(max(3, args.runs // 3))],
                         "start to exit")
    if "warm" not in skip:
        with tempfile.TemporaryDirectory() as folder:
            _row("fsync of one appended line: this disk's floor per write", _fsync_floor(folder, args.reps))
        for size in sizes:
            for kind in ("json", "db"):
                with tempfile.TemporaryDirectory() as folder:
                    location = os.path.join(folder, f"warm.{kind}")
                    populate(location, args.lessons, size)
                    name = "SQLite" if kind == "db" else "JSON"
                    _row(f"{name}: recall + report, warm, at {size} episodes", warm_episode_ms(location, args.reps))
    if "quickstart" not in skip:
        script = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"
        if script.exists():
            with tempfile.TemporaryDirectory() as folder:
                _row("examples/quickstart.py (1 500 episodes, JSON store)", [_wall([py, str(script)], cwd=folder)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
