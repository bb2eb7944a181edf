"""Soft change points in the selection, swept on the family and the gym (docs/gym.md, \
"Soft change points in the selection").

Thompson sampling with Bayesian online change-point detection (Adams & MacKay 2007; Mellor &
Shapiro 2013): beside its arms since the last restart, each lesson keeps a few shorter run-length
hypotheses, each with its own two-arm sums since that run began, weighted by their posterior under
a constant hazard; Thompson's draw first picks a run by its weight, then samples that run's lift.
The engine has none of it: this research script replaces the selection model before the worker
processes fork, one setting at a time, and reads each against the defaults, paired by world.

A setting is the hazard's inverse, e.g. 500 (H = 1/500), with the fall detector restarting the
arms as in the engine (the runs then start afresh too); a trailing '-' (500-) leaves the arms to
the runs alone: the detector still closes the evidence segment, so the verdicts are untouched.

    python tools/changepoint_sweep.py 40 --tuning-seeds --settings 200,500,2000,200-,500-,2000-
    python tools/changepoint_sweep.py --bench 500   (recall + report speed; 0 for the engine's own)
"""

from __future__ import annotations

import contextlib
import functools
import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from lamar.gym import sweep as sweep_frame
from lamar.policy import features, lesson, selection
from lamar.policy.ledger import Ledger

RUNS = 16  # run-length hypotheses kept per lesson, the run since the last restart among them
PRIOR_IN = 2.0  # pseudo-episodes a new run's injected arm starts with, at the likeliest run's mean
PRIOR_OUT = 10.0  # and its absent arm (as a restart keeps of the old absent arm)
FLOOR = math.log(1e-4)  # a run whose posterior weight falls under this is pruned
PEER = sweep_frame.PEER

Setting = tuple[float, bool]  # the hazard's inverse (0: the engine's selection), the detector restarting the arms
DEFAULT: Setting = (0.0, True)


def setting(text: str) -> Setting:
    """'500' (hazard 1/500, the detector restarting the arms) or '500-' (the runs alone)."""
    return float(text.rstrip("-")), not text.endswith("-")


def name_of(every: float, hard: bool) -> str:
    return "default" if not every else f"1/{every:g}" + ("" if hard else " soft")


def _pred(w: float, s: float, w0: float, m0: float, reward: float, sigma: float) -> float:
    """Log predictive density of `reward` (up to a constant) under a normal arm with sums (w, s)
    and a prior of weight w0 at m0, the reward's sd `sigma`."""
    n = w + w0
    mean = (s + w0 * m0) / n if n > 0.0 else m0
    var = sigma * sigma * (1.0 + 1.0 / max(n, 1.0))
    return -0.5 * (reward - mean) ** 2 / var - 0.5 * math.log(var)


