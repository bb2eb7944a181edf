"""What scrubbing a recall's context costs: the speed benchmark's recall + report median in this tree, in this
tree with every context value scrubbed in full (no pre-filter), and in an older checkout, side by side.

    python tools/context_scrub_speed.py --against OLD_CHECKOUT [--rounds 2]

Each runs `python -m lamar.bench --sizes 10,10000 --backends memory --eligible 6 --reps 3000` in a fresh
process, in turns, so a busy machine slows them alike; a figure is the median of the rounds' medians.
Figures go to docs/guarantees.md ("A recall's context").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ["--sizes", "10,10000", "--backends", "memory", "--eligible", "6", "--reps", "3000"]
# The full scrub on every value: the pre-filter replaced from outside, for this run only.
_UNFILTERED = (
    "import sys, lamar.safety.context_values as c; c.may_hold_secret = lambda text: True; "
    "from lamar.bench.speed import main; sys.exit(main(sys.argv[1:]))"
)


def _run(tree: Path, code: list[str], out: str) -> dict[int, dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'integrations'}"}
    subprocess.run(
        [sys.executable, *code, *BENCH, "--json", out], env=env, check=True, stdout=subprocess.DEVNULL
    )
    rows = json.loads(Path(out).read_text(encoding="utf-8"))
    rows = rows["rows"] if isinstance(rows, dict) else rows
    return {row["experiences"]: row for row in rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "--against", type=Path, required=True, help="an older checkout: the code before the change"
    )
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    runs = {
        "before (--against)": (args.against, ["-m", "lamar.bench"]),
        "scrub every value": (ROOT, ["-c", _UNFILTERED]),
        "pre-filter + scrub": (ROOT, ["-m", "lamar.bench"]),
    }
    seen: dict[str, list[dict[int, dict[str, float]]]] = {name: [] for name in runs}
    with tempfile.TemporaryDirectory() as folder:
        for round_ in range(args.rounds):
            for i, (name, (tree, code)) in enumerate(runs.items()):
                seen[name].append(_run(tree, code, os.path.join(folder, f"rows{round_}_{i}.json")))
    print("recall + report median, microseconds (memory store, 6 eligible, 3000 episodes; median of rounds)")
    print(f"{'lessons':>8}" + "".join(f"{name:>22}" for name in runs))
    for n in (10, 10_000):
        cells = [statistics.median(r[n]["episode_median_us"] for r in seen[name]) for name in runs]
        print(f"{n:>8}" + "".join(f"{cell:>22.0f}" for cell in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
