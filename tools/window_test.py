"""A change test inside the fall detector's watch window, swept on the family and the gym (docs/gym.md,
"A test inside the watch window").

The engine's detector forms its reference from a lesson's first WATCH_AFTER injected episodes and only then
moves, so a lesson that turns inside that window has the fall in its reference and is seldom alarmed. This
detector keeps the window's early and late halves as two sums and, when it arms, compares them:
`fire` restarts the lesson from the late half when the late mean sits below the early one by more than a
one-sided z test at ALPHA allows; `arm` instead takes the early half as the reference and starts the first
statistic at the late half's CUSUM evidence against it (no test beyond the detector's own level). ALPHA is
WATCH_AFTER times the armed pair's false alarms per injected episode on the null, so the window raises no
more false alarms per episode than the armed detector; `fire@A` sets ALPHA to A instead. The engine has
neither: this research script installs the detector before the worker processes fork.

    python tools/window_test.py --null --settings fire,arm       (false alarms and delays, the engine's first)
    python tools/window_test.py 40 --tuning-seeds --settings fire,arm
    python tools/window_test.py 80 --tuning-seeds --anatomy fire  (the drop's anatomy, the engine's and fire's)
    python tools/window_test.py 80 --tuning-seeds --anatomy arm --spread 0.05
"""

from __future__ import annotations

import contextlib
import functools
import math
import operator
import random
import statistics
from collections.abc import Callable, Iterator, Sequence
from statistics import NormalDist
from typing import Any

from lamar.audit import physics
from lamar.gym import sweep as sweep_frame
from lamar.policy import change, features, lesson

# The armed pair's false alarms per injected episode of a lesson that keeps helping, on the null
# (docs/gym.md, "A detector for every fall size": 0.041 per 1 000; `--null` reads it again beside the window's).
NULL_RATE = 0.041e-3
_OWN = ("early", "late", "late_w_out", "late_s_out")
_ALL = change.ChangeDetector.__slots__ + _OWN

Setting = tuple[str, float | None]  # the mode ("default", "fire" or "arm") and fire's ALPHA (None: derived)
DEFAULT: Setting = ("default", None)


def alpha() -> float:
    """The window test's level: the false alarms the armed pair raises over as many injected episodes."""
    return change.WATCH_AFTER * NULL_RATE


class WindowDetector(change.ChangeDetector):
    """`ChangeDetector`, plus the watch window's early and late halves (injected sums, and the absent
    episodes of the late half for the restart), tested once when the detector arms."""

    __slots__ = _OWN
    mode = "fire"
    critical = NormalDist().inv_cdf(1.0 - alpha())
    gate = -math.inf  # arm's: the z the late half's fall must pass to re-arm (none by default)

    def __init__(self) -> None:
        super().__init__()
        self.early = self.late = self.late_w_out = self.late_s_out = 0.0

    def to_dict(self) -> dict[str, Any]:
        return dict(zip(_ALL, type(self).values(self), strict=True))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WindowDetector:
        return cls.filled([data.get(name, 0.0) for name in _ALL]) if "stat" in data else cls()

    def update(self, reward: float, injected: bool, sigma: float) -> tuple[float, float, float, float] | None:
        """As `ChangeDetector.update`; the injected episode that arms the detector also runs the window's test."""
        seen, half = self.watched, change.WATCH_AFTER // 2
        if seen < change.WATCH_AFTER:
            if injected and seen < half:
                self.early += reward
            elif injected:
                self.late += reward
            elif seen >= half:
                self.late_w_out += 1.0
                self.late_s_out += reward
        out = super().update(reward, injected, sigma)
        if out is None and injected and seen == change.WATCH_AFTER - 1:
            return self._window(sigma)
        return out

    def _window(self, sigma: float) -> tuple[float, float, float, float] | None:
        n1 = change.WATCH_AFTER // 2
        n2 = change.WATCH_AFTER - n1
        gap = (self.early / n1 - self.late / n2) / sigma  # the late half's fall, in reward standard deviations
        late = (float(n2), self.late, self.late_w_out, self.late_s_out)
        z = gap / math.sqrt(1.0 / n1 + 1.0 / n2)
        if self.mode == "arm" and z > self.gate:
            # armed at the half: the early half is the reference and the late half the statistic's excursion
            self.stat = max(0.0, n2 * (gap - change.SLACK))
            if self.stat > 0.0:
                self.ref_w, self.ref_s = float(n1), self.early
                self.ex_w_in, self.ex_s_in, self.ex_w_out, self.ex_s_out = late
            return self._fire() if self.stat > change.LEVEL else None
        if self.mode == "arm" or z <= self.critical:
            return None
        # the late half is the lesson as it is now: the restart's arms and the reference start from it
        self.ref_w, self.ref_s = float(n2), self.late
        return late


def _assign(record: WindowDetector, values: Sequence[Any]) -> None:
    for name, value in zip(_ALL, values, strict=True):
        setattr(record, name, value)


