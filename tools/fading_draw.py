"""A fading mean beside the selection's undiscounted estimate, that only ever lowers a lesson's draw, swept on
the family and the gym (docs/gym.md, "A fading mean that lowers the draw").

Each lesson keeps, beside its undiscounted arms, a fading mean of its injected rewards (memory M injected
episodes: a weight, a sum and a sum of squared weights). When the fading mean sits below the undiscounted
injected mean by more than Z standard errors of their difference, Thompson's draw is centred that much lower
(the lift as the recent injected episodes see it) and its noise is scaled by S; otherwise the draw is the
engine's. `young` applies it only while the fall detector is not yet armed (fewer than WATCH_AFTER injected
episodes folded into its arms); `always` at every age; `engine` is the engine's draw alone. `--spread TAU`
sets the slices' prior spread for every setting's line (the default's stays the engine's). A restart (the fall
detector's, or an edit) starts the fading mean from the excursion, as it starts the arms. The draw consumes the
same random numbers as the engine's, so a world's difference is the lever's alone. The engine has none of this:
the research script installs it in this process before the worker processes fork.

    python tools/fading_draw.py 20 --tuning-seeds --settings m10-z2,m10-z2-always,m10-z2-n0.5 --workers 2
    python tools/fading_draw.py 20 --tuning-seeds --settings m10-z2-idle --gym-only
    python tools/fading_draw.py 40 --tuning-seeds --spread 0.05 --settings engine,m10-z2 --workers 2
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import operator
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lamar.gym import sweep as sweep_frame
from lamar.policy import change, features, lesson, selection

_OWN = ("f_w", "f_s", "f_q")
_ALL = selection.ArmStats.__slots__ + _OWN


@dataclass(frozen=True)
class Setting:
    """memory M (injected episodes), gate Z (standard errors), when ("young" or "always"), noise scale S."""

    memory: float = 10.0
    gate: float = 2.0
    when: str = "young"
    noise: float = 1.0
    idle: bool = False

    @property
    def name(self) -> str:
        return (f"m{self.memory:g}-z{self.gate:g}" + ("-always" if self.when == "always" else "")
                + ("" if self.noise == 1.0 else f"-n{self.noise:g}") + ("-idle" if self.idle else ""))


def setting(text: str) -> Setting | None:
    """'m10-z2', 'm10-z2-always', 'm10-z2-n0.5' (parts in any order; the others keep Setting's defaults);
    'engine': None, the engine's draw (a line for `--spread` alone)."""
    if text == "engine":
        return None
    fields: dict[str, Any] = {}
    for part in text.split("-"):
        try:
            if part == "idle":
                fields["idle"] = True
            elif part in ("always", "young"):
                fields["when"] = part
            elif part[:1] == "m" and float(part[1:]) > 1.0:
                fields["memory"] = float(part[1:])
            elif part[:1] == "z" and float(part[1:]) >= 0.0:
                fields["gate"] = float(part[1:])
            elif part[:1] == "n" and float(part[1:]) >= 0.0:
                fields["noise"] = float(part[1:])
            else:
                raise ValueError(part)
        except ValueError:
            raise ValueError(f"a setting is like m10-z2, m10-z2-always or m10-z2-n0.5 (memory > 1, z and n >= 0), "
                             f"or engine; got {text!r}") from None
    return Setting(**fields)


class FadingArms(selection.ArmStats):
    """`ArmStats`, plus a fading mean of the injected rewards: its weight, sum and sum of squared weights."""

    __slots__ = _OWN
    keep = 0.9  # 1 - 1 / memory, set by `installed`
    idle = False  # whether the fading mean's evidence also fades while the lesson is absent

    def __init__(self) -> None:
        super().__init__()
        self.f_w = self.f_s = self.f_q = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(_ALL, type(self).values(self), strict=True))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FadingArms:
        return cls.filled([data.get(name, 0.0) for name in _ALL])

    def record(self, reward: float, injected: bool, discount: float) -> None:
        super().record(reward, injected, discount)
        if injected:
            keep = self.keep
            self.f_w = keep * self.f_w + 1.0
            self.f_s = keep * self.f_s + reward
            self.f_q = keep * keep * self.f_q + 1.0
        elif self.idle:
            # what the fading mean says of the lesson now grows older while it is left out: its effective size
            # (f_w^2 / f_q) shrinks, the gate closes, and the engine's draw tries the lesson again
            keep = self.keep
            self.f_w *= keep
            self.f_s *= keep
            self.f_q *= keep

    def restart_both(self, w_in: float, s_in: float, w_out: float, s_out: float) -> None:
        super().restart_both(w_in, s_in, w_out, s_out)
        # the excursion is the lesson as it is now: the fading mean starts from it, as the arms do
        self.f_w, self.f_s, self.f_q = w_in, s_in, w_in

    def fall(self, sigma: float, gate: float) -> float:
        """How far the fading mean sits below the undiscounted injected mean, when by more than `gate` standard
        errors of their difference (the fading mean is a weighted mean of the same rewards); else 0."""
        if self.f_w <= 1e-6 or self.w_in <= 0.0:  # evidence aged to nothing (idle): no fall to speak of
            return 0.0
        gap = self.s_in / self.w_in - self.f_s / self.f_w
        if gap <= 0.0:
            return 0.0
        spread = max(self.f_q / self.f_w / self.f_w - 1.0 / self.w_in, 0.0)
        return gap if gap > gate * sigma * math.sqrt(spread) else 0.0


