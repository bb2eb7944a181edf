"""A fall detector that does not fix the fall size, swept on the family and the gym (docs/gym.md, \
"A detector for every fall size").

The engine's fall detector is two CUSUMs, each tuned to one fall (0.5 and 0.1 reward standard deviations).
This one is a bank of CUSUMs on a geometric grid of falls, each statistic a log-likelihood ratio, that fires
when one crosses its level (one level, lowered for the smaller falls so each size false-alarms as often):
the window-free approximation of the generalized likelihood ratio detector (Lorden 1971; Lai 1995), within
a tenth of its delay for any fall between the grid's ends. Its restart takes the excursion of the statistic
that stands highest above its level. A setting is the level, e.g. 10; a 'c'
before it (c13.5) makes the detector compare each injected reward with the lesson's recent absent episodes
(the same task's episodes without it) rather than with its own past, so that a drift of the base rate is not
a fall. The engine has neither: this research script installs the detector before the worker processes
fork, one setting at a time, and reads each against the defaults, paired by world.

    python tools/glr_sweep.py --null --settings 10,8,c13.5   (false alarms and delays, beside the engine's pair)
    python tools/glr_sweep.py 20 --tuning-seeds --settings 10,8 --workers 1
    python tools/glr_sweep.py 60 --gym-first-seed 0 --settings 10 --workers 1
    python tools/glr_sweep.py --bench 10          (recall + report speed, the engine's detector first)
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
import statistics
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lamar.audit import physics
from lamar.gym import sweep as sweep_frame
from lamar.policy import change, lesson
from lamar.policy.record import SlotRecord

FALLS = (0.1, 0.2, 0.4, 0.8)  # the grid: falls per injected episode, in reward standard deviations
# Each statistic's level below the largest fall's: a CUSUM's false alarms at a level h come about once
# per e^h / fall^2 episodes, so this gives every size the same share of them (the engine's pair, 0.5 and
# 0.1 at 8.25 and 5.2 in these units, is set the same way).
OFFSETS = tuple(2.0 * math.log(size / FALLS[-1]) for size in FALLS)
ANCHOR = 2  # the statistic whose excursion freezes the reference, as the engine's first CUSUM does
ABSENT_DISCOUNT = 0.99  # the recent absent episodes a contrast compares with: about 100
PEER = sweep_frame.PEER
_PER = ("stat", "w_in", "s_in", "w_out", "s_out")
_HEAD = ("watched", "ref_w", "ref_s", "ref_ow", "ref_os", "now_w", "now_s")

Setting = tuple[float, bool]  # the level (0: the engine's detector), and whether it contrasts with absent episodes
DEFAULT: Setting = (0.0, False)


class BankDetector(SlotRecord):
    """`ChangeDetector`'s interface: one CUSUM per fall in `FALLS`, in log-likelihood-ratio units; `level`
    is the largest fall's."""

    __slots__ = _HEAD + tuple(f"{name}{j}" for j in range(len(FALLS)) for name in _PER)
    level = 10.0  # set on the null to the engine's pair's false-alarm rate (docs/gym.md)
    contrast = False

    def __init__(self) -> None:
        self.assign([0.0] * len(self.__slots__))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BankDetector:
        return cls.filled([data.get(name, 0.0) for name in cls.__slots__]) if "ref_w" in data else cls()

    def update(self, reward: float, injected: bool, sigma: float) -> tuple[float, float, float, float] | None:
        """As `ChangeDetector.update`: the excursion of the highest statistic when it crosses the level."""
        v = list(type(self).values(self))
        head = len(_HEAD)
        if not injected:
            if self.contrast:
                v[5] = ABSENT_DISCOUNT * v[5] + 1.0
                v[6] = ABSENT_DISCOUNT * v[6] + reward
                if v[head + 5 * ANCHOR] == 0.0:  # the reference's absent level follows while it is at rest
                    v[3] = change.REFERENCE_DISCOUNT * v[3] + 1.0
                    v[4] = change.REFERENCE_DISCOUNT * v[4] + reward
            for j in range(len(FALLS)):
                at = head + 5 * j
                if v[at] != 0.0:
                    v[at + 3] += 1.0
                    v[at + 4] += reward
            self.assign(v)
            return None
        v[0] += 1.0
        if v[0] > change.WATCH_AFTER and v[1] > 0.0:
            expected = v[2] / v[1]
            if self.contrast and v[3] > 0.0 and v[5] > 0.0:
                expected += v[6] / v[5] - v[4] / v[3]  # the absent episodes' move since the reference
            fall = (expected - reward) / sigma
            for j, size in enumerate(FALLS):
                at = head + 5 * j
                v[at] = max(0.0, v[at] + size * (fall - 0.5 * size))
        anchor = head + 5 * ANCHOR
        if v[anchor] == 0.0:
            # At rest the reference follows the injected rewards, the anchor's noise excursion included
            # (as in the engine's detector: left out, the reference would keep only the good episodes).
            if v[anchor + 1]:
                keep = change.REFERENCE_DISCOUNT ** v[anchor + 1]
                v[1] = keep * v[1] + v[anchor + 1]
                v[2] = keep * v[2] + v[anchor + 2]
            v[1] = change.REFERENCE_DISCOUNT * v[1] + 1.0
            v[2] = change.REFERENCE_DISCOUNT * v[2] + reward
        best, excess = head, -math.inf
        for j in range(len(FALLS)):
            at = head + 5 * j
            if v[at] == 0.0:
                v[at + 1] = v[at + 2] = v[at + 3] = v[at + 4] = 0.0
            else:
                v[at + 1] += 1.0
                v[at + 2] += reward
            if v[at] - OFFSETS[j] > excess:
                best, excess = at, v[at] - OFFSETS[j]
        if excess <= self.level:
            self.assign(v)
            return None
        excursion = (v[best + 1], v[best + 2], v[best + 3], v[best + 4])
        fresh = [0.0] * len(v)
        fresh[0], fresh[1], fresh[2] = v[0], excursion[0], excursion[1]
        if excursion[2] > 0.0:
            fresh[3], fresh[4] = excursion[2], excursion[3]
        elif v[5] > 0.0:
            fresh[3], fresh[4] = 1.0, v[6] / v[5]
        fresh[5], fresh[6] = v[5], v[6]
        self.assign(fresh)
        return excursion