class SoftArms(selection.ArmStats):
    """The engine's arms (the run since the last restart) and `runs`: the shorter run-length
    hypotheses, each [log weight, w_in, s_in, w_out, s_out]; `lead` is the long run's log weight."""

    __slots__ = ("runs", "lead")
    hazard = 1.0 / 500

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[list[float]] = []
        self.lead = 0.0

    def copy(self) -> SoftArms:
        out = SoftArms()
        out.w_in, out.s_in, out.w_out, out.s_out, out.tries = self.w_in, self.s_in, self.w_out, self.s_out, self.tries
        out.runs, out.lead = [list(run) for run in self.runs], self.lead
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"w_in": self.w_in, "s_in": self.s_in, "w_out": self.w_out, "s_out": self.s_out,
                "tries": self.tries, "runs": [list(run) for run in self.runs], "lead": self.lead}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SoftArms:
        out = cls()
        out.w_in, out.s_in, out.w_out, out.s_out, out.tries = (data[name] for name in selection.ArmStats.__slots__)
        out.runs, out.lead = [list(run) for run in data.get("runs", [])], float(data.get("lead", 0.0))
        return out

    def merge(self, other: selection.ArmStats) -> None:
        self.w_in, self.s_in = self.w_in + other.w_in, self.s_in + other.s_in
        self.w_out, self.s_out = self.w_out + other.w_out, self.s_out + other.s_out
        self.tries += other.tries
        self.forget()

    def forget(self) -> None:
        self.runs, self.lead = [], 0.0

    def step(self, reward: float, injected: bool, sigma: float) -> None:
        """One BOCPD step: weigh every run by its predictive density of this episode, open a new
        run at the hazard, add the episode to the shorter runs (the engine adds it to its own
        arms), prune. A new run starts at the likeliest run's means, loosely."""
        sums = [(self.lead, self.w_in, self.s_in, self.w_out, self.s_out), *self.runs]
        best = max(sums, key=lambda run: run[0])
        m_in = best[2] / best[1] if best[1] > 0.0 else (best[4] / best[3] if best[3] > 0.0 else reward)
        m_out = best[4] / best[3] if best[3] > 0.0 else m_in
        prior_out = min(best[3], PRIOR_OUT)
        arm = 1 if injected else 3
        logs = [run[0] + _pred(run[arm], run[arm + 1], 1.0, m_in if injected else m_out, reward, sigma) for run in sums]
        grow = math.log1p(-self.hazard)
        top = max(run[0] for run in sums)
        before = top + math.log(sum(math.exp(run[0] - top) for run in sums))
        w0, m0 = (PRIOR_IN, m_in) if injected else (prior_out, m_out)
        # A change just before this episode: the new run predicts it from its prior alone.
        fresh = [math.log(self.hazard) + before + _pred(0.0, 0.0, w0, m0, reward, sigma),
                 PRIOR_IN, PRIOR_IN * m_in, prior_out, prior_out * m_out]
        self.lead = logs[0] + grow
        runs = []
        for run, log in zip(self.runs, logs[1:], strict=True):
            run[0] = log + grow
            runs.append(run)
        runs.append(fresh)
        for run in runs:
            run[arm] += 1.0
            run[arm + 1] += reward
        top = max(self.lead, *(run[0] for run in runs))
        norm = top + math.log(math.exp(self.lead - top) + sum(math.exp(run[0] - top) for run in runs))
        self.lead -= norm
        for run in runs:
            run[0] -= norm
        runs = [run for run in runs if run[0] > FLOOR]
        if len(runs) > RUNS - 1:
            runs.sort(key=lambda run: run[0], reverse=True)
            del runs[RUNS - 1:]
        self.runs = runs


def soft_sample(sample: Callable[..., float]) -> Callable[..., float]:
    """`Slices.sample`, drawing a run by its posterior weight first; the long run is the engine's draw."""

    def _sample(self: features.Slices, arms: selection.ArmStats, context: Mapping[str, str], sigma: float,
                explore: float, warmup: int, rng: random.Random) -> float:
        runs = getattr(arms, "runs", None)
        if not runs or arms.cold(warmup):
            return sample(self, arms, context, sigma, explore, warmup, rng)
        u = rng.random() - math.exp(arms.lead)  # type: ignore[attr-defined]
        if u < 0.0:
            return sample(self, arms, context, sigma, explore, warmup, rng)
        for weight, w_in, s_in, w_out, s_out in runs:
            u -= math.exp(weight)
            if u < 0.0:
                break
        if w_in <= 0.0 or w_out <= 0.0:  # a run never seen absent: the engine's draw
            return sample(self, arms, context, sigma, explore, warmup, rng)
        spread = 1.0 / w_in + 1.0 / w_out
        return float(s_in / w_in - s_out / w_out) + explore * sigma * math.sqrt(spread) * rng.gauss(0.0, 1.0)

    return _sample


