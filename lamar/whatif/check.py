"""The coverage check on the gym: `python -m lamar.whatif.check` runs the engine on seeded worlds,
evaluates each alternative from the log, and counts how often each 95% interval and sequence
covers the value the world's truth gives that alternative over the same episodes."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from lamar.audit.summary import clopper_pearson
from lamar.gym.config import GymConfig
from lamar.gym.policies import LamarPolicy
from lamar.gym.world import Kind, World, reward_gap
from lamar.signals import Signal
from lamar.whatif.alternatives import Alternative, Holdout, NoMemory, Proven, Slots, Today, Without
from lamar.whatif.ask import beliefs_of
from lamar.whatif.estimators import ESTIMATORS, slate_weight
from lamar.whatif.log import Log, LoggedEpisode, read_log
from lamar.whatif.model import FOLDS, OUTCOMES, fold_lifts
from lamar.whatif.report import HEADLINE, THIN, evaluate

_FAIL_REWARD = (Signal.REVERTED.reward + Signal.CORRECTED.reward + Signal.REASKED.reward) / 3.0


@dataclasses.dataclass(frozen=True)
class Run:
    """One seeded world with the engine run through it, and what its log contains."""

    world: World
    policy: LamarPolicy
    episodes: list[LoggedEpisode]
    times: dict[str, int]  # episode id -> the world's episode number


@contextlib.contextmanager
def reach_rule(on: bool) -> Iterator[None]:
    """The engine's reach rule as asked, for what runs inside (off: a coin whenever a verdict is
    undecided, so which episodes carry a coin no longer depends on their outcomes). An experiment,
    not a knob: it sets the module constant, so worker processes forked inside see it too."""
    from lamar.policy import choose

    default = choose.REACH
    choose.REACH = default if on else 1e12  # off: every undecided verdict counts as within reach
    try:
        yield
    finally:
        choose.REACH = default


def run_world(seed: int, episodes: int, k: int, tuning: Mapping[str, float] | None = None) -> Run:
    """Drive the engine (tuned by `tuning`, fields of `Policy`) through `episodes` of the gym's
    default world (every episode reported at once)."""
    world = World(seed, episodes)
    policy = LamarPolicy(world, k, seed, dict(tuning or {}))
    times: dict[str, int] = {}
    for t in range(episodes):
        injected, _ = policy.choose(t, world.tasks[t])
        times[str(policy.ticket)] = t
        policy.learn(world.outcome(t, injected), policy.ticket)
    return Run(world, policy, read_log(policy.lam.store, cache=False).episodes, times)


def alternatives_for(run: Run) -> list[Alternative]:
    """The alternatives the check evaluates on one run: each kind the engine names, `without:`
    for the fossil and for a lesson that helps throughout."""
    beliefs = beliefs_of(run.policy.lam)
    world = run.world
    helpful = next(lesson.id for lesson in world.lessons if lesson.kind is Kind.TRUE)
    alternatives: list[Alternative] = [NoMemory(), Proven(beliefs), Today(beliefs), Holdout(0.0),
                                       Holdout(0.3), Without(world.lessons[world.fossil].id), Without(helpful)]
    lifts = fold_lifts(Log.of(run.episodes))
    alternatives += [Slots(k, beliefs, lifts) for k in range(1, beliefs.k)]
    return alternatives


def truth(run: Run, alternative: Alternative) -> dict[str, float] | None:
    """The alternative's true mean reward and success over the run's supported episodes, from the
    world's success probabilities (every slate the alternative could inject, weighed exactly)."""
    world, index = run.world, run.policy.index
    gap = reward_gap()
    total = 0.0
    n = 0
    for j, episode in enumerate(run.episodes):
        slate = episode.slate
        changes = alternative.changes(slate, j % FOLDS)
        if slate_weight(slate.p, slate.injected, changes) is None:
            continue
        t = run.times[episode.id]
        inclusion = {i: changes.get(i, p) for i, p in slate.p.items()}
        total += _expected_success(world, t, {index[i]: q for i, q in inclusion.items()})
        n += 1
    if not n:
        return None
    success = total / n
    return {"reward": _FAIL_REWARD + gap * success, "success": success}


