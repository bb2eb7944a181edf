"""`python -m lamar.gym.forgetting`: the forgetting frontier on the family: lamar at several values of
`discount` beside river's Thompson sampling and its epsilon-greedy on a fading mean (docs/gym.md)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from lamar._errors import LamarError
from lamar.arguments import policy
from lamar.bench.arguments import command, processes
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.family_report import captured_by_world, forgetting, forgetting_paired, paired, wrong_drops
from lamar.gym.family_run import run_family, spec
from lamar.gym.metrics import interval_text, mean_interval

DISCOUNTS: tuple[float, ...] = (1.0, 0.999, 0.998, 0.995)
PEERS: tuple[str, ...] = ("river-ts", "river-e.1f")
FASTEST = "river-e.1f"  # the fading mean: the peer that forgets fastest

_ABOUT = """lamar at several values of `discount` (its selection model's forgetting), beside river's
Thompson sampling (the best peer by reward) and its epsilon-greedy on a fading mean (the fastest
to forget); docs/gym.md, "The forgetting frontier". Needs river (the peers extra).
Tune on --tuning-seeds; the reporting worlds are read once."""


def label(discount: float) -> str:
    return "lamar" if discount == 1.0 else f"lamar discount={discount:g}"


def frontier(worlds: int, *, tuning: bool, discounts: Sequence[float] = DISCOUNTS, workers: int | None = None) -> str:
    """Captured share against fossil kept and episodes until dropped, one line per setting and peer;
    each lamar setting paired by world against lamar's default and against river-ts."""
    started = time.time()
    seeds = range(TUNING_SEEDS, TUNING_SEEDS + worlds) if tuning else range(worlds)
    lamars = [spec(label(d), "lamar", **({} if d == 1.0 else {"discount": d})) for d in discounts]
    rows = run_family(seeds, [spec("none"), spec("oracle"), *lamars, *(spec(p) for p in PEERS)], workers=workers)
    lines = [(f"The forgetting frontier on the family: {worlds} worlds ({'tuning' if tuning else 'reporting'} seeds "
              f"{seeds.start}-{seeds.stop - 1})"),
             (f"{'policy':<26}{'captured':>15}{'minus lamar':>16}{'minus river-ts':>17}{'lower end':>11}"
              f"{'fossil kept':>13}{'dropped after':>15}{'wrong drops':>13}{f'kept minus {FASTEST}':>24}"
              f"{f'dropped minus {FASTEST}':>25}")]
    names = [s[0] for s in lamars]
    for name in names + list(PEERS):
        mine = [row for row in rows if row["policy"] == name]
        kept, drop = forgetting(mine)
        own = interval_text(list(captured_by_world(rows, name).values()))
        minus = "" if name == "lamar" or "lamar" not in names else interval_text(paired(rows, name, "lamar"))
        versus = paired(rows, name, "river-ts") if name != "river-ts" else []
        mean, half = mean_interval(versus) if versus else (0.0, 0.0)
        kept_minus, drop_minus = "", ""  # the fastest is not paired with itself
        if name != FASTEST:
            kept_diff, drop_diff = forgetting_paired(rows, name, FASTEST)
            kept_minus, drop_minus = interval_text(kept_diff, 100, 1), interval_text(drop_diff, digits=0)
        lines.append(f"{name:<26}{own:>15}{minus:>16}{interval_text(versus) if versus else '':>17}"
                     f"{f'{mean - half:+.3f}' if versus else '':>11}{kept:>13}{drop:>15}{wrong_drops(mine):>13}"
                     f"{kept_minus:>24}{drop_minus:>25}")
    lines += ["   paired differences by world (mean ± 95% interval); lower end: of the difference with river-ts.",
              ("   fossil kept, dropped after and wrong drops as in the family's table "
               "(python -m lamar.gym --family N --peers);"),
              f"   minus {FASTEST}: paired by world, over the worlds where both used a fossil (kept in points).",
              f"   elapsed: {time.time() - started:.0f} s wall clock"]
    return "\n".join(line.rstrip() for line in lines)


def _discounts(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"takes numbers in (0, 1], comma separated (e.g. 1,0.995); got {text!r}") from None


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m lamar.gym.forgetting", description=_ABOUT)
    parser.add_argument("worlds", type=int, nargs="?", default=40, help="drawn worlds (default 40)")
    parser.add_argument("--tuning-seeds", action="store_true", help="draw the worlds from the tuning seeds")
    parser.add_argument("--discounts", type=_discounts, default=DISCOUNTS,
                        help=f"comma-separated values of discount (default {','.join(f'{d:g}' for d in DISCOUNTS)})")
    parser.add_argument("--workers", type=int, default=None, help="processes (default: one per CPU)")
    args = parser.parse_args(argv)
    if not 1 <= args.worlds <= TUNING_SEEDS:
        parser.error(f"worlds is the number of worlds to draw, from 1 to {TUNING_SEEDS:_} (the reported worlds "
                     f"stop where the tuning worlds start); got {args.worlds:_}")
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers must be at least 1; got {args.workers}")
    processes(parser, "--workers", args.workers)
    if not args.discounts or len(set(args.discounts)) != len(args.discounts):
        parser.error(f"--discounts takes distinct values, comma separated; got {args.discounts}")
    for discount in args.discounts:
        try:
            policy({"discount": discount})  # refused now, not by the first run's worker
        except LamarError as exc:
            parser.error(f"--discounts: {exc}")
    print(frontier(args.worlds, tuning=args.tuning_seeds, discounts=args.discounts, workers=args.workers))


if __name__ == "__main__":
    sys.exit(command("python -m lamar.gym.forgetting", main))