# SlotRecord makes a class's values and assign from its own slots only: these read the base's too
WindowDetector.values = operator.attrgetter(*_ALL)  # type: ignore[method-assign,assignment]
WindowDetector.assign = _assign  # type: ignore[method-assign,assignment]


def setting(text: str) -> Setting:
    """'fire', 'fire@0.02' (its level) or 'arm'."""
    mode, _, level = text.partition("@")
    if mode not in ("fire", "arm", "default") or (level and mode == "default"):
        raise ValueError(f"a setting is fire, arm, fire@ALPHA or arm@ALPHA; got {text!r}")
    return mode, float(level) if level else None


def name_of(mode: str, level: float | None) -> str:
    return mode if level is None else f"{mode}@{level:g}"


@contextlib.contextmanager
def installed(mode: str, level: float | None = None) -> Iterator[None]:
    """Every lesson made while the block runs gets the window's detector in `mode` (the engine's: "default")."""
    saved, critical, gate = lesson.ChangeDetector, WindowDetector.critical, WindowDetector.gate
    if mode != "default":
        WindowDetector.mode = mode
        WindowDetector.critical = NormalDist().inv_cdf(1.0 - (alpha() if level is None else level))
        if mode == "arm":
            WindowDetector.gate = -math.inf if level is None else WindowDetector.critical
        lesson.ChangeDetector = WindowDetector  # type: ignore[misc]
    try:
        yield
    finally:
        lesson.ChangeDetector = saved  # type: ignore[misc]
        WindowDetector.critical, WindowDetector.gate = critical, gate


def new_alarms(make: Callable[[], Any], lessons: int, young: int = 300) -> tuple[float, float]:
    """The shares of new lessons that keep helping by 0.1 (0.6 success injected, 0.5 absent, injected 80% of
    the time) whose detector fires by its arming, and within their first `young` injected episodes."""
    sd, window, early = physics.reward_sd(0.6), 0, 0
    for i in range(lessons):
        rng, detector, seen = random.Random(f"window-null:{i}"), make(), 0
        while seen < young:
            injected = rng.random() < 0.8
            seen += injected
            if detector.update(physics._draw(rng, 0.6 if injected else 0.5), injected, sd) is not None:
                window += seen <= change.WATCH_AFTER
                early += 1
                break
    return window / lessons, early / lessons


def inside(make: Callable[[], Any], drop: float, fall_at: int, *, runs: int, cap: int = 150) -> list[int]:
    """Injected episodes from the fall until the detector fires, for a lesson whose injected success falls by
    `drop` from 0.6 after `fall_at` injected episodes (inside the window when under WATCH_AFTER); `cap` is never."""
    sd, out = physics.reward_sd(0.6), []
    for i in range(runs):
        rng, detector, seen = random.Random(f"window-fall:{drop}:{fall_at}:{i}"), make(), 0
        while seen < fall_at + cap:
            injected = rng.random() < 0.8
            seen += injected
            success = (0.6 - drop if seen > fall_at else 0.6) if injected else 0.5
            if detector.update(physics._draw(rng, success), injected, sd) is not None and seen > fall_at:
                break
        out.append(seen - fall_at)
    return out


def null_table(settings: Sequence[Setting], episodes: int, runs: int, lessons: int) -> list[str]:
    """False alarms (steady, at the window, in young lessons) and delays of a fall inside the window."""
    glr = _tool("glr_sweep")
    cells = [(drop, at) for drop in (0.4, 0.3, 0.2) for at in (10, 25, 40)]
    lines = [(f"On the null: a lesson injected in 80% of its eligible episodes, {episodes:_} injected episodes, "
              f"{lessons:_} new lessons; falls from a 60% success rate inside the window, {runs} runs each"),
             (f"{'detector':<10}{'alarms/1000':>12}{'window':>8}{'young':>7}{'first 300':>10}   "
              "median injected episodes from the fall until it fires [share fired within 150], by fall @ episode"),
             f"{'':<50}" + "".join(f"{f'{drop:g}@{at}':>14}" for drop, at in cells)]
    for mode, level in [DEFAULT, *(s for s in settings if s != DEFAULT)]:
        with installed(mode, level):
            make = lesson.ChangeDetector
            steady, young, (window, early) = glr.null_alarms(make, episodes), glr.young_alarms(make), new_alarms(
                make, lessons)
            row = []
            for drop, at in cells:
                got = inside(make, drop, at, runs=runs)
                row.append(f"{statistics.median(got):.0f} [{sum(d < 150 for d in got) / len(got):.0%}]")
        lines.append(f"{name_of(mode, level):<10}{steady:>12.3f}{window:>8.2%}{young:>7.0%}{early:>10.2%}   "
                     + "".join(f"{cell:>14}" for cell in row))
        print(lines[-1], flush=True)
    return [*lines,
            "   alarms/1000: false alarms per 1 000 injected episodes of a lesson that keeps helping by 0.1;",
            f"   window, first 300: the share of {lessons:_} such new lessons alarmed by their arming, and in their",
            "   first 300 injected episodes; young: the share of 300 alarmed in their first 2 000;",
            f"   fire's level, and arm@'s gate {alpha():.4f} = {change.WATCH_AFTER} x {NULL_RATE:g}"]


