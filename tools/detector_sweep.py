"""The fall detector's level and arming, swept on the family and the gym (docs/gym.md, "The forgetting frontier").

Neither is a knob of `Policy`: this research script sets the detector's module constants before
the worker processes fork, one setting at a time, and reads each against the defaults, paired by world.
A third number caps the episodes per arm that a restart takes from the excursion (its means kept),
so that a lesson restarted on a bad streak is tried again sooner; a fourth, LOW@GROWN, makes the
level grow with the log of the injected episodes seen, from LOW at arming to the level by GROWN.
The engine has neither.

    python tools/detector_sweep.py --tuning-seeds 40 --gym-first-seed 100
    python tools/detector_sweep.py 60 --gym-first-seed 0 --settings 16/50,8/50,12/50,16/15
    python tools/detector_sweep.py 40 --tuning-seeds --settings 16.5/50/10,8/50/5
    python tools/detector_sweep.py 40 --tuning-seeds --gym-first-seed 1000 --gym-seeds 200
    python tools/detector_sweep.py 40 --tuning-seeds --settings 16.5/15//10@300
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections.abc import Callable, Sequence

from lamar.gym import run_gym
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.family_report import captured_by_world, forgetting, paired, wrong_drops
from lamar.gym.family_run import add_captured, run_family, spec
from lamar.gym.forgetting import FASTEST
from lamar.gym.metrics import interval_text
from lamar.policy import change

Young = tuple[float, int]  # the level just after arming, and the injected count by which it grows to LEVEL
Setting = tuple[float, int, float | None, Young | None]  # level, arming, restart cap, young level (None: none)
DEFAULT: Setting = (change.LEVEL, change.WATCH_AFTER, None, None)


def setting(text: str) -> Setting:
    """'LEVEL/WATCH_AFTER[/CAP[/YOUNG@GROWN]]', e.g. '16/50', '8/50/5' or '16.5/15//8@500'."""
    level, watch, *rest = text.split("/")
    cap = float(rest[0]) if rest and rest[0] else None
    young = None
    if len(rest) > 1:
        low, grown = rest[1].split("@")
        young = float(low), int(grown)
    return float(level), int(watch), cap, young


def name_of(level: float, watch: int, cap: float | None, young: Young | None = None) -> str:
    name = f"{level:g}/{watch}" + ("" if cap is None else f"/{cap:g}")
    return name if young is None else name + ("/" if cap is None else "") + f"/{young[0]:g}@{young[1]}"


def aged_update(level: float, watch: int, young: Young) -> Callable[..., object]:
    """`ChangeDetector.update` with a level that grows with the log of the injected episodes seen,
    from `young` just after arming to `level` at the count `young` names, so a young lesson's fall
    is seen sooner while an old lesson's false alarms stay as rare as at `level`."""
    update = change.ChangeDetector.update
    low, grown = young
    span = math.log(grown / watch)

    def _update(self: change.ChangeDetector, reward: float, injected: bool, sigma: float) -> object:
        seen = max(self.watched, watch)
        change.LEVEL = min(level, low + (level - low) * math.log(seen / watch) / span)
        return update(self, reward, injected, sigma)

    return _update


def capped_fire(cap: float) -> Callable[[change.ChangeDetector], tuple[float, float, float, float]]:
    """`ChangeDetector._fire`, handing the restart at most `cap` episodes of each arm of the
    excursion at the excursion's means; the detector's own reference is left as it was."""
    fire = change.ChangeDetector._fire

    def _fire(self: change.ChangeDetector) -> tuple[float, float, float, float]:
        w_in, s_in, w_out, s_out = fire(self)
        keep_in, keep_out = min(1.0, cap / w_in) if w_in else 1.0, min(1.0, cap / w_out) if w_out else 1.0
        return w_in * keep_in, s_in * keep_in, w_out * keep_out, s_out * keep_out

    return _fire


