"""Trying a dropped lesson again sooner: Thompson's noise widened by sqrt(1 + U / T) for a lesson left unchosen
for U reported episodes of its scope, swept on the family and the gym (docs/sleep.md, "A lesson the selection
dropped").

A lesson dropped on a few unlucky tries is chosen again only as often as its draw beats the others', which for
an estimate far below zero is almost never; widening its noise the longer it waits tries it again, at the price
of trying the harmful lessons the selection was right to drop. The draw's centre and its random numbers are the
engine's, so a world's difference is the lever's alone. The engine has none of this: the research script
installs it in this process before the worker processes fork.

    python tools/idle_draw.py 20 --tuning-seeds --settings 100,400 --workers 1
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
import sys
from collections.abc import Iterator, Mapping, Sequence

from lamar.gym import sweep as sweep_frame
from lamar.policy import choose
from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState


def _ranked(waiting: float, eligible: list[LessonState], context: Mapping[str, str], sigma: float, policy: Policy,
            rng: random.Random) -> list[tuple[float, LessonState]]:
    """`choose.ranked`, each warm lesson's noise widened by how long it has gone unchosen."""
    rows = []
    for state in eligible:
        draw = state.slices.sample(state.arms, context, sigma, policy.explore, policy.warmup, rng)
        chosen = state.history.chosen[0]
        unchosen = state.eligible - chosen if chosen >= 0 else 0  # a negative count: not recorded
        if math.isfinite(draw) and unchosen > 0:
            centre = state.slices.estimate(state.arms, context, sigma)
            draw = centre + math.sqrt(1.0 + unchosen / waiting) * (draw - centre)
        if draw > 0.0:
            rows.append((draw, len(state.experience.scope), rng.random(), state))
    rows.sort(key=lambda row: (row[0], row[1], row[2]), reverse=True)
    return [(draw, state) for draw, _, _, state in rows]


@contextlib.contextmanager
def installed(waiting: float | None) -> Iterator[None]:
    """The widened draw with time scale `waiting` (None: the engine's) while the block runs."""
    if waiting is None:
        yield
        return
    original = choose.ranked
    choose.ranked = functools.partial(_ranked, waiting)
    try:
        yield
    finally:
        choose.ranked = original


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("idle_draw.py", __doc__ or "")
    parser.add_argument("--settings", default="100,400", help="time scales T, in reported episodes, comma-separated")
    args = sweep_frame.parse(parser, argv)
    scales = [float(text) for text in args.settings.split(",")]
    rows = [("default", functools.partial(installed, None))]
    rows += [(f"T{scale:g}", functools.partial(installed, scale)) for scale in scales]
    notes = ["   draw: TN widens Thompson's noise by sqrt(1 + U / N) for a lesson unchosen for U reported episodes;"]
    lines = sweep_frame.against_peer(
        "Trying a dropped lesson again sooner", "draw", 12, rows, notes, worlds=args.worlds, tuning=args.tuning_seeds,
        gym_first_seed=args.gym_first_seed, gym_seeds=args.gym_seeds, workers=args.workers)
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
