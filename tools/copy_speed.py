"""What a copy of a store costs, two code trees side by side: `lamar import` into a new SQLite file and the
copy's first `lamar stats`, and Python `transfer()` then its first `lamar stats` (docs/speed.md, "A copy of a store").

    cd /tmp && python /path/to/tools/copy_speed.py --episodes 16000 --runs 3 OLD_TREE NEW_TREE

Each tree is a folder holding `lamar/` (and `integrations/`), put first on `PYTHONPATH` of every process; run from
outside any checkout, since `python -m` puts the current folder first. Builds a store of that many reported
episodes over 40 lessons in a temporary folder, alternates the trees run by run, and prints the CPU seconds (least
of the runs) of each step and their ratio. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile

_TRANSFER = ("import sys; from lamar.store import open_store; from lamar.store.transfer import transfer; "
             "a, b = open_store(sys.argv[1]), open_store(sys.argv[2]); transfer(a, b); a.close(); b.close()")


def _cpu(command: list[str], tree: str, folder: str) -> float:
    """CPU seconds of running `command` to its end with `tree` first on its path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((tree, os.path.join(tree, "integrations")))}
    found = subprocess.run([sys.executable, "-c", "import lamar; print(lamar.__file__)"], env=env, cwd=folder,
                           capture_output=True, text=True, check=True).stdout
    if not os.path.realpath(found).startswith(os.path.realpath(tree)):
        raise SystemExit(f"{tree}: the processes import lamar from {found.strip()}; run from outside the checkout")
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env, cwd=folder)
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done.ru_utime - used.ru_utime + done.ru_stime - used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs=2, metavar="TREE")
    parser.add_argument("--episodes", type=int, default=16000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from lamar.bench.cold import populate

    folder = tempfile.mkdtemp(prefix="lamar-copy-speed-")
    try:
        source = os.path.join(folder, "source.db")
        populate(source, 40, args.episodes)
        steps = ("import", "import, then stats", "transfer()", "transfer(), then stats")
        seconds: dict[str, dict[str, list[float]]] = {tree: {step: [] for step in steps} for tree in args.trees}
        for run in range(args.runs):
            for number, tree in enumerate(args.trees):
                copy = os.path.join(folder, f"import-{run}-{number}.db")
                made = _cpu([sys.executable, "-m", "lamar.cli", "import", source, "--store", copy], tree, folder)
                read = _cpu([sys.executable, "-m", "lamar.cli", "stats", "--store", copy], tree, folder)
                seconds[tree]["import"].append(made)
                seconds[tree]["import, then stats"].append(made + read)
                copy = os.path.join(folder, f"transfer-{run}-{number}.db")
                made = _cpu([sys.executable, "-c", _TRANSFER, source, copy], tree, folder)
                read = _cpu([sys.executable, "-m", "lamar.cli", "stats", "--store", copy], tree, folder)
                seconds[tree]["transfer()"].append(made)
                seconds[tree]["transfer(), then stats"].append(made + read)
        old, new = args.trees
        print(f"{args.episodes} episodes, CPU seconds (least of {args.runs}): {old} | {new} | ratio")
        for step in steps:
            a, b = min(seconds[old][step]), min(seconds[new][step])
            print(f"  {step:24s} {a:6.2f} {b:6.2f}  x{b / a:.2f}")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
