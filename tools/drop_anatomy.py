"""Where a turned lesson's drop delay goes, on the family (docs/gym.md, "The anatomy of a drop").

For each fossil (a lesson lamar used when it turned harmful) it splits the task episodes until
dropped into flip -> the fall detector's first alarm and alarm -> the selection's drop, and counts
the fossils dropped with no alarm or never dropped; beside it the fading mean's drops, and the false
alarms of steady lessons by their age in injected episodes. Lamar is timed by patching the lesson's
restart in this process before the workers fork; `--lamar KEY=VALUE` tunes the engine. `--spreads`
instead sweeps the prior spread of a slice's deviation (the selection's extra noise in a context the
scope leaves free), paired with the default and with river-ts on the family and on the gym.

    python tools/drop_anatomy.py 40 --tuning-seeds --workers 1
    python tools/drop_anatomy.py 40 --tuning-seeds --workers 1 --spreads 0.1,0.05,0
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import itertools
import statistics
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from lamar.gym import sweep as sweep_frame
from lamar.gym.family import DrawnWorld
from lamar.gym.family_run import DROP_UNDER, DROP_WINDOW, USED, Slate
from lamar.gym.forgetting import FASTEST
from lamar.gym.peers import peer_class
from lamar.gym.policies import make_policy
from lamar.gym.runner import run_jobs
from lamar.policy import change, features, lesson

AGES = (50, 500, 2000)  # bins of a steady lesson's injected episodes at a false alarm
YOUNG = 2000  # the first injected episodes of a lesson, where the stop-75 hypothesis puts its false alarms
Row = dict[str, Any]

_now = [0]  # the episode the world is at, read by the patched restart (one world per process at a time)
_alarms: list[tuple[str, int, int, str, float, float, float, float]] = []  # id, t, watched, statistic, excursion


@contextmanager
def timed_restarts() -> Iterator[None]:
    """While the block runs, every restart of a lesson's selection model is noted with the episode, the
    lesson's injected episodes seen, the statistic that fired (the first, fast one or the slow one) and
    the excursion the arms restart from."""
    restart, fire = lesson.LessonState._restart, change.ChangeDetector._fire
    which = [""]

    def _fire(self: change.ChangeDetector) -> tuple[float, float, float, float]:
        which[0] = "fast" if self.stat > change.LEVEL else "slow"
        return fire(self)

    def _restart(self: lesson.LessonState, w_in: float, s_in: float, w_out: float, s_out: float) -> None:
        _alarms.append((self.experience.id, _now[0], self.detector.watched, which[0], w_in, s_in, w_out, s_out))
        restart(self, w_in, s_in, w_out, s_out)

    lesson.LessonState._restart = _restart  # type: ignore[method-assign]
    change.ChangeDetector._fire = _fire  # type: ignore[method-assign]
    try:
        yield
    finally:
        lesson.LessonState._restart = restart  # type: ignore[method-assign]
        change.ChangeDetector._fire = fire  # type: ignore[method-assign]


def run(seed: int, name: str, tuning: Sequence[tuple[str, float]] = ()) -> Row:
    """One policy on one drawn world, as `lamar.gym.family_run.run_world` runs it: each used fossil's
    drop (task episodes from its flip) and, for lamar, its alarms and the steady lessons' ones."""
    world = DrawnWorld(seed)
    peer = peer_class(name)
    chooser = peer(world, world.k, seed) if peer is not None else make_policy(  # type: ignore[arg-type]
        name, world, world.k, seed, dict(tuning))  # type: ignore[arg-type]
    slate = Slate(world)
    pending: list[tuple[int, int, object, Any]] = []
    seen = [0] * len(world.lessons)  # reported injected episodes: the detector's count of a lesson's age
    del _alarms[:]
    for t in range(world.episodes):
        _now[0] = t
        task = world.tasks[t]
        injected, _ = chooser.choose(t, task)
        slate.note(t, task, injected)
        if world.reported[t]:
            for i in injected:
                seen[i] += 1
            heapq.heappush(pending, (t + world.delays[t], t, chooser.ticket, world.outcome(t, injected)))
        while pending and pending[0][0] <= t:
            _, _, ticket, signal = heapq.heappop(pending)
            chooser.learn(signal, ticket)
    by_id = {item.id: item for item in world.lessons}
    alarms: dict[int, list[tuple[int, int, str, float, float, float, float]]] = {}
    for lesson_id, t, watched, which, *excursion in _alarms:
        item = by_id[lesson_id]
        # as a task episode: the alarm acts from the lesson's next task episode on
        at = bisect.bisect_right(slate.times[item.task], t)
        alarms.setdefault(item.index, []).append((at, watched, which, *excursion))
    fossils = [_fossil(world, slate, item, alarms.get(item.index, [])) for item in world.lessons
               if item.flip_at is not None and item.after < 0.0]
    steady = [{"alarms": [a[1] for a in alarms.get(item.index, [])], "watched": seen[item.index]}
              for item in world.lessons if item.kind == "helpful"]
    return {"world": seed, "policy": name, "fossils": [f for f in fossils if f is not None], "steady": steady,
            "languages": bool(world.languages)}


