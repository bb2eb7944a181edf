"""`python -m lamar.gym.peer_tuning`: the peers' tuning sweep, on seeds the gym never reports."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from lamar.bench.arguments import command, processes
from lamar.gym.config import GymConfig
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.metrics import column, mean_interval, runs_of
from lamar.gym.peers import SWEEP
from lamar.gym.runner import run_gym


def tune(seeds: int = 10, first_seed: int = 100, episodes: int = 8000, workers: int | None = None,
         **world: Any) -> str:
    """Run every candidate of `SWEEP` on the tuning seeds; a table with each family's best marked.

    The best is the highest mean of captured pre- and post-flip; the tuning seeds never overlap
    the reported seeds 0-19.
    """
    names = tuple(name for family in SWEEP.values() for name in family)
    result = run_gym(GymConfig(episodes=episodes, seeds=seeds, first_seed=first_seed, workers=workers,
                               policies=("none", "oracle", *names), sleep_at=(), **world))
    lines = [(f"peer tuning sweep: seeds {first_seed}-{first_seed + seeds - 1}, {episodes} episodes, "
              f"{world or 'defaults'}"),
             f"{'candidate':<28}{'captured pre':>16}{'captured post':>16}"]
    for members in SWEEP.values():
        scored = []
        for name in members:
            rows = runs_of(result.runs, name)
            pre, post = (mean_interval(column(rows, f"captured_{p}")) for p in ("pre", "post"))
            scored.append((pre[0] + post[0], name, pre, post))
        best = max(scored)[1]
        for _, name, pre, post in scored:
            mark = " <- best" if name == best else ""
            lines.append(f"{name:<28}{100 * pre[0]:>9.1f} ±{100 * pre[1]:4.1f}"
                         f"{100 * post[0]:>9.1f} ±{100 * post[1]:4.1f}{mark}")
    return "\n".join(lines)


def tune_family(worlds: int = 16, workers: int | None = None) -> str:
    """The same sweep on the family's tuning worlds (seeds from `TUNING_SEEDS`, never reported)."""
    from lamar.gym.family_run import run_family, spec

    seeds = range(TUNING_SEEDS, TUNING_SEEDS + worlds)
    rows = run_family(seeds, [spec("none"), spec("oracle")] + [spec(n) for f in SWEEP.values() for n in f],
                      workers=workers)
    lines = [f"peer tuning sweep on the family: tuning worlds {seeds.start}-{seeds.stop - 1}",
             f"{'candidate':<28}{'captured':>18}"]
    for members in SWEEP.values():
        scored = [(mean_interval([r["captured"] for r in rows if r["policy"] == name and r["captured"] is not None]),
                   name) for name in members]
        best = max(scored)[1]
        for (mean, half), name in scored:
            lines.append(f"{name:<28}{mean:>10.3f} ±{half:.3f}" + (" <- best" if name == best else ""))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m lamar.gym.peer_tuning",
        description="The peers' tuning sweep (needs lamar[peers]): every candidate on the gym's tuning seeds, or "
                    "with --family on the family's tuning worlds, each family's best marked (docs/gym.md, 'Peers').")
    parser.add_argument("workers", type=int, nargs="?", default=None, help="processes (default: one per CPU)")
    parser.add_argument("--family", type=int, metavar="N", default=None, help="tune on N of the family's tuning worlds")
    args = parser.parse_args(argv)
    if args.workers is not None and args.workers < 1:
        parser.error(f"workers must be at least 1; got {args.workers}")
    processes(parser, "workers", args.workers)
    if args.family is not None and not 1 <= args.family <= TUNING_SEEDS:  # as `python -m lamar.gym --family`
        parser.error(f"--family is the number of tuning worlds, from 1 to {TUNING_SEEDS:_}; got {args.family:_}")
    print(tune(workers=args.workers) if args.family is None else tune_family(args.family, workers=args.workers))


if __name__ == "__main__":
    sys.exit(command("python -m lamar.gym.peer_tuning", main))