def soft_observe(observe: Callable[..., None]) -> Callable[..., None]:
    """`LessonState.observe`, stepping the runs first."""

    def _observe(self: lesson.LessonState, reward: float, injected: bool, p: float, sigma: float, policy: Any,
                 n_lessons: int = 1, context: Mapping[str, str] | None = None) -> None:
        arms = self.arms
        if isinstance(arms, SoftArms):
            arms.step(reward, injected, sigma)
        observe(self, reward, injected, p, sigma, policy, n_lessons, context)

    return _observe


def hard_restart(restart: Callable[..., None]) -> Callable[..., None]:
    """`LessonState._restart` as in the engine; the runs start afresh with the arms."""

    def _restart(self: lesson.LessonState, *excursion: float) -> None:
        restart(self, *excursion)
        if isinstance(self.arms, SoftArms):
            self.arms.forget()

    return _restart


def evidence_restart(self: lesson.LessonState, *excursion: float) -> None:
    """`LessonState._restart` without the arms: the evidence segment closes (the ledgers, the
    slices' too), the selection model is left to its runs."""
    level_w, level_s = self.ledger.level_w, self.ledger.level_s
    self.ledger = Ledger()
    self.ledger.level_w, self.ledger.level_s = level_w, level_s
    for part in self.slices.slices.values():
        part.ledger = Ledger()
    self.restarts += 1
    self._verdict_cache = None


_TARGETS = ((lesson, "ArmStats"), (features.Slices, "sample"), (lesson.LessonState, "observe"),
            (lesson.LessonState, "_restart"))


def _put(values: Sequence[Any]) -> None:
    for (owner, attr), value in zip(_TARGETS, values, strict=True):
        setattr(owner, attr, value)


@contextlib.contextmanager
def patched(every: float, hard: bool) -> Iterator[None]:
    """The selection with soft change points at hazard 1/`every` (none at 0) while the block runs."""
    saved = [getattr(owner, attr) for owner, attr in _TARGETS]
    if every:
        SoftArms.hazard = 1.0 / every
        _put([SoftArms, soft_sample(saved[1]), soft_observe(saved[2]),
              hard_restart(saved[3]) if hard else evidence_restart])
    try:
        yield
    finally:
        _put(saved)


def sweep(worlds: int, *, tuning: bool, gym_first_seed: int, settings: Sequence[Setting],
          workers: int, gym_seeds: int = 20) -> list[str]:
    """The default setting's line, then one per other setting, each paired by world against it."""
    chosen = [DEFAULT, *(s for s in settings if s != DEFAULT)]
    return sweep_frame.against_peer(
        "Soft change points", "hazard", 12, [(name_of(*s), functools.partial(patched, *s)) for s in chosen],
        ["   hazard: 1/N, the prior chance per eligible episode that the lesson's world changed; soft: the fall",
         ("   detector closes the evidence segment but leaves the arms to the runs "
          "(else it restarts both, as in the engine).")],
        worlds=worlds, tuning=tuning, gym_first_seed=gym_first_seed, gym_seeds=gym_seeds, workers=workers)


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("python tools/changepoint_sweep.py", __doc__)
    parser.add_argument("--settings", type=lambda text: [setting(s) for s in text.split(",")],
                        default=[setting(s) for s in ("200", "500", "2000", "200-", "500-", "2000-")],
                        help="comma-separated hazard inverses, each with a trailing '-' to leave the arms to the runs")
    parser.add_argument("--bench", type=setting, metavar="SETTING",
                        help="instead, python -m lamar.bench's recall + report speed at this one setting")
    args = sweep_frame.parse(parser, argv)
    if args.bench is not None:
        from lamar.bench.__main__ import main as bench

        with patched(*args.bench):
            bench(["--sizes", "10", "--backends", "memory", "--eligible", "6", "--reps", "3000"])
        return
    print("\n".join(sweep(args.worlds, tuning=args.tuning_seeds, gym_first_seed=args.gym_first_seed,
                          settings=args.settings, workers=args.workers, gym_seeds=args.gym_seeds)))


if __name__ == "__main__":
    main()
