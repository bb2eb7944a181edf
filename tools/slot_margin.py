"""The fall detector's level scaled by what a false alarm costs, a lesson's margin over the alternative it
displaces, swept on the family and the gym (docs/gym.md, "A level scaled by the slot's margin").

A false alarm restarts a lesson that still helps, and costs about its margin over what would take its slot for
the episodes it needs to earn the slot back; a lesson only a little better than its runner-up costs little to
restart. Each reported episode, every injected lesson's margin is its selection estimate in the episode's
context minus the best estimate among the eligible lessons the episode left out (0 at least: an empty slot is
worth nothing). Its detector then runs at LEVEL x min(1, margin / REF), never below LOW (both statistics scaled
alike); a lesson whose estimate falls towards the alternative after a flip meets a lower level as it falls. The
setting LOW@REF names both (REF in reward units). The engine has none of this: the research script replaces the
fold in this process before the worker processes fork.

    python tools/slot_margin.py 20 --tuning-seeds --settings 8@0.3,5@0.3 --workers 2
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from lamar.experience import Status
from lamar.gym import sweep as sweep_frame
from lamar.gym.family_report import Row, paired
from lamar.gym.metrics import interval_text
from lamar.policy import change, fold
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState

# LOW, the level's floor; REF, the margin (reward units) at and above which it is LEVEL; Z, standard errors
# the alternative's estimate is read below its point (a runner-up seen little is not taken at its luckiest)
Setting = tuple[float, float, float]


def setting(text: str) -> Setting:
    """'LOW@REF' or 'LOW@REF~Z', e.g. '8@0.3~1': a floor from 0 to the engine's level, a margin above 0, Z >= 0."""
    try:
        low_ref, _, z = text.partition("~")
        low, ref = (float(part) for part in low_ref.split("@"))
        gate = float(z) if z else 0.0
    except ValueError:
        low = ref = gate = math.nan
    if not (0.0 < low <= change.LEVEL and ref > 0.0 and gate >= 0.0):
        raise ValueError(
            f"a setting is LOW@REF[~Z], 0 < LOW <= {change.LEVEL:g}, REF > 0, Z >= 0 (e.g. 8@0.3~1); got {text!r}"
        )
    return low, ref, gate


def margin_fold(low: float, ref: float, gate: float) -> Callable[..., list[LessonState]]:
    """`fold.fold_outcome`, with each injected lesson's detector levels scaled by its margin over the alternative."""
    level, slow_level = change.LEVEL, change.SLOW_LEVEL

    def _fold(
        lesson: Callable[[str], LessonState | None],
        eligible: Iterable[str],
        injected: Iterable[str],
        p: Mapping[str, float],
        context: Mapping[str, str],
        reward: float,
        sigma: float,
        policy: Policy,
        n_active: int,
    ) -> list[LessonState]:
        chosen = set(injected)
        states = [(exp_id, lesson(exp_id)) for exp_id in eligible]
        live = [
            (exp_id, s) for exp_id, s in states if s is not None and s.experience.status is not Status.RETIRED
        ]
        # every estimate is read before any lesson folds this reward: the margins are the episode's own
        est = {exp_id: s.slices.estimate(s.arms, context, sigma) for exp_id, s in live}
        alternative = max(
            [
                0.0,
                *(
                    est[exp_id] - gate * sigma * math.sqrt(s.arms.spread)
                    for exp_id, s in live
                    if exp_id not in chosen and s.arms.w_in > 0.0 and s.arms.w_out > 0.0
                ),
            ]
        )
        touched = []
        try:
            for exp_id, state in live:
                factor = 1.0
                if exp_id in chosen and not state.arms.cold(policy.warmup):
                    factor = max(low / level, min(1.0, (est[exp_id] - alternative) / ref))
                change.LEVEL, change.SLOW_LEVEL = level * factor, slow_level * factor
                state.observe(reward, exp_id in chosen, p.get(exp_id, 0.0), sigma, policy, n_active, context)
                touched.append(state)
        finally:
            change.LEVEL, change.SLOW_LEVEL = level, slow_level
        return touched

    return _fold


@contextlib.contextmanager
def installed(chosen: Setting | None) -> Iterator[None]:
    """The fold scales the detector's levels by `chosen` while the block runs (None: the engine's fold)."""
    original = fold.fold_outcome
    if chosen is not None:
        fold.fold_outcome = margin_fold(*chosen)
    try:
        yield
    finally:
        fold.fold_outcome = original