def _expected_success(world: World, t: int, inclusion: Mapping[int, float]) -> float:
    return expected_over_coins(inclusion, lambda injected: world.success_probability(t, injected))


def expected_over_coins(inclusion: Mapping[int, float], success: Callable[[list[int]], float]) -> float:
    """The expected `success(injected)` when each lesson is injected with its own probability."""
    certain = [i for i, q in inclusion.items() if q >= 1.0]
    coins = [(i, q) for i, q in inclusion.items() if 0.0 < q < 1.0]
    expected = 0.0
    for draws in itertools.product((False, True), repeat=len(coins)):
        chance = 1.0
        injected = list(certain)
        for (lesson, q), drawn in zip(coins, draws, strict=True):
            chance *= q if drawn else 1.0 - q
            if drawn:
                injected.append(lesson)
        expected += chance * success(injected)
    return expected


INTERVALS = ("95%", "anytime")  # each estimate's interval for one reading of the log, and its confidence sequence


def coverage_rows(seeds: Iterable[int], episodes: int, k: int,
                  tuning: Mapping[str, float] | None = None) -> list[dict[str, object]]:
    """One flat row per (seed, alternative, outcome, estimator, interval): the estimate, that
    interval, the truth."""
    rows: list[dict[str, object]] = []
    for seed in seeds:
        run = run_world(seed, episodes, k, tuning)
        alternatives = alternatives_for(run)
        for alternative, report in zip(alternatives, evaluate(run.episodes, alternatives), strict=True):
            true = truth(run, alternative)
            if true is None or not report.evaluable:
                continue
            for outcome in OUTCOMES:
                estimates = report.reward if outcome == "reward" else report.success
                for name in ESTIMATORS:
                    for interval, e in zip(INTERVALS, (estimates[name], estimates[name].anytime()), strict=True):
                        rows.append({"seed": seed, "policy": label(alternative, run), "outcome": outcome,
                                     "estimator": name, "interval": interval, "estimate": e.value, "lower": e.lower,
                                     "upper": e.upper, "se": e.se, "truth": true[outcome],
                                     "covered": e.covers(true[outcome]), "outside": report.outside,
                                     "thin": "thin" if report.thin else "not thin"})
    return rows


def label(alternative: Alternative, run: Run) -> str:
    """The alternative's name, a lesson named by its role rather than its id (ids vary by seed)."""
    if isinstance(alternative, Without):
        kind = next(lesson.kind for lesson in run.world.lessons if lesson.id == alternative.lesson)
        return f"without:{kind}"
    return alternative.name


@dataclasses.dataclass(frozen=True)
class Coverage:
    """How often one group's intervals held the truth, with the Clopper-Pearson 95% interval of
    that rate, the mean error of the estimates, the mean width of the intervals and the spread of
    the errors in standard errors (the root mean square of (estimate - truth) / its standard
    error over the estimates that are not thin: about 1 when the standard errors are right, above
    1 when the errors spread wider)."""

    key: tuple[str, ...]
    covered: int
    n: int
    bias: float
    width: float
    spread: float = math.nan

    @property
    def rate(self) -> float:
        return self.covered / self.n

    def line(self) -> str:
        lo, hi = clopper_pearson(self.covered, self.n)
        return (" | ".join(self.key) + f" | {self.covered}/{self.n} | {100 * self.rate:.1f}% "
                f"[{100 * lo:.1f}, {100 * hi:.1f}] | {self.bias:+.4f} | {self.width:.4f} | "
                + (f"{self.spread:.2f}" if math.isfinite(self.spread) else "-"))


