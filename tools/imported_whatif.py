"""What `lamar whatif` costs on a store filled through `store.append` (an importer, a copy), which no engine
saved a state of: CPU of fresh processes with the state each time removed, as every run paid while no reader
saved it, against later runs after the first saved it. Prints the figures and their ratio; asserts nothing.

    python tools/imported_whatif.py --episodes 40000 --runs 3
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from lamar.whatif.bench import imported_store


def _cpu(command: list[str], env: dict[str, str]) -> float:
    """CPU seconds of running `command` to its end in a fresh process."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.ru_utime - used.ru_utime + done.ru_stime - used.ru_stime


def _forget_state(path: Path) -> bool:
    """Remove the engine's saved state from the SQLite file; whether there was one."""
    with sqlite3.connect(path) as db:
        (held,) = db.execute("SELECT count(*) FROM state").fetchone()
        db.execute("DELETE FROM state")
    db.close()
    return bool(held)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=40_000, help="episodes of the gym's world (default 40 000)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind (median shown)")
    args = parser.parse_args(argv)
    if args.episodes < 100 or args.runs < 1:
        parser.error("--episodes is at least 100 (the gym's floor) and --runs at least 1")
    with tempfile.TemporaryDirectory(prefix="lamar-imported-") as folder:
        path = Path(folder) / "imported.db"
        imported_store(path, args.episodes)
        env = {**os.environ, "XDG_CACHE_HOME": str(Path(folder) / "cache")}
        whatif = [sys.executable, "-m", "lamar.cli", "whatif", "--store", str(path)]
        _cpu(whatif, env)  # the what-if fold cached, so that both kinds of run differ by the engine's fold alone
        unsaved, saved = [], []
        for _ in range(args.runs):  # taking turns, so that the machine's drift falls on both
            found = _forget_state(path)
            unsaved.append(_cpu(whatif, env))
            saved.append(_cpu(whatif, env))
            if not found:
                raise SystemExit("no run saved the engine's state: every run folds the whole log")
        events = sqlite3.connect(path).execute("SELECT count(*) FROM events").fetchone()[0]
        before, after = statistics.median(unsaved), statistics.median(saved)
        print(f"{args.episodes} episodes ({events} events) appended through store.append; CPU s of a fresh "
              f"`lamar whatif`, median of {args.runs}:")
        print(f"  no saved state (every run, while no reader saved it)  {before:.2f}")
        print(f"  after a run saved it                                   {after:.2f}")
        print(f"  ratio {before / after:.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