def _fossil(world: DrawnWorld, slate: Slate, item: Any, alarms: list[tuple[int, int, str, float, float, float, float]]
            ) -> Row | None:
    """A used fossil's drop as `family_run._fossil_columns` reads it, with its first alarm after the flip."""
    times, hits = slate.times[item.task], slate.hits[item.index]
    flip = bisect.bisect_left(times, item.flip_at)
    before, after = hits[max(0, flip - 100):flip], hits[flip:]
    if not before or sum(before) < USED * len(before) or len(after) < DROP_WINDOW:
        return None
    drop = next((i for i in range(len(after) - DROP_WINDOW + 1)
                 if sum(after[i:i + DROP_WINDOW]) < DROP_UNDER * DROP_WINDOW), len(after))
    late = [a for a in alarms if a[0] >= flip]
    first = late[0] if late else None
    row: Row = {"drop": drop, "censored": drop == len(after), "fall": item.effect - item.after,
                "alarm": None if first is None else first[0] - flip, "alarms": sum(a[0] - flip < drop for a in late),
                "injected_to_drop": sum(after[:drop]),
                # reported injected episodes, the detector's count, before the flip and in the whole run
                "seen_at_flip": sum(hit and world.reported[t] for t, hit in zip(times[:flip], hits, strict=False)),
                "seen": sum(hit and world.reported[t] for t, hit in zip(times, hits, strict=False))}
    row["armed"] = row["seen_at_flip"] >= change.WATCH_AFTER
    if first is not None:
        w_in, _, w_out, _ = first[3:]
        row.update(statistic=first[2], excursion_in=w_in, excursion_out=w_out,
                   injected_after_alarm=sum(after[first[0] - flip:drop]) if first[0] - flip < drop else 0)
    return row


def _job(args: tuple[int, str, tuple[tuple[str, float], ...]]) -> Row:
    seed, name, tuning = args
    if name == "lamar":
        with timed_restarts():
            return run(seed, name, tuning)
    return run(seed, name, tuning)


def anatomy(seeds: Sequence[int], *, tuning: Sequence[tuple[str, float]] = (), workers: int = 1) -> list[Row]:
    """lamar's and the fading mean's rows, one per (world, policy)."""
    jobs = [(seed, name, tuple(tuning)) for seed in seeds for name in ("lamar", FASTEST)]
    return run_jobs(_job, jobs, workers, None)


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def _mean(values: Sequence[float]) -> str:
    return f"{statistics.mean(values):.0f}" if values else "-"


