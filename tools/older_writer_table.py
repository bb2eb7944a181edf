"""What a first what-if read costs after a Lamar from before the episode table's sums wrote to the
same SQLite file: CPU of one read of `episodes()` and of `episode_counts()` in this process.
Usage: python tools/older_writer_table.py [--episodes 20000] [--appended 10] [--runs 5] [--older afacd17]"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lamar.store import open_store
from lamar.whatif.bench import build_store

# The older Lamar is the last commit before the table had sums (it folds events into the table and
# moves the seq it folds through, summing nothing), exported with `git archive` and run in a
# process of its own: an engine over the file that recalls and reports `appended` episodes, then
# closes (saving its state, which brings the table up to date the way that version did).
OLDER = "afacd17"
_APPEND = """
import sys
from lamar import Lamar
with Lamar(sys.argv[1], k=3, seed=7) as lam:
    for n in range(int(sys.argv[2])):
        rec = lam.recall({"task": f"t{n % 5}"})
        lam.report(rec.episode_id, "shipped" if n % 3 else "corrected")
"""


def older_lamar(commit: str, folder: Path) -> Path:
    """The `lamar` package as of `commit`, exported into `folder`; the folder to put on the path."""
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).parent).stdout.strip()
    archive = subprocess.run(["git", "archive", commit, "lamar"], capture_output=True, check=True, cwd=root).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def append_as_older(path: Path, older: Path, episodes: int) -> None:
    env = {**os.environ, "PYTHONPATH": str(older)}
    subprocess.run([sys.executable, "-c", _APPEND, str(path), str(episodes)], env=env, check=True,
                   cwd=older)  # the older package first: not this checkout's


def read_cpu(path: Path, counts: bool) -> tuple[float, bool]:
    """(CPU seconds, whether the table was read) of one read of the table, in this process."""
    store = open_store(str(path))
    try:
        started = time.process_time()
        table = store.episode_counts() if counts else store.episodes()  # type: ignore[attr-defined]
        return time.process_time() - started, table is not None
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=20000)
    parser.add_argument("--appended", type=int, default=10, help="episodes the older Lamar writes each run")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--older", default=OLDER, help="the commit of the older Lamar")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        source, older = Path(tmp) / "source.db", older_lamar(args.older, Path(tmp))
        build_store(source, args.episodes)
        rows: dict[str, list[float]] = {}
        for run in range(args.runs):
            for counts in (False, True):
                name = "episode_counts()" if counts else "episodes()"
                path = Path(tmp) / f"run{run}.db"
                for part in Path(tmp).glob("run*"):
                    part.unlink()
                shutil.copy(source, path)
                seconds, read = read_cpu(path, counts)
                rows.setdefault(f"{name}, the table as this Lamar left it", []).append(seconds)
                append_as_older(path, older, args.appended)
                seconds, read = read_cpu(path, counts)
                assert read, "the table was not read after the older Lamar's write"
                rows.setdefault(f"{name}, first read after the older Lamar wrote", []).append(seconds)
                seconds, read = read_cpu(path, counts)
                rows.setdefault(f"{name}, the read after that", []).append(seconds)
        print(f"{args.episodes} episodes; the older Lamar ({args.older}) appends {args.appended} each run; "
              f"CPU s of one read in this process, median of {args.runs} (min-max)\n")
        print("read | CPU s | min | max\n---|---|---|---")
        for name, seconds in rows.items():
            print(f"{name} | {statistics.median(seconds):.3f} | {min(seconds):.3f} | {max(seconds):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