def name_of(chosen: Setting) -> str:
    return f"{chosen[0]:g}@{chosen[1]:g}" + (f"~{chosen[2]:g}" if chosen[2] else "")


def drops_against_default(names: Sequence[str]) -> Callable[[Sequence[Row]], list[str]]:
    """The lines `against_peer` adds: each setting's world median drop minus the default's, paired by world."""

    def lines(rows: Sequence[Row]) -> list[str]:
        cells = [
            f"{name} {interval_text(paired(rows, name, 'default', 'fossil_drop'), digits=0)}"
            for name in names
        ]
        return ["   dropped minus default (task episodes, paired by world): " + "; ".join(cells)]

    return lines


def sweep(
    worlds: int,
    *,
    tuning: bool,
    gym_first_seed: int,
    settings: Sequence[Setting],
    workers: int,
    gym_seeds: int = 20,
) -> list[str]:
    """The default's line, then one per setting, each paired by world with it and with river-ts."""
    rows = [("default", functools.partial(installed, None))]
    rows += [(name_of(s), functools.partial(installed, s)) for s in settings]
    notes = [
        f"   margin: LOW@REF runs an injected lesson's detector at {change.LEVEL:g} x min(1, margin / REF), at least",
        "   LOW, its margin its estimate minus the best left-out eligible lesson's (at least 0), in reward units;",
    ]
    return sweep_frame.against_peer(
        "A level scaled by the slot's margin",
        "margin",
        12,
        rows,
        notes,
        worlds=worlds,
        tuning=tuning,
        gym_first_seed=gym_first_seed,
        gym_seeds=gym_seeds,
        workers=workers,
        after=drops_against_default([name for name, _ in rows[1:]]),
    )


def gym_only(settings: Sequence[Setting], *, gym_first_seed: int, gym_seeds: int, workers: int) -> list[str]:
    """The gym's columns alone, the default's and each setting's: a quick look before the family's runs."""
    import statistics

    from lamar.gym import run_gym

    lines = [
        f"A level scaled by the slot's margin on the gym (seeds {gym_first_seed}-{gym_first_seed + gym_seeds - 1})",
        f"{'margin':<12}{'gym pre / post':>17}{'gym fossil':>12}{'gym dropped':>13}",
    ]
    print("\n".join(lines), flush=True)
    for label, chosen in (("default", None), *((name_of(s), s) for s in settings)):
        with installed(chosen):
            result = run_gym(
                first_seed=gym_first_seed,
                seeds=gym_seeds,
                policies=("none", "lamar", "oracle"),
                workers=workers,
            )
        gym = [row for row in result.runs if row["policy"] == "lamar"]
        pre, post = (
            100 * statistics.mean(row[f"captured_{phase}"] for row in gym) for phase in ("pre", "post")
        )
        share = 100 * statistics.mean(row["share_fossil_post"] for row in gym)
        off = [row["fossil_off_latency"] for row in gym if row["fossil_off_latency"] is not None]
        lines.append(
            f"{label:<12}{f'{pre:.1f} / {post:.1f}':>17}"
            f"{f'{share:.2f}%':>12}{statistics.median(off) if off else '-':>13}"
        )
        print(lines[-1], flush=True)
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("python tools/slot_margin.py", __doc__ or "")
    parser.add_argument(
        "--settings",
        type=lambda text: [setting(s) for s in text.split(",")],
        default=[setting("8@0.3")],
        help="comma-separated LOW@REF, e.g. 8@0.3,5@0.3",
    )
    parser.add_argument("--gym-only", action="store_true", help="only the gym's columns (a quick look)")
    args = sweep_frame.parse(parser, argv)
    if args.gym_only:
        gym_only(
            args.settings, gym_first_seed=args.gym_first_seed, gym_seeds=args.gym_seeds, workers=args.workers
        )
        return
    print(
        "\n".join(
            sweep(
                args.worlds,
                tuning=args.tuning_seeds,
                gym_first_seed=args.gym_first_seed,
                settings=args.settings,
                workers=args.workers,
                gym_seeds=args.gym_seeds,
            )
        )
    )


if __name__ == "__main__":
    main()
