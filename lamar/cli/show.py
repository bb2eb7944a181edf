"""`lamar show ID`: one lesson in full, where it came from, its evidence over time, its episodes."""

from __future__ import annotations

import argparse
import json
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lamar.cli.render import (
    axis_labels,
    axis_range,
    dump_json,
    filled,
    interval,
    interval_bar,
    lift,
    number,
    plural,
    scope_text,
    visible,
    when,
)
from lamar.cli.session import open_engine, resolve_id
from lamar.cli.timeline import EvidencePoint, latest_appearances, logged_counts, thin
from lamar.experience import Experience, Status
from lamar.policy.choose import REACH
from lamar.policy.config import holdout_lever
from lamar.policy.dropped import dropped_text
from lamar.policy.history import POINTS, LessonHistory
from lamar.policy.verdicts import Evidence, Verdict, no_evidence_yet

if TYPE_CHECKING:
    from lamar import Lamar

_SOURCES = {"manual": "added by hand", "sleep": "mined by sleep", "mined": "mined by sleep",
            "agent": "proposed by an agent"}
_LABELS = {"traces": "from traces", "trace_ids": "from traces", "merged_from": "merged from",
           "merged_into": "merged into"}
_CHART_ROWS = 12
_BAR_WIDTH = 33


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def provenance_lines(provenance: Mapping[str, Any]) -> list[str]:
    """Where a lesson came from, in words: by hand, mined from which traces, merged from which lessons.

    >>> provenance_lines({"source": "sleep", "traces": ["t1", "t2"], "merged_from": ["exp_a"]})
    ['mined by sleep', 'from traces: t1, t2', 'merged from: exp_a']
    >>> provenance_lines({"source": "rules", "erased": {"by": "dana", "time": 86400.0}})
    ['source: rules', 'erased: by dana at 1970-01-02 00:00 UTC']
    """
    source = str(provenance.get("source", "manual"))
    lines = [_SOURCES.get(source, f"source: {source}")]
    for key, value in provenance.items():
        if key == "source":
            continue
        label = _LABELS.get(key, key.replace("_", " "))
        if key == "erased" and isinstance(value, Mapping):  # who and when, as the audit trail words it
            at = _number(value.get("time"))
            text = f"by {visible(str(value.get('by', 'someone')))}" + (f" at {when(at)} UTC" if at else "")
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            text = ", ".join(value)
        elif isinstance(value, str):
            text = value
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{label}: {text}")
    return lines


def cmd_show(args: argparse.Namespace) -> int:
    # The engine resumes from its saved state; the lesson's history is part of that state, and
    # only the episodes listed are read from the log (from its end, or all of it for --all/--json).
    lam = open_engine(args)
    try:
        exp_id = resolve_id(lam, args.id)
        exp = lam.get(exp_id)
        ev = lam.evidence(exp.id)
        past = lam.history(exp.id)
        injected = latest_appearances(lam, exp.id, None if args.all or args.json else args.episodes)
        counts = logged_counts(lam, exp.id)
        off = coin_off(lam, exp, ev)
    finally:
        lam.close()
    trail = [(t, text) for t, text in past.trail]
    if past.trail_dropped:
        trail.insert(1, (trail[1][0], f"({past.trail_dropped} earlier entries not kept)"))
    if args.json:
        dump_json({
            **exp.to_dict(),
            "evidence": ev.to_dict(),
            "dropped": dropped_text(ev) if exp.status is not Status.RETIRED else "",
            "provenance_text": provenance_lines(exp.provenance),
            "history": [{"time": t, "event": text} for t, text in trail],
            "trajectory": [p.to_dict() for p in past.points],
            "injected_in": [a.to_dict() for a in injected],
            # --json reads the whole log: what it lacks of the count, a checkpoint took out of the log.
            "injected_before_checkpoint": max(0, past.injected_in - len(injected)),
            "held_out_in": past.held_out_in,
        })
        return 0
    _print_lesson(exp, ev)
    if off:
        print(filled(off, 110, "coin           ", " " * 15))
    print("\nprovenance")
    for line in provenance_lines(exp.provenance):
        print(f"  {line}")
    print("\nhistory (UTC)")
    for stamp, text in trail:
        print(f"  {when(stamp)}  {text}")
    _print_trajectory(past)
    print(f"\n{counts}")
    if len(injected) < past.injected_in:
        # Fewer found than asked for means the whole log was read: a checkpoint compacted the rest
        # away, and --all would find no more.
        if args.all or len(injected) < args.episodes:
            print(f"  (the {past.injected_in - len(injected)} before the store's last checkpoint are no longer "
                  f"in its log; their outcomes stay in the evidence)")
        else:
            print(f"  (the latest {len(injected)}; --all lists every one)")
    for item in injected:
        outcome = (item.signal or "not reported") if item.reward is None else \
            f"{item.signal or 'reward'} ({item.reward:+.2f})"
        print(f"  {when(item.time)}  {item.episode_id}  {outcome}")
    return 0