def _assign(record: FadingArms, values: Sequence[Any]) -> None:
    for name, value in zip(_ALL, values, strict=True):
        setattr(record, name, value)


# SlotRecord makes a class's values and assign from its own slots only: these read the base's too
FadingArms.values = operator.attrgetter(*_ALL)  # type: ignore[method-assign,assignment]
FadingArms.assign = _assign  # type: ignore[method-assign,assignment]


def lowered(chosen: Setting) -> Any:
    """`Slices.sample` with the draw centred on the fading mean's lift once it has fallen (noise scaled)."""
    sample, estimate = features.Slices.sample, features.Slices.estimate

    def _sample(self: features.Slices, arms: selection.ArmStats, context: Mapping[str, str], sigma: float,
                explore: float, warmup: int, rng: random.Random) -> float:
        draw = sample(self, arms, context, sigma, explore, warmup, rng)
        if not isinstance(arms, FadingArms) or math.isinf(draw):
            return draw
        if chosen.when == "young" and arms.tries >= change.WATCH_AFTER:
            return draw
        fall = arms.fall(sigma, chosen.gate)
        if fall <= 0.0:
            return draw
        centre = estimate(self, arms, context, sigma)
        return centre - fall + chosen.noise * (draw - centre)

    return _sample


@contextlib.contextmanager
def installed(chosen: Setting | None) -> Iterator[None]:
    """Every lesson made while the block runs keeps a fading mean, and its draw follows `chosen` (None: the engine)."""
    arms, sample = lesson.ArmStats, features.Slices.sample
    if chosen is not None:
        FadingArms.keep, FadingArms.idle = 1.0 - 1.0 / chosen.memory, chosen.idle
        lesson.ArmStats = FadingArms  # type: ignore[misc]
        features.Slices.sample = lowered(chosen)  # type: ignore[method-assign]
    try:
        yield
    finally:
        lesson.ArmStats = arms  # type: ignore[misc]
        features.Slices.sample = sample  # type: ignore[method-assign]


def name_of(chosen: Setting | None, spread: float | None = None) -> str:
    return ("engine" if chosen is None else chosen.name) + ("" if spread is None else f" tau {spread:g}")


@contextlib.contextmanager
def spread_and(chosen: Setting | None, spread: float | None) -> Iterator[None]:
    """`installed(chosen)`, with the slices' prior spread set to `spread` if given (the engine's otherwise)."""
    with installed(chosen), (contextlib.nullcontext() if spread is None else sweep_frame.slice_spread(spread)):
        yield


def drops_against_default(names: Sequence[str]) -> Any:
    """The lines `against_peer` adds: each setting's world median drop minus the default's, paired by world."""
    from lamar.gym.family_report import paired
    from lamar.gym.metrics import interval_text

    def lines(rows: Sequence[Any]) -> list[str]:
        cells = [f"{name} {interval_text(paired(rows, name, 'default', 'fossil_drop'), digits=0)}" for name in names]
        return ["   dropped minus default (task episodes, paired by world): " + "; ".join(cells)]

    return lines