def summarize(rows: Sequence[Mapping[str, object]], by: Sequence[str]) -> list[Coverage]:
    """Coverage per group of rows (grouped by the columns `by`), in first-seen order."""
    groups: dict[tuple[str, ...], list[Mapping[str, object]]] = {}
    for row in rows:
        groups.setdefault(tuple(str(row[key]) for key in by), []).append(row)
    out = []
    for key, members in groups.items():
        # An estimate with no weight at all (SNIPS where the alternative's slate never happened)
        # is NaN: it counts as a miss, and stays out of the mean error and width.
        given = [row for row in members if math.isfinite(_number(row, "estimate"))]
        errors = [_number(row, "estimate") - _number(row, "truth") for row in given]
        widths = [_number(row, "upper") - _number(row, "lower") for row in given]
        # A thin estimate's sample spread can be near zero (few, equal outcomes), which says nothing
        # about the spread: its interval rests on `narrowest`, and it is left out of this column.
        scaled = [(error / _number(row, "se")) ** 2 for row, error in zip(given, errors, strict=True)
                  if row["thin"] == "not thin" and 0.0 < _number(row, "se") < math.inf]
        out.append(Coverage(key, sum(1 for row in members if row["covered"]), len(members),
                            sum(errors) / len(errors) if errors else math.nan,
                            sum(widths) / len(widths) if widths else math.nan,
                            math.sqrt(sum(scaled) / len(scaled)) if scaled else math.nan))
    return out


def _number(row: Mapping[str, object], key: str) -> float:
    value = row[key]
    assert isinstance(value, (int, float))
    return float(value)


def table(summary: Sequence[Coverage], by: Sequence[str]) -> str:
    """A markdown table of `summarize`'s rows."""
    head = " | ".join(by) + " | covered | coverage [95% CP] | mean error | mean width | error in SEs (rms)"
    return "\n".join([head, "|".join("---" for _ in range(len(by) + 5)), *(row.line() for row in summary)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.whatif.check", description=__doc__)
    parser.add_argument("--seeds", type=int, default=20, help="worlds to run (default 20)")
    parser.add_argument("--first-seed", type=int, default=0, help="the first seed (default 0)")
    parser.add_argument("--episodes", type=int, default=GymConfig().episodes, help="episodes per world")
    parser.add_argument("--k", type=int, default=GymConfig().k, help="slots per recall (the gym's default)")
    parser.add_argument("--reach-off", action="store_true",
                        help="an experiment: the engine flips a coin whenever a verdict is undecided (its reach "
                             "rule off), so which episodes carry a coin no longer depends on their outcomes")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.first_seed < 0 or args.k < 1 or args.episodes < 100:
        parser.error("--seeds is at least 1, --first-seed at least 0, --k at least 1 (an engine with no slot logs "
                     "no coin) and --episodes at least 100, as the gym's (the world changes at half)")
    with reach_rule(not args.reach_off):
        rows = coverage_rows(range(args.first_seed, args.first_seed + args.seeds), args.episodes, args.k)
    print(f"{args.seeds} worlds x {args.episodes} episodes, k = {args.k}"
          + (", reach rule off" if args.reach_off else "")
          + "; coverage = share of intervals that hold the world's true value;\n95%: the interval for one reading "
          "of the log (what the report quotes), anytime: the confidence sequence beside it\n")
    (quoted,) = summarize([row for row in rows if row["estimator"] == HEADLINE and row["interval"] == "95%"],
                          ("estimator", "interval"))
    low, high = clopper_pearson(quoted.covered, quoted.n)
    print(f"the report's {HEADLINE} 95% intervals, over seeds, alternatives and outcomes: {quoted.covered}/{quoted.n}, "
          f"{100 * quoted.rate:.1f}% [{100 * low:.1f}, {100 * high:.1f}] (95% Clopper-Pearson)\n")
    for by in (("interval", "estimator"), ("interval", "estimator", "outcome")):
        print(table(summarize(rows, by), by))
        print()
    print(f"thin: under {THIN:.0f} effective episodes under the exact slate weights, as seen or as the coins "
          "predict (the report flags them)\n")
    print(table(summarize(rows, ("interval", "estimator", "thin")), ("interval", "estimator", "thin")))
    print()
    print(table(summarize(rows, ("interval", "policy", "estimator")), ("interval", "policy", "estimator")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
