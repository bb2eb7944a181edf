"""What a `retire_dropped` proposal is worth: on the family of drawn worlds, the lessons sleep would propose
retiring as dropped at each world's end, by their truth then (docs/sleep.md, "A lesson the selection dropped").

    python tools/dropped_truth.py [WORLDS] [--first-seed S] [--workers W]
"""

from __future__ import annotations

import argparse

from lamar.gym.family_run import run_family, spec


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("worlds", nargs="?", type=int, default=60)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.worlds)
    rows = run_family(seeds, [spec("lamar")], workers=args.workers)
    kinds = ("harmful", "inert", "helpful", "split")
    counts = {kind: sum(row[f"dropped_{kind}"] for row in rows) for kind in kinds}
    total = sum(counts.values())
    worlds = sum(1 for row in rows if any(row[f"dropped_{kind}"] for kind in kinds))
    lift = sum(row["dropped_helpful_lift"] for row in rows)
    print(f"{total} retire_dropped proposals at the end of {len(rows)} worlds (in {worlds} of them)")
    print(f"  {'truly':<14}{'proposals':>10}{'share':>8}{'injected in all, mean':>23}")
    for kind in kinds:
        share = counts[kind] / total if total else 0.0
        injected = sum(row[f"dropped_{kind}_injected"] for row in rows) / counts[kind] if counts[kind] else 0.0
        print(f"  {kind:<14}{counts[kind]:>10}{share:>8.1%}{injected:>23.1f}")
    if counts["helpful"]:
        print(f"  the helpful ones' mean true lift: {lift / counts['helpful']:+.3f}")
    helpful = sum(row["helpful"] for row in rows)
    print(f"lessons truly helpful at the end (split apart): {helpful}; proposed for retiring: {counts['helpful']}")


if __name__ == "__main__":
    main()