def sweep(worlds: int, *, tuning: bool, gym_first_seed: int, settings: Sequence[Setting | None], workers: int,
          gym_seeds: int = 20, spread: float | None = None) -> list[str]:
    """The default's line, then one per setting (under `spread`, if given), each paired by world with it and with
    river-ts, and its drop paired with the default's."""
    rows: list[tuple[str, Any]] = [("default", functools.partial(installed, None))]
    rows += [(name_of(s, spread), functools.partial(spread_and, s, spread)) for s in settings]
    notes = [
        "   draw: mM-zZ centres Thompson's draw on the fading mean (memory M injected episodes) once it sits below",
        "   the undiscounted injected mean by more than Z standard errors, while the fall detector is not armed",
        "   (-always: at every age); -nS scales the draw's noise by S then;"]
    if spread is not None:
        notes.append(f"   tau T: the slices' prior spread set to T (the engine's {features.SLICE_SPREAD:g}); "
                     "engine: the engine's draw;")
    return sweep_frame.against_peer(
        "A fading mean that lowers the draw", "draw", max(18, *(len(name) + 2 for name, _ in rows)), rows, notes,
        worlds=worlds, tuning=tuning, gym_first_seed=gym_first_seed, gym_seeds=gym_seeds, workers=workers,
        after=drops_against_default([name for name, _ in rows[1:]]))


def gym_only(settings: Sequence[Setting | None], *, gym_first_seed: int, gym_seeds: int, workers: int) -> list[str]:
    """The gym's columns alone, the default's and each setting's: a quick look before the family's runs."""
    import statistics

    from lamar.gym import run_gym

    lines = [f"A fading mean that lowers the draw on the gym (seeds {gym_first_seed}-{gym_first_seed + gym_seeds - 1})",
             f"{'draw':<18}{'gym pre / post':>17}{'gym fossil':>12}{'gym dropped':>13}"]
    print("\n".join(lines), flush=True)
    for label, chosen in (("default", None), *((name_of(s), s) for s in settings)):
        with installed(chosen):
            result = run_gym(first_seed=gym_first_seed, seeds=gym_seeds, policies=("none", "lamar", "oracle"),
                             workers=workers)
        gym = [row for row in result.runs if row["policy"] == "lamar"]
        pre, post = (100 * statistics.mean(row[f"captured_{phase}"] for row in gym) for phase in ("pre", "post"))
        share = 100 * statistics.mean(row["share_fossil_post"] for row in gym)
        off = [row["fossil_off_latency"] for row in gym if row["fossil_off_latency"] is not None]
        lines.append(f"{label:<18}{f'{pre:.1f} / {post:.1f}':>17}"
                     f"{f'{share:.2f}%':>12}{statistics.median(off) if off else '-':>13}")
        print(lines[-1], flush=True)
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("python tools/fading_draw.py", __doc__ or "")
    parser.add_argument("--settings", type=lambda text: [setting(s) for s in text.split(",")],
                        default=[setting("m10-z2")], help="comma-separated settings, e.g. m10-z2,m10-z2-always")
    parser.add_argument("--gym-only", action="store_true", help="only the gym's columns (a quick look)")
    parser.add_argument("--spread", type=_spread, help="the slices' prior spread for every setting's line (0 or more)")
    args = sweep_frame.parse(parser, argv)
    if args.gym_only:
        gym_only(args.settings, gym_first_seed=args.gym_first_seed, gym_seeds=args.gym_seeds, workers=args.workers)
        return
    print("\n".join(sweep(args.worlds, tuning=args.tuning_seeds, gym_first_seed=args.gym_first_seed,
                          settings=args.settings, workers=args.workers, gym_seeds=args.gym_seeds, spread=args.spread)))


def _spread(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0.0:
        raise argparse.ArgumentTypeError(f"--spread is the slices' prior spread in reward units, 0 or more, e.g. 0.05; "
                                         f"got {text!r}")
    return value


if __name__ == "__main__":
    main()