def _tool(name: str) -> Any:
    """tools/NAME.py, whose runs this reuses (tools/ is not a package)."""
    import importlib.util
    import pathlib
    import sys

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, pathlib.Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[name] = module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


def anatomy(worlds: int, chosen: Setting, *, tuning: bool, workers: int, spread: float | None = None) -> list[str]:
    """tools/drop_anatomy.py's table for the engine's detector, then for `chosen`, on the same worlds (with
    the slices' prior spread set to `spread`, if given)."""
    tool, seeds = _tool("drop_anatomy"), sweep_frame.family_seeds(worlds, tuning)
    kind = "tuning" if tuning else "reporting"
    tau = features.SLICE_SPREAD if spread is None else spread
    lines = []
    for mode, level in (DEFAULT, chosen):
        with installed(mode, level), sweep_frame.slice_spread(tau):
            rows = tool.anatomy(seeds, workers=workers)
        table = tool.report(rows, f"The anatomy of a drop on the family ({len(seeds)} {kind} worlds, seeds "
                                  f"{seeds.start}-{seeds.stop - 1}), detector {name_of(mode, level)}"
                                  + ("" if spread is None else f", the slices' prior spread {spread:g}"))
        table.append(_unarmed_line(tool, rows))
        print("\n".join(table), flush=True)
        lines += table
    return lines


def _unarmed_line(tool: Any, rows: Sequence[dict[str, Any]]) -> str:
    """What the window's test can reach of the never-alarmed fossils not armed at the flip: those whose
    reported injected episodes reach the window's end in the run, and how many come after it."""
    unarmed = [f for row in rows if row["policy"] == "lamar" for f in row["fossils"]
               if not f["armed"] and not tool.alarmed(f)]
    if not unarmed:
        return "  (c'): none"
    end, quarter = change.WATCH_AFTER, change.WATCH_AFTER // 4
    reach = [f for f in unarmed if f["seen"] >= end]
    middle = sum(quarter <= f["seen_at_flip"] < end - quarter for f in reach)
    after = statistics.median([f["seen"] - end for f in reach]) if reach else 0
    at_flip = statistics.median(f["seen_at_flip"] for f in unarmed)
    return (f"  (c'): reported injected episodes at the flip, median {at_flip:.0f}; {len(unarmed) - len(reach)} of "
            f"{len(unarmed)} never reach {end} in the run; of the {len(reach)} others, {middle} turned in the "
            f"window's middle half, and a median {after:.0f} more come after it")


def sweep(worlds: int, *, tuning: bool, gym_first_seed: int, settings: Sequence[Setting],
          workers: int, gym_seeds: int = 20) -> list[str]:
    """The default's line, then one per setting, each paired by world with it and with river-ts."""
    chosen = [DEFAULT, *(s for s in settings if s != DEFAULT)]
    return sweep_frame.against_peer(
        "A test inside the watch window", "window", 10,
        [(name_of(*s), functools.partial(installed, *s)) for s in chosen],
        [(f"   window: fire restarts from the late half when it sits below the early one at level {alpha():.4f}"
          " (@: another level);"),
         "   arm takes the early half as the reference, the statistic started at the late half's evidence",
         "   (arm@A: only when the late half's fall passes fire's test at level A);"],
        worlds=worlds, tuning=tuning, gym_first_seed=gym_first_seed, gym_seeds=gym_seeds, workers=workers)


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("python tools/window_test.py", __doc__)
    parser.add_argument("--settings", type=lambda text: [setting(s) for s in text.split(",")],
                        default=[setting("fire"), setting("arm")], help="comma-separated fire, fire@ALPHA or arm")
    parser.add_argument("--null", action="store_true", help="instead, false alarms and delays on simulated lessons")
    parser.add_argument("--episodes", type=int, default=1_000_000, help="--null's injected episodes per detector")
    parser.add_argument("--runs", type=int, default=200, help="--null's runs per fall")
    parser.add_argument("--lessons", type=int, default=20_000, help="--null's new lessons for the window's alarms")
    parser.add_argument("--anatomy", type=setting, metavar="SETTING",
                        help="instead, tools/drop_anatomy.py's table for the engine's detector and this one")
    parser.add_argument("--spread", type=float, help="--anatomy with the slices' prior spread set to this")
    args = sweep_frame.parse(parser, argv)
    if args.null:
        print("\n".join(null_table(args.settings, args.episodes, args.runs, args.lessons)))
    elif args.anatomy is not None:
        anatomy(args.worlds, args.anatomy, tuning=args.tuning_seeds, workers=args.workers, spread=args.spread)
    else:
        print("\n".join(sweep(args.worlds, tuning=args.tuning_seeds, gym_first_seed=args.gym_first_seed,
                              settings=args.settings, workers=args.workers, gym_seeds=args.gym_seeds)))


if __name__ == "__main__":
    main()
