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

import math
from collections.abc import Callable, Sequence

from lamar.gym import sweep as sweep_frame
from lamar.gym.family_report import captured_by_world, paired
from lamar.gym.family_run import run_family, spec
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
    seeds = sweep_frame.family_seeds(worlds, tuning)
    # The detector does not touch these; the fading mean is the peer each setting's drop is paired with.
    rows = run_family(seeds, [spec("none"), spec("oracle"), spec(FASTEST)], workers=workers)
    lines = [sweep_frame.title("The fall detector", seeds, tuning, gym_first_seed, gym_seeds),
             f"{'level/arming':<14}{'captured':>15}{'minus default':>16}{sweep_frame.HEADING}"]
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
            mine, gym = sweep_frame.run_setting(rows, name, seeds, gym_first_seed=gym_first_seed,
                                                gym_seeds=gym_seeds, workers=workers)
        finally:
            change.LEVEL, change.WATCH_AFTER = DEFAULT[:2]
            change.ChangeDetector._fire = fire  # type: ignore[method-assign]
            change.ChangeDetector.update = update  # type: ignore[method-assign]
        minus = "" if name == default else interval_text(paired(rows, name, default))
        lines.append(f"{name:<14}{interval_text(list(captured_by_world(rows, name).values())):>15}{minus:>16}"
                     + sweep_frame.columns(rows, name, mine, gym))
    lines.append(f"{FASTEST:<14}{interval_text(list(captured_by_world(rows, FASTEST).values())):>15}{'':>16}"
                 + sweep_frame.peer_columns(rows, FASTEST))
    lines += [("   level: the first statistic's level h; "
               "arming: injected episodes forming the reference before either moves;"),
              "   a third number caps the episodes per arm a restart takes from the excursion; a fourth, LOW@GROWN,",
              "   grows the level with the log of the injected episodes seen, from LOW at arming to h by GROWN.",
              *sweep_frame.NOTES]
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("python tools/detector_sweep.py", __doc__)
    parser.add_argument("--settings", type=lambda text: [setting(s) for s in text.split(",")],
                        default=[(8.0, 50, None, None), (12.0, 50, None, None), (24.0, 50, None, None),
                                 (16.0, 15, None, None), (12.0, 15, None, None)],
                        help="comma-separated LEVEL/ARMING[/CAP[/LOW@GROWN]], beside the default")
    args = sweep_frame.parse(parser, argv)
    print("\n".join(sweep(args.worlds, tuning=args.tuning_seeds, gym_first_seed=args.gym_first_seed,
                          settings=args.settings, workers=args.workers, gym_seeds=args.gym_seeds)))


if __name__ == "__main__":
    main()