def coin_off(lam: Lamar, exp: Experience, ev: Evidence) -> str:
    """Why an unproven lesson that the selection still chooses gets no evidence coin where its scope is recalled,
    and the lever; "" where it gets one. Its verdict otherwise reads as coming, when nothing will bring it."""
    if exp.status is Status.RETIRED or ev.dropped or ev.verdict is not Verdict.UNKNOWN or not lam.policy.holdout:
        return ""
    rows = lam.preview(dict(exp.scope), candidates=[exp.id], draws=1).lessons
    if not rows or rows[0].holdout > 0:
        return ""
    return (f"none where its scope is recalled: at holdout={lam.policy.holdout:g} its verdict is out of reach "
            f"(at its estimated lift, {number(rows[0].estimate)}, its bound would not decide within {REACH:g} "
            f"times the {ev.eligible} episodes it has been eligible in), so it is chosen on that estimate and its "
            "verdict stays unknown; `lamar recall --dry-run KEY=VALUE ...` shows the coin in a context. "
            f"A higher holdout ({holdout_lever(store=lam.store.location)}) brings verdicts within reach sooner, at "
            "the reward the held-out episodes give up (docs/decisions.md, \"The evidence coin, and where it is "
            "spent\")")


def _print_lesson(exp: Experience, ev: Evidence) -> None:
    print(f"{exp.id}  ({exp.status.value})")
    print(exp.render())
    print(f"  precondition  {exp.precondition}")
    print(f"  action        {exp.action}")
    print(f"  rationale     {exp.rationale or '-'}")
    print(f"  scope         {scope_text(exp.scope)}")
    print(f"  created       {when(exp.created_at)} UTC")
    measure = (f"lift {lift(ev.lift, ev.lower, ev.upper, 3)}, interval {interval(ev.lower, ev.upper)} over "
               f"{plural(ev.randomized, 'randomized episode')}" if ev.measured
               else f"lift n/a: {no_evidence_yet(ev.randomized, ev.restarts)}")
    print(f"\nevidence       {ev.verdict.value}: {measure}")
    print(f"               {ev.injected} injected, {ev.held_out} held out, {ev.eligible} eligible "
          f"(reported), {plural(ev.restarts, 'restart')}; selection estimate {number(ev.estimate)}")
    if exp.status is not Status.RETIRED and ev.dropped:
        print(textwrap.fill(dropped_text(ev).removeprefix("dropped "), 110, initial_indent="dropped        ",
                            subsequent_indent=" " * 15))


_LEGEND = "chart: * lift  - interval  | zero  . outside the interval  < > the interval runs past the axis"


def _print_trajectory(past: LessonHistory) -> None:
    points: list[EvidencePoint] = list(past.points)
    print("\nevidence over time (kept by the engine as it folded the outcomes: each row is what it said right")
    print(f"after that outcome; a point every {plural(past.stride, 'reported eligible episode')}, "
          f"at most {POINTS} kept, "
          f"{min(len(points), _CHART_ROWS)} shown,\n"
          "the last row is now; seen = reported episodes where it was eligible, rand = those randomized by the\n"
          "holdout coin)")
    if not points:
        print("  no reported episode has had this lesson eligible yet")
        return
    rows = thin(points, _CHART_ROWS)
    # The scale covers every shown lift and today's interval; older, wider intervals run off it ('<', '>').
    shown_lifts = [p.lift for p in rows if lift(p.lift, p.lower, p.upper) != "n/a"]
    lo, hi = axis_range([*shown_lifts, rows[-1].lower, rows[-1].upper])
    axis = axis_labels(lo, hi, _BAR_WIDTH)
    print(f"  {'time (UTC)':<16}  {'seen':>5}  {'rand':>5}  {'verdict':<7}  {'lift':>6}  {'interval':<16}  {axis}")
    for p in rows:
        shown = lift(p.lift, p.lower, p.upper)
        bar = interval_bar(None if shown == "n/a" else p.lift, p.lower, p.upper, width=_BAR_WIDTH, lo=lo, hi=hi)
        print(f"  {when(p.time):<16}  {p.eligible:>5}  {p.randomized:>5}  {p.verdict:<7}  {shown:>6}  "
              f"{interval(p.lower, p.upper):<16}  {bar}")
    print(f"  {_LEGEND}")


__all__ = ["cmd_show", "provenance_lines"]
