"""`lamar show ID`: one lesson in full, where it came from, its evidence over time, its episodes."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from lamar.cli.render import (
    axis_labels,
    axis_range,
    dump_json,
    interval,
    interval_bar,
    lift,
    number,
    scope_text,
    when,
)
from lamar.cli.session import open_raw, resolve_id, store_location
from lamar.cli.timeline import EvidencePoint, appearances, audit_trail, replay, thin
from lamar.experience import Experience
from lamar.policy.verdicts import Evidence

_SOURCES = {"manual": "added by hand", "sleep": "mined by sleep", "mined": "mined by sleep",
            "agent": "proposed by an agent"}
_LABELS = {"traces": "from traces", "trace_ids": "from traces", "merged_from": "merged from",
           "merged_into": "merged into"}
_CHART_ROWS = 12
_BAR_WIDTH = 33


def provenance_lines(provenance: Mapping[str, Any]) -> list[str]:
    """Where a lesson came from, in words: by hand, mined from which traces, merged from which lessons.

    >>> provenance_lines({"source": "sleep", "traces": ["t1", "t2"], "merged_from": ["exp_a"]})
    ['mined by sleep', 'from traces: t1, t2', 'merged from: exp_a']
    """
    source = str(provenance.get("source", "manual"))
    lines = [_SOURCES.get(source, f"source: {source}")]
    for key, value in provenance.items():
        if key == "source":
            continue
        label = _LABELS.get(key, key.replace("_", " "))
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            text = ", ".join(value)
        elif isinstance(value, str):
            text = value
        else:
            text = json.dumps(value, ensure_ascii=False, default=str)
        lines.append(f"{label}: {text}")
    return lines


def cmd_show(args: argparse.Namespace) -> int:
    store = open_raw(store_location(args), create=False)
    try:
        events = store.read(0)
    finally:
        store.close()
    ids = [e.data["id"] for e in events if e.kind == "experience"]
    ids += [lesson["experience"]["id"] for e in events if e.kind == "snapshot" for lesson in e.data["lessons"]]
    # One fold serves both: the replay ends in the state `Lamar(store)` would fold to.
    exp_id = resolve_id(ids, args.id, store.location)
    lam, trajectory = replay(events, exp_id)
    exp = lam.get(exp_id)
    ev = lam.evidence(exp.id)
    injected, held_out = appearances(events, exp.id)
    trail = audit_trail(events, exp.id)
    if args.json:
        dump_json({
            **exp.to_dict(),
            "evidence": ev.to_dict(),
            "provenance_text": provenance_lines(exp.provenance),
            "history": [{"time": t, "event": text} for t, text in trail],
            "trajectory": [p.to_dict() for p in trajectory],
            "injected_in": [a.to_dict() for a in injected],
            "held_out_in": held_out,
        })
        return 0
    _print_lesson(exp, ev)
    print("\nprovenance")
    for line in provenance_lines(exp.provenance):
        print(f"  {line}")
    print("\nhistory (UTC)")
    for stamp, text in trail:
        print(f"  {when(stamp)}  {text}")
    _print_trajectory(trajectory)
    print(f"\ninjected in {len(injected)} episodes, held out in {held_out}")
    shown = injected if args.all else injected[-args.episodes:]
    if len(shown) < len(injected):
        print(f"  (the latest {len(shown)}; --all lists every one)")
    for item in shown:
        outcome = (item.signal or "not reported") if item.reward is None else \
            f"{item.signal or 'reward'} ({item.reward:+.2f})"
        print(f"  {when(item.time)}  {item.episode_id}  {outcome}")
    return 0


def _print_lesson(exp: Experience, ev: Evidence) -> None:
    print(f"{exp.id}  ({exp.status.value})")
    print(exp.render())
    print(f"  precondition  {exp.precondition}")
    print(f"  action        {exp.action}")
    print(f"  rationale     {exp.rationale or '-'}")
    print(f"  scope         {scope_text(exp.scope)}")
    print(f"  created       {when(exp.created_at)} UTC")
    print(f"\nevidence       {ev.verdict.value}: lift {lift(ev.lift, ev.lower, ev.upper, 3)}, "
          f"interval {interval(ev.lower, ev.upper)} over {ev.randomized} randomized episodes")
    print(f"               {ev.injected} injected, {ev.held_out} held out, {ev.eligible} eligible "
          f"(reported), {ev.restarts} restarts; selection estimate {number(ev.estimate)}")


_LEGEND = "chart: * lift  - interval  | zero  . outside the interval  < > the interval runs past the axis"


def _print_trajectory(points: list[EvidencePoint]) -> None:
    print("\nevidence over time (replayed from the store's events with default tuning: each row is")
    print("what the engine would have said right after that outcome; seen = reported episodes where it was\n"
          "eligible, rand = those randomized by the holdout coin)")
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
