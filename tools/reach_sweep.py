"""The evidence coin's reach rule, on and off, at several coins: reward, proof and what-if coverage
side by side (docs/whatif.md, "Coverage on the gym").

The reach rule (`lamar.policy.choose.coin`) flips a wanted lesson's coin only while its verdict is
within reach, judged on the lesson's estimated lift. That concentrates the coin on lessons a proof
can reach, and it makes the log adaptive: how many episodes carry a coin depends on their own
outcomes. This research script switches the rule off (a coin whenever a verdict is undecided)
with `lamar.whatif.check.reach_rule` before the worker processes fork, and reads each setting on
the same worlds:

- the gym: captured pre / post flip, the coin's direct price (held-out lessons' effects), helpful
  lessons of record by e-BH at the end;
- the family: captured share, paired by world against the first setting;
- the volume project: the median week a +0.2 lesson is first read "helps", solo and in a team;
- what-if: how often the doubly robust 95% interval (one reading) holds the truth, over every alternative
  of `python -m lamar.whatif.check`, and the alternative it holds least often.

    python tools/reach_sweep.py --gym-first-seed 100 --tuning-seeds
    python tools/reach_sweep.py --gym-first-seed 0 --worlds 60 --settings on/0.04,off/0.02,off/0.03,off/0.04
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

from lamar.audit.summary import clopper_pearson
from lamar.gym import run_gym
from lamar.gym import sweep as sweep_frame
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.family_report import captured_by_world, paired
from lamar.gym.family_run import add_captured, run_family, spec
from lamar.gym.metrics import interval_text
from lamar.gym.volume import SOLO, TEAM, proven_episodes
from lamar.whatif.check import coverage_rows, reach_rule, summarize

Setting = tuple[bool, float]  # (reach rule on, holdout)


def setting(text: str) -> Setting:
    """'on/0.04' or 'off/0.02'."""
    rule, q = text.split("/")
    if rule not in ("on", "off"):
        raise argparse.ArgumentTypeError(f"a setting is on/Q or off/Q; got {text!r}")
    return rule == "on", float(q)


def name(value: Setting) -> str:
    return f"{'on' if value[0] else 'off'}/{value[1]:g}"


def sweep(settings: Sequence[Setting], *, worlds: int, tuning: bool, gym_first_seed: int, workers: int,
          gym_seeds: int = 20, whatif_seeds: int = 20, volume_seeds: int = 10, episodes: int = 8000,
          volume_episodes: int = 60_000) -> list[str]:
    """One line per setting; the family column is paired against the first setting."""
    seeds = range(TUNING_SEEDS, TUNING_SEEDS + worlds) if tuning else range(worlds)
    rows = run_family(seeds, [spec("none"), spec("oracle")], workers=workers)  # the coin does not touch them
    gym_range = f"{gym_first_seed}-{gym_first_seed + gym_seeds - 1}"
    lines = [(f"The reach rule on and off: gym seeds {gym_range} (what-if: the first {whatif_seeds}), family "
              f"{'tuning' if tuning else 'reporting'} worlds {seeds.start}-{seeds.stop - 1}, "
              f"{volume_seeds} volume projects"),
             (f"{'rule/coin':<11}{'gym pre / post':>16}{'price':>12}{'e-BH':>6}{'family':>15}{'minus first':>15}"
              f"{'weeks solo / team':>19}{'what-if covered':>23}{'least covered':>26}")]
    first = name(settings[0])
    for value in settings:
        label = name(value)
        on, q = value
        with reach_rule(on):
            mine = run_family(seeds, [spec(label, "lamar", holdout=q)], workers=workers)
            gym = run_gym(first_seed=gym_first_seed, seeds=gym_seeds, episodes=episodes,
                          policies=("none", "lamar", "oracle"), tuning=(("holdout", q),), workers=workers)
            proven = proven_episodes(volume_seeds, volume_episodes, workers, (("holdout", q),))
            covered = [row for row in coverage_rows(range(gym_first_seed, gym_first_seed + whatif_seeds), episodes, 2,
                                                    tuning={"holdout": q})
                       if row["estimator"] == "dr" and row["interval"] == "95%"]
        rows += mine
        add_captured(rows)
        lamar = [row for row in gym.runs if row["policy"] == "lamar"]
        pre, post = (100 * statistics.fmean(row[f"captured_{p}"] for row in lamar) for p in ("pre", "post"))
        price = " / ".join(f"{100 * statistics.fmean(row[f'price_{p}'] for row in lamar):.1f}" for p in ("pre", "post"))
        ebh = statistics.fmean(row["ebh_helps_end"] for row in lamar)
        minus = "" if label == first else interval_text(paired(rows, label, first))
        done = sorted(e for e in proven if e is not None)
        median = done[len(proven) // 2] if len(proven) // 2 < len(done) else None
        weeks = "never" if median is None else f"{median / SOLO:.0f} / {median / TEAM:.1f}"
        total = summarize(covered, ("estimator",))[0]
        low, high = clopper_pearson(total.covered, total.n)
        least = min(summarize(covered, ("policy",)), key=lambda c: c.rate)
        lines.append(f"{label:<11}{f'{pre:.1f} / {post:.1f}':>16}{price:>12}{ebh:>6.2f}"
                     f"{interval_text(list(captured_by_world(rows, label).values())):>15}{minus:>15}{weeks:>19}"
                     f"{f'{100 * total.rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}]':>23}"
                     f"{f'{least.key[0]} {least.covered}/{least.n}':>26}")
    lines += ["   rule/coin: the reach rule on or off, and the evidence coin q; gym: captured % of the oracle's gain",
              "   pre / post flip; price: the coin's direct price, captured points; e-BH: helpful lessons of record",
              "   at the end, of 3; family: captured share, and paired by world against the first line; weeks: the",
              "   median week a +0.2 lesson is first read helps; what-if: doubly robust one-n 95% intervals over every",
              "   alternative (success and reward), with Clopper-Pearson's 95% interval, and the least covered one."]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python tools/reach_sweep.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=int, default=40, help="family worlds (default 40)")
    parser.add_argument("--tuning-seeds", action="store_true", help="the family's tuning worlds")
    parser.add_argument("--gym-first-seed", type=int, default=100, help="the gym's and what-if's first seed")
    parser.add_argument("--settings", type=lambda text: [setting(s) for s in text.split(",")],
                        default=[(True, 0.04), (False, 0.02), (False, 0.03), (False, 0.04)],
                        help="comma-separated on/Q or off/Q (default on/0.04,off/0.02,off/0.03,off/0.04)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    sweep_frame.bounded(parser, "--worlds", worlds=args.worlds, workers=args.workers,
                        gym_first_seed=args.gym_first_seed)
    print("\n".join(sweep(args.settings, worlds=args.worlds, tuning=args.tuning_seeds,
                          gym_first_seed=args.gym_first_seed, workers=args.workers)))


if __name__ == "__main__":
    main()
