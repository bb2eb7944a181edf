"""What the research sweeps of tools/ share: their arguments, one setting's runs on the family and
the gym, the forgetting and gym columns each setting's line ends with, and a whole table of settings
paired with the best peer (docs/gym.md)."""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from lamar.bench.arguments import processes
from lamar.gym.config import MAX_SEEDS
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.family_report import Row, captured_by_world, forgetting, paired, wrong_drops
from lamar.gym.family_run import add_captured, run_family, spec
from lamar.gym.forgetting import FASTEST
from lamar.gym.metrics import interval_text, mean_interval

HEADING = (f"{'fossil kept':>13}{'dropped after':>15}{'wrong drops':>13}{f'dropped minus {FASTEST}':>26}"
           f"{'gym pre / post':>17}{'gym fossil':>12}{'gym dropped':>13}")
NOTES = [f"   other family columns as in python -m lamar.gym.forgetting (dropped minus {FASTEST}: paired by world with",
         "   river's epsilon-greedy on a fading mean); gym: captured pre / post flip, the fossil's",
         "   slot share after the flip and task episodes until it is no longer injected (median)."]


def parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The arguments every sweep takes; each adds its own `--settings`."""
    out = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    out.add_argument("worlds", type=int, nargs="?", default=40)
    out.add_argument("--tuning-seeds", action="store_true", help="the family's tuning worlds")
    out.add_argument("--gym-first-seed", type=int, default=100, help="the gym's first seed")
    out.add_argument("--gym-seeds", type=int, default=20, help="how many gym seeds (default 20)")
    out.add_argument("--workers", type=int, default=2)
    return out


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """`parser`'s arguments (one made by `parser()`), refused by `bounded` before any run."""
    args = parser.parse_args(argv)
    bounded(parser, "worlds", worlds=args.worlds, workers=args.workers, gym_first_seed=args.gym_first_seed,
            gym_seeds=args.gym_seeds)
    return args


def bounded(parser: argparse.ArgumentParser, worlds_flag: str, *, worlds: int, workers: int, gym_first_seed: int,
            gym_seeds: int = 20) -> None:
    """An argument error before the family runs, not a table of dashes or a traceback after it: no
    world, or more than the reporting seeds; a gym seed count or first seed the gym refuses; fewer
    than 1 or more than 4 worker processes per CPU."""
    if not 1 <= worlds <= TUNING_SEEDS:
        parser.error(f"{worlds_flag} is the number of worlds to draw, from 1 to {TUNING_SEEDS:_} (the reported worlds "
                     f"stop where the tuning worlds start); got {worlds:_}")
    if workers < 1:
        parser.error(f"--workers must be at least 1; got {workers}")
    processes(parser, "--workers", workers)
    if not 1 <= gym_seeds <= MAX_SEEDS:
        parser.error(f"--gym-seeds is from 1 to {MAX_SEEDS:_}; got {gym_seeds:_}")
    if gym_first_seed < 0:
        parser.error(f"--gym-first-seed is a seed, at least 0; got {gym_first_seed}")


def family_seeds(worlds: int, tuning: bool) -> range:
    return range(TUNING_SEEDS, TUNING_SEEDS + worlds) if tuning else range(worlds)


def title(subject: str, seeds: range, tuning: bool, gym_first_seed: int, gym_seeds: int) -> str:
    return (f"{subject} on the family ({len(seeds)} {'tuning' if tuning else 'reporting'} worlds, seeds "
            f"{seeds.start}-{seeds.stop - 1}) and the gym (seeds {gym_first_seed}-{gym_first_seed + gym_seeds - 1})")


def run_setting(rows: list[Row], name: str, seeds: range, *, gym_first_seed: int, gym_seeds: int,
                workers: int) -> tuple[list[Row], list[Row]]:
    """lamar as the process stands now (a sweep patches it first), on the family under `name` (its
    rows joined to `rows`, every row's captured share refreshed) and on the gym: both rows."""
    from lamar.gym import run_gym

    mine = run_family(seeds, [spec(name, "lamar")], workers=workers)
    gym = run_gym(first_seed=gym_first_seed, seeds=gym_seeds, policies=("none", "lamar", "oracle"), workers=workers)
    rows += mine
    add_captured(rows)
    return mine, [row for row in gym.runs if row["policy"] == "lamar"]