def _world_median(rows: Sequence[Row], policy: str, drop: Callable[[Row], float]) -> str:
    """The family table's "dropped after": the median over worlds of each world's median fossil drop."""
    worlds = [sorted(drop(f) for f in row["fossils"]) for row in rows if row["policy"] == policy and row["fossils"]]
    return _median([w[len(w) // 2] for w in worlds])


def alarmed(fossil: Row) -> bool:
    """The fall detector fired on the fossil before its drop was confirmed (a report comes late, so
    the last injection before the drop may be read, and fire, a few episodes into the drop window)."""
    return fossil["alarm"] is not None and fossil["alarm"] < fossil["drop"] + DROP_WINDOW


def split(fossil: Row) -> tuple[float, float]:
    """(a) flip -> first alarm and (b) alarm -> dropped, for an alarmed fossil."""
    first = min(fossil["alarm"], fossil["drop"])
    return first, fossil["drop"] - first


def report(rows: Sequence[Row], title: str) -> list[str]:
    """The split of lamar's drop delay, the counterfactual drops, and the false alarms by age."""
    mine = [f for row in rows if row["policy"] == "lamar" for f in row["fossils"]]
    theirs = [f for row in rows if row["policy"] == FASTEST for f in row["fossils"]]
    drops, fast = [f["drop"] for f in mine], [f["drop"] for f in theirs]
    lines = [title, f"{'':<50}{'fossils':>8}{'median':>8}{'mean':>8}{'of the sum':>12}{'censored':>10}",
             (f"{'lamar: task episodes until dropped':<50}{len(mine):>8}{_median(drops):>8}{_mean(drops):>8}"
             f"{'':>12}{sum(f['censored'] for f in mine):>10}"),
             (f"{f'{FASTEST}: the same, its own fossils':<50}{len(theirs):>8}{_median(fast):>8}{_mean(fast):>8}"
             f"{'':>12}{sum(f['censored'] for f in theirs):>10}")]
    if not mine or not fast:
        return lines
    on = [f for f in mine if alarmed(f)]
    armed = [f for f in mine if not alarmed(f) and f["armed"]]
    unarmed = [f for f in mine if not alarmed(f) and not f["armed"]]
    parts = [("(a) alarmed: flip -> first alarm", on, [split(f)[0] for f in on]),
             ("(b) alarmed: alarm -> dropped", on, [split(f)[1] for f in on]),
             ("(c) never alarmed, armed at the flip", armed, [f["drop"] for f in armed]),
             ("(c') never alarmed, not armed at the flip", unarmed, [f["drop"] for f in unarmed])]
    for label, group, values in parts:
        lines.append(f"  {label:<48}{len(group):>8}{_median(values):>8}{_mean(values):>8}"
                     f"{f'{100 * sum(values) / sum(drops):.0f}%':>12}{sum(f['censored'] for f in group):>10}")
    mean_gap = statistics.mean(drops) - statistics.mean(fast)
    median_gap = statistics.median(drops) - statistics.median(fast)
    lines.append(f"  gap to {FASTEST}: mean {mean_gap:.0f}, median {median_gap:.0f} task episodes (pooled fossils); "
                 f"dropped after (median of the worlds' medians) {_world_median(rows, 'lamar', lambda f: f['drop'])} "
                 f"against {_world_median(rows, FASTEST, lambda f: f['drop'])}")
    typical = statistics.median(split(f)[0] for f in on) if on else 0.0
    counterfactual = [("(b) = 0: dropped at the first alarm", lambda f: split(f)[0] if alarmed(f) else f["drop"]),
                      ("(c), (c') alarmed as the median alarmed one",
                       lambda f: f["drop"] if alarmed(f) else min(f["drop"], typical)),
                      ("both", lambda f: split(f)[0] if alarmed(f) else min(f["drop"], typical))]
    for label, drop in counterfactual:
        values = [drop(f) for f in mine]
        closes = [(statistics.mean(drops) - statistics.mean(values)) / mean_gap if mean_gap > 0 else 0.0,
                  (statistics.median(drops) - statistics.median(values)) / median_gap if median_gap > 0 else 0.0]
        lines.append(f"  if {label:<44} median {_median(values):>4}, mean {_mean(values):>4}, dropped after "
                     f"{_world_median(rows, 'lamar', drop):>4}: closes {100 * closes[0]:.0f}% of the mean gap, "
                     f"{100 * closes[1]:.0f}% of the median's")
    lines += _alarm_lines(on, mine)
    lines.append(_language_line(rows))
    lines += _age_lines([s for row in rows if row["policy"] == "lamar" for s in row["steady"]])
    return lines


def _alarm_lines(alarmed: Sequence[Row], mine: Sequence[Row]) -> list[str]:
    """What the first alarm was and what the selection did after it."""
    if not alarmed:
        return []
    slow = sum(f["statistic"] == "slow" for f in alarmed)
    falls = sorted(f["fall"] for f in mine)
    small = [split(f) for f in alarmed if f["fall"] < 0.3]
    big = [split(f) for f in alarmed if f["fall"] >= 0.3]
    return [(f"  first alarms by the slow statistic: {slow} of {len(alarmed)}; excursion at the alarm, median "
            f"{_median([f['excursion_in'] for f in alarmed])} injected and "
            f"{_median([f['excursion_out'] for f in alarmed])} absent episodes"),
            (f"  injected episodes between the alarm and the drop: median "
            f"{_median([f['injected_after_alarm'] for f in alarmed])}, mean "
            f"{_mean([f['injected_after_alarm'] for f in alarmed])}; restarted again before the drop: "
            f"{sum(f['alarms'] > 1 for f in alarmed)} fossils"),
            (f"  falls in success: median {statistics.median(falls):.2f}; (a) / (b) medians for falls under 0.3: "
            f"{_median([a for a, _ in small])} / {_median([b for _, b in small])} ({len(small)}), "
            f"0.3 and more: {_median([a for a, _ in big])} / {_median([b for _, b in big])} ({len(big)})")]


def _language_line(rows: Sequence[Row]) -> str:
    """The drops in worlds with a language key the scopes leave free (the selection's slices) and without."""
    cells = []
    for languages in (True, False):
        mine = [f for row in rows if row["policy"] == "lamar" and row["languages"] is languages for f in row["fossils"]]
        theirs = [f["drop"] for row in rows if row["policy"] == FASTEST and row["languages"] is languages
                  for f in row["fossils"]]
        cells.append(f"{'with' if languages else 'without'} a language key, lamar {_median([f['drop'] for f in mine])}"
                     f" ({len(mine)}, {sum(not alarmed(f) for f in mine)} never alarmed), {FASTEST} "
                     f"{_median(theirs)} ({len(theirs)})")
    return "  median drop in worlds " + "; ".join(cells)


def _age_lines(steady: Sequence[Row]) -> list[str]:
    """False alarms of lessons that help throughout, per 1 000 injected episodes by the lesson's age."""
    edges = (*AGES, float("inf"))
    cells = []
    for low, high in itertools.pairwise(edges):
        exposure = sum(max(0.0, min(s["watched"], high) - low) for s in steady)
        count = sum(low <= a < high for s in steady for a in s["alarms"])
        label = f"{low}-{high:g}" if high != float("inf") else f">= {low}"
        cells.append(f"{label}: {count} in {exposure / 1000:.0f}k ({1000 * count / exposure:.2f})" if exposure
                     else f"{label}: -")
    armed = [s for s in steady if s["watched"] > AGES[0]]
    grown = [s for s in steady if s["watched"] >= YOUNG]
    young = sum(any(a < YOUNG for a in s["alarms"]) for s in grown)
    return [f"  steady helpful lessons' false alarms by injected episodes seen (per 1 000): {'; '.join(cells)}",
            (f"  of {len(armed)} armed steady lessons, {sum(bool(s['alarms']) for s in armed)} met a false alarm; of "
            f"{len(grown)} that reached {YOUNG} injected episodes, {young} "
            f"({100 * young / len(grown) if grown else 0:.0f}%) met one in their first {YOUNG}")]


def _tuning(text: str) -> tuple[str, float]:
    key, _, value = text.partition("=")
    try:
        return key, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes KEY=NUMBER, e.g. explore=0.5; got {text!r}") from None


def spread_sweep(spreads: Sequence[float], *, worlds: int, tuning: bool, gym_first_seed: int, gym_seeds: int,
                 workers: int) -> list[str]:
    """The default's line, then one per slice spread, paired with it and with river-ts."""
    settings: list[tuple[str, Callable[[], AbstractContextManager[object]]]] = [
        ("default", lambda: sweep_frame.slice_spread(features.SLICE_SPREAD))]
    settings += [(f"tau {tau:g}", lambda tau=tau: sweep_frame.slice_spread(tau)) for tau in spreads]
    return sweep_frame.against_peer(
        "The slices' prior spread", "spread", 10, settings,
        [(f"   spread: the prior spread tau of a slice's deviation from the lesson's lift (default "
         f"{features.SLICE_SPREAD:g})")],
        worlds=worlds, tuning=tuning, gym_first_seed=gym_first_seed, gym_seeds=gym_seeds, workers=workers)


def main(argv: Sequence[str] | None = None) -> None:
    parser = sweep_frame.parser("python tools/drop_anatomy.py", __doc__)
    parser.set_defaults(workers=1)
    parser.add_argument("--lamar", type=_tuning, action="append", default=[], help="KEY=VALUE for lamar's engine")
    parser.add_argument("--spreads", type=lambda text: [float(v) for v in text.split(",")],
                        help="instead, sweep the slices' prior spread over these values (comma separated)")
    parser.add_argument("--spread", type=float, help="the anatomy with the slices' prior spread set to this")
    args = sweep_frame.parse(parser, argv)
    if args.spreads is not None:
        print("\n".join(spread_sweep(args.spreads, worlds=args.worlds, tuning=args.tuning_seeds,
                                     gym_first_seed=args.gym_first_seed, gym_seeds=args.gym_seeds,
                                     workers=args.workers)))
        return
    seeds = sweep_frame.family_seeds(args.worlds, args.tuning_seeds)
    with sweep_frame.slice_spread(features.SLICE_SPREAD if args.spread is None else args.spread):
        rows = anatomy(seeds, tuning=args.lamar, workers=args.workers)
    kind = "tuning" if args.tuning_seeds else "reporting"
    title = (f"The anatomy of a drop on the family ({len(seeds)} {kind} worlds, seeds {seeds.start}-{seeds.stop - 1})"
             + (f", lamar with {','.join(f'{k}={v:g}' for k, v in args.lamar)}" if args.lamar else "")
             + ("" if args.spread is None else f", the slices' prior spread {args.spread:g}"))
    print("\n".join(report(rows, title)))


if __name__ == "__main__":
    main()