def sweep(worlds: int, *, tuning: bool, gym_first_seed: int, settings: Sequence[Setting],
          workers: int, gym_seeds: int = 20) -> list[str]:
    """The default setting's line, then one per other setting, each paired by world against it."""
    seeds = range(TUNING_SEEDS, TUNING_SEEDS + worlds) if tuning else range(worlds)
    # The detector does not touch these; the fading mean is the peer each setting's drop is paired with.
    rows = run_family(seeds, [spec("none"), spec("oracle"), spec(FASTEST)], workers=workers)
    lines = [(f"The fall detector on the family ({worlds} {'tuning' if tuning else 'reporting'} worlds, seeds "
              f"{seeds.start}-{seeds.stop - 1}) and the gym (seeds {gym_first_seed}-{gym_first_seed + gym_seeds - 1})"),
             (f"{'level/arming':<14}{'captured':>15}{'minus default':>16}{'fossil kept':>13}{'dropped after':>15}"
              f"{'wrong drops':>13}{f'dropped minus {FASTEST}':>26}{'gym pre / post':>17}{'gym fossil':>12}{'gym dropped':>13}")]
    default = name_of(*DEFAULT)
    fire = change.ChangeDetector._fire
    update = change.ChangeDetector.update
    for level, watch, cap, young in [DEFAULT, *(s for s in settings if s != DEFAULT)]:
        name = name_of(level, watch, cap, young)
        change.LEVEL, change.WATCH_AFTER = level, watch
        if cap is not None:
            change.ChangeDetector._fire = capped_fire(cap)  # type: ignore[method-assign,assignment]
        if young is not None:
            change.ChangeDetector.update = aged_update(level, watch, young)  # type: ignore[method-assign,assignment]
        try:
            mine = run_family(seeds, [spec(name, "lamar")], workers=workers)
            gym = run_gym(first_seed=gym_first_seed, seeds=gym_seeds, policies=("none", "lamar", "oracle"), workers=workers)
        finally:
            change.LEVEL, change.WATCH_AFTER = DEFAULT[:2]
            change.ChangeDetector._fire = fire  # type: ignore[method-assign]
            change.ChangeDetector.update = update  # type: ignore[method-assign]
        rows += mine
        add_captured(rows)
        minus = "" if name == default else interval_text(paired(rows, name, default))
        kept, drop = forgetting(mine)
        lamar = [row for row in gym.runs if row["policy"] == "lamar"]
        pre, post = (100 * statistics.mean(row[f"captured_{phase}"] for row in lamar) for phase in ("pre", "post"))
        share = 100 * statistics.mean(row["share_fossil_post"] for row in lamar)
        off = [row["fossil_off_latency"] for row in lamar if row["fossil_off_latency"] is not None]
        latency = f"{statistics.median(off):.0f}" + (f", never {len(lamar) - len(off)}" if len(off) < len(lamar) else "")
        lines.append(f"{name:<14}{interval_text(list(captured_by_world(rows, name).values())):>15}{minus:>16}{kept:>13}"
                     f"{drop:>15}{wrong_drops(mine):>13}{interval_text(paired(rows, name, FASTEST, 'fossil_drop'), digits=0):>26}"
                     f"{f'{pre:.1f} / {post:.1f}':>17}{f'{share:.2f}%':>12}{latency:>13}")
    fastest = [row for row in rows if row["policy"] == FASTEST]
    kept, drop = forgetting(fastest)
    lines.append(f"{FASTEST:<14}{interval_text(list(captured_by_world(rows, FASTEST).values())):>15}{'':>16}{kept:>13}"
                 f"{drop:>15}{wrong_drops(fastest):>13}")
    lines += ["   level: the first statistic's level h; arming: injected episodes forming the reference before either moves;",
              "   a third number caps the episodes per arm a restart takes from the excursion; a fourth, LOW@GROWN,",
              "   grows the level with the log of the injected episodes seen, from LOW at arming to h by GROWN.",
              f"   family columns as in python -m lamar.gym.forgetting (the last, paired by world with {FASTEST},",
              "   river's epsilon-greedy on a fading mean); gym: captured pre / post flip, the fossil's",
              "   slot share after the flip and task episodes until it is no longer injected (median)."]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python tools/detector_sweep.py", description=__doc__.splitlines()[0])
    parser.add_argument("worlds", type=int, nargs="?", default=40)
    parser.add_argument("--tuning-seeds", action="store_true", help="the family's tuning worlds")
    parser.add_argument("--gym-first-seed", type=int, default=100, help="the gym's first seed")
    parser.add_argument("--gym-seeds", type=int, default=20, help="how many gym seeds (default 20)")
    parser.add_argument("--settings", type=lambda text: [setting(s) for s in text.split(",")],
                        default=[(8.0, 50, None, None), (12.0, 50, None, None), (24.0, 50, None, None), (16.0, 15, None, None),
                                 (12.0, 15, None, None)],
                        help="comma-separated LEVEL/ARMING[/CAP[/LOW@GROWN]], beside the default")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    print("\n".join(sweep(args.worlds, tuning=args.tuning_seeds, gym_first_seed=args.gym_first_seed,
                          settings=args.settings, workers=args.workers, gym_seeds=args.gym_seeds)))


if __name__ == "__main__":
    main()