def columns(rows: Sequence[Row], name: str, mine: Sequence[Row], gym: Sequence[Row]) -> str:
    """The columns of `HEADING` for one setting: its forgetting on the family, its drop paired with
    the fastest peer's, and its gym rows' captured shares, fossil share and drop."""
    kept, drop = forgetting(mine)
    pre, post = (100 * statistics.mean(row[f"captured_{phase}"] for row in gym) for phase in ("pre", "post"))
    share = 100 * statistics.mean(row["share_fossil_post"] for row in gym)
    off = [row["fossil_off_latency"] for row in gym if row["fossil_off_latency"] is not None]
    latency = f"{statistics.median(off):.0f}" + (f", never {len(gym) - len(off)}" if len(off) < len(gym) else "")
    return (f"{kept:>13}{drop:>15}{wrong_drops(mine):>13}"
            f"{interval_text(paired(rows, name, FASTEST, 'fossil_drop'), digits=0):>26}"
            f"{f'{pre:.1f} / {post:.1f}':>17}{f'{share:.2f}%':>12}{latency:>13}")


def peer_columns(rows: Sequence[Row], peer: str) -> str:
    """A peer's forgetting columns, under `HEADING`'s first three."""
    theirs = [row for row in rows if row["policy"] == peer]
    kept, drop = forgetting(theirs)
    return f"{kept:>13}{drop:>15}{wrong_drops(theirs):>13}"


@contextmanager
def slice_spread(tau: float) -> Iterator[None]:
    """The selection's prior spread of a slice's deviation from the lesson-wide lift set to `tau` while
    the block runs (worker processes forked inside it see it too)."""
    from lamar.policy import features

    default = features.SLICE_SPREAD
    features.SLICE_SPREAD = tau
    try:
        yield
    finally:
        features.SLICE_SPREAD = default


PEER = "river-ts"  # the best peer by reward, which goal 1 pairs lamar with


Patch = Callable[[], AbstractContextManager[object]]  # installs one setting of a sweep while its block runs


def against_peer(subject: str, label: str, width: int, settings: Sequence[tuple[str, Patch]],
                 notes: Sequence[str], *, worlds: int, tuning: bool, gym_first_seed: int, gym_seeds: int,
                 workers: int, after: Callable[[Sequence[Row]], list[str]] | None = None) -> list[str]:
    """A sweep's table: one line per setting (`name`, the patch that installs it; the first is
    "default"), each run under its patch and paired by world with the default and with `PEER`,
    then `PEER`'s and the fastest peer's lines; `notes` explain the `label` column, and `after`
    adds lines read from all the family's rows."""
    seeds = family_seeds(worlds, tuning)
    rows = run_family(seeds, [spec("none"), spec("oracle"), spec(FASTEST), spec(PEER)], workers=workers)
    lines = [title(subject, seeds, tuning, gym_first_seed, gym_seeds),
             f"{label:<{width}}{'captured':>14}{'minus default':>16}{f'minus {PEER}':>25}{HEADING}"]
    for name, patch in settings:
        with patch():
            mine, gym = run_setting(rows, name, seeds, gym_first_seed=gym_first_seed, gym_seeds=gym_seeds,
                                    workers=workers)
        minus = "" if name == "default" else interval_text(paired(rows, name, "default"))
        against = paired(rows, name, PEER)
        low = mean_interval(against)[0] - mean_interval(against)[1]
        lines.append(f"{name:<{width}}{interval_text(list(captured_by_world(rows, name).values())):>14}{minus:>16}"
                     f"{interval_text(against) + f' ({low:+.3f})':>25}" + columns(rows, name, mine, gym))
        print(lines[-1], flush=True)
    for peer in (PEER, FASTEST):
        lines.append(f"{peer:<{width}}{interval_text(list(captured_by_world(rows, peer).values())):>14}{'':>16}"
                     f"{'':>25}" + peer_columns(rows, peer))
    return [*lines, *notes,
            f"   minus {PEER}: paired by world, with the lower end of its 95% interval (goal 1 asks it above -0.01);",
            *NOTES, *(after(rows) if after is not None else [])]