def setting(text: str) -> Setting:
    """'10' (the bank at that level) or 'c13.5' (the same, contrasted with absent episodes)."""
    return float(text.lstrip("c")), text.startswith("c")


def name_of(level: float, contrast: bool) -> str:
    return "default" if not level else ("c" if contrast else "") + f"{level:g}"


@contextlib.contextmanager
def installed(level: float, contrast: bool) -> Iterator[None]:
    """Every lesson made while the block runs gets the bank at `level` (none at 0: the engine's)."""
    saved = lesson.ChangeDetector
    if level:
        BankDetector.level, BankDetector.contrast = level, contrast
        lesson.ChangeDetector = BankDetector  # type: ignore[misc]
    try:
        yield
    finally:
        lesson.ChangeDetector = saved  # type: ignore[misc]


def _stream(rng: random.Random, success: float, absent: float, inject: float) -> Iterator[tuple[float, bool]]:
    while True:
        injected = rng.random() < inject
        yield physics._draw(rng, success if injected else absent), injected


def null_alarms(make: Callable[[], Any], injected_episodes: int, *, inject: float = 0.8, step: float = 0.0,
                seed: str = "") -> float:
    """False alarms per 1 000 injected episodes of a lesson that keeps helping by 0.1 (0.6 against 0.5
    without it) while its task's base rate steps down by `step` and back up, every 1 000 injected episodes."""
    rng = random.Random(f"glr-null:{seed}")
    sd = physics.reward_sd(0.6)
    detector, alarms, seen = make(), 0, 0
    while seen < injected_episodes:
        base = 0.5 - step * ((seen // 1000) % 2)
        injected = rng.random() < inject
        reward = physics._draw(rng, base + 0.1 if injected else base)
        seen += injected
        alarms += detector.update(reward, injected, sd) is not None
    return 1000.0 * alarms / injected_episodes


def young_alarms(make: Callable[[], Any], lessons: int = 300, injected_episodes: int = 2000) -> float:
    """The share of new lessons that keep helping by 0.1 (as `null_alarms`) whose detector false-alarms
    within their first `injected_episodes` injected episodes: the reference is shortest then."""
    sd = physics.reward_sd(0.6)
    fired = 0
    for i in range(lessons):
        stream, detector, seen = _stream(random.Random(f"glr-young:{i}"), 0.6, 0.5, 0.8), make(), 0
        while seen < injected_episodes:
            reward, injected = next(stream)
            seen += injected
            if detector.update(reward, injected, sd) is not None:
                fired += 1
                break
    return fired / lessons


def delays(make: Callable[[], Any], drop: float, *, runs: int = 200, cap: int = 3000, inject: float = 0.8) -> list[int]:
    """Injected episodes until the detector fires after the lesson's injected success rate falls by
    `drop` from 0.6 (500 injected episodes before it), as `python -m lamar.audit --physics` counts them."""
    rng = random.Random(f"glr-delay:{drop}")
    sd = physics.reward_sd(0.6)
    out = []
    for _ in range(runs):
        detector = make()
        stream = _stream(rng, 0.6, 0.5, inject)
        seen = 0
        while seen < 500:
            reward, injected = next(stream)
            seen += injected
            detector.update(reward, injected, sd)
        stream, seen, fired = _stream(rng, 0.6 - drop, 0.5, inject), 0, False
        while seen < cap and not fired:
            reward, injected = next(stream)
            seen += injected
            fired = detector.update(reward, injected, sd) is not None
        out.append(seen)
    return out


def null_table(settings: Sequence[Setting], episodes: int, runs: int) -> list[str]:
    """False alarms (steady, under steps of the base rate, in young lessons) and delays by fall, the
    engine's pair first."""
    falls = (0.4, 0.3, 0.2, 0.15, 0.1, 0.05)
    lines = [(f"On the null: a lesson injected in 80% of its eligible episodes, {episodes:_} injected episodes; "
              f"falls from a 60% success rate, {runs} runs each"),
             (f"{'detector':<10}{'alarms/1000':>12}{'steps 0.2':>10}{'young':>7}   "
              "mean [median] injected episodes until it fires, by fall"),
             f"{'':<42}" + "".join(f"{d:>13g}" for d in falls)]
    for level, contrast in [DEFAULT, *(s for s in settings if s != DEFAULT)]:
        with installed(level, contrast):
            make = lesson.ChangeDetector
            steady = null_alarms(make, episodes)
            drifting = null_alarms(make, episodes, step=0.2)
            young = young_alarms(make)
            cells = []
            for drop in falls:
                got = delays(make, drop, runs=runs)
                cells.append(f"{statistics.mean(got):.0f} [{statistics.median(got):.0f}]")
        lines.append(f"{name_of(level, contrast):<10}{steady:>12.3f}{drifting:>10.3f}{young:>7.0%}   "
                     + "".join(f"{cell:>13}" for cell in cells))
        print(lines[-1], flush=True)
    lines += ["   alarms/1000: false alarms per 1 000 injected episodes of a lesson that keeps helping by 0.1;",
              "   steps 0.2: the same while the task's base rate falls by 0.2 and rises back every 1 000 of them;",
              "   young: the share of 300 such new lessons with a false alarm in their first 2 000 injected episodes;",
              "   a delay of 3000 is a fall never seen"]
    return lines


def sweep(worlds: int, *, tuning: bool, gym_first_seed: int, settings: Sequence[Setting],
          workers: int, gym_seeds: int = 20) -> list[str]:
    """The default setting's line, then one per other setting, each paired by world against it."""
    chosen = [DEFAULT, *(s for s in settings if s != DEFAULT)]
    return sweep_frame.against_peer(
        "The bank of CUSUMs", "level", 10, [(name_of(*s), functools.partial(installed, *s)) for s in chosen],
        ["   level: the bank's level in log-likelihood-ratio units (c: contrasted with the absent episodes);"],
        worlds=worlds, tuning=tuning, gym_first_seed=gym_first_seed, gym_seeds=gym_seeds, workers=workers)


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("python tools/glr_sweep.py", __doc__)
    parser.add_argument("--settings", type=lambda text: [setting(s) for s in text.split(",")],
                        default=[setting(s) for s in ("10", "c13.5")],
                        help="comma-separated levels, each with a leading 'c' to contrast with absent episodes")
    parser.add_argument("--null", action="store_true", help="instead, false alarms and delays on simulated lessons")
    parser.add_argument("--episodes", type=int, default=1_000_000, help="--null's injected episodes per detector")
    parser.add_argument("--runs", type=int, default=200, help="--null's runs per fall")
    parser.add_argument("--bench", type=setting, metavar="SETTING",
                        help="instead, python -m lamar.bench's recall + report speed, the engine's then this one's")
    args = sweep_frame.parse(parser, argv)
    if args.null:
        print("\n".join(null_table(args.settings, args.episodes, args.runs)))
        return
    if args.bench is not None:
        from lamar.bench.__main__ import main as bench

        for chosen in (DEFAULT, args.bench):
            print(f"detector: {name_of(*chosen)}", flush=True)
            with installed(*chosen):
                bench(["--sizes", "10", "--backends", "memory", "--eligible", "6", "--reps", "3000"])
        return
    print("\n".join(sweep(args.worlds, tuning=args.tuning_seeds, gym_first_seed=args.gym_first_seed,
                          settings=args.settings, workers=args.workers, gym_seeds=args.gym_seeds)))


if __name__ == "__main__":
    main()
