"""`lamar html`: one self-contained page (inline SVG and CSS, no scripts, no network).

A forest plot of every lesson's lift and interval coloured by verdict, injections and
holdouts over time, and a table with one row per lesson.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from html import escape
from pathlib import Path

from lamar.cli.outputs import HTML_GENERATOR, check_output, is_html_page
from lamar.cli.render import axis_range, interval, lift, scope_text, shorten, when
from lamar.cli.session import open_engine
from lamar.experience import Experience
from lamar.policy.verdicts import Evidence
from lamar.store.base import Event

COLOURS = {"helps": "#1a7f37", "harms": "#cf222e", "unknown": "#6e7781"}
_ROW = 22
_LABEL = 190
_PLOT = 520
_BINS = 40

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1f2328; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #d0d7de; padding: 4px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.helps { color: #1a7f37; } .harms { color: #cf222e; } .unknown { color: #6e7781; }
tr.retired { opacity: 0.55; } code { font-size: 12px; }
svg text { font: 11px system-ui, sans-serif; fill: #1f2328; }
"""


def _svg_open(width: float, height: float, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
            f'aria-label="{label}">')


def forest_plot(rows: Sequence[tuple[Experience, Evidence]]) -> str:
    """SVG: one row per lesson, the interval as a line, the lift as a dot, colour = verdict."""
    lo, hi = axis_range([v for _, ev in rows if interval(ev.lower, ev.upper) != "n/a"
                         for v in (ev.lower, ev.upper, ev.lift)])
    height = _ROW * len(rows) + 40

    def x(value: float) -> float:
        clipped = min(max(value, lo), hi)
        return _LABEL + (clipped - lo) / (hi - lo) * _PLOT

    parts = [_svg_open(_LABEL + _PLOT + 20, height, "forest plot of lesson lifts")]
    tick = lo
    while tick <= hi + 1e-9:
        parts.append(f'<line x1="{x(tick):.1f}" y1="10" x2="{x(tick):.1f}" y2="{height - 25}" '
                     f'stroke="{"#57606a" if tick == 0 else "#eaeef2"}"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 10}" text-anchor="middle">{tick:+.1f}</text>')
        tick += 0.5
    for i, (exp, ev) in enumerate(rows):
        y = 20 + i * _ROW
        colour = COLOURS[ev.verdict.value]
        opacity = "0.5" if exp.status.value == "retired" else "1"
        tip = (f"{exp.id} ({exp.status.value}, {ev.verdict.value}): lift "
               f"{lift(ev.lift, ev.lower, ev.upper)} {interval(ev.lower, ev.upper)}")
        parts.append(f'<g class="lesson" data-id="{escape(exp.id)}" opacity="{opacity}">'
                     f"<title>{escape(tip)}</title>")
        parts.append(f'<text x="4" y="{y + 4}">{escape(exp.id)}</text>')
        lower, upper = ev.lower, ev.upper
        if math.isfinite(lower) or math.isfinite(upper):
            dashed = "" if math.isfinite(lower) and math.isfinite(upper) and lo <= lower and upper <= hi \
                else ' stroke-dasharray="4 3"'  # runs off the axis: the bound is wider than shown
            parts.append(f'<line x1="{x(lower):.1f}" y1="{y}" x2="{x(upper):.1f}" y2="{y}" '
                         f'stroke="{colour}" stroke-width="2"{dashed}/>')
        else:
            parts.append(f'<text x="{x(0.0) + 6:.1f}" y="{y + 4}" fill="{colour}">no interval yet</text>')
        if lift(ev.lift, lower, upper) != "n/a":
            parts.append(f'<circle cx="{x(ev.lift):.1f}" cy="{y}" r="4" fill="{colour}"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def injection_chart(events: Sequence[Event]) -> str:
    """SVG: stacked bars per time bin, lessons injected (blue) and held out (orange)."""
    episodes = [e for e in events if e.kind == "episode"]
    if not episodes:
        return "<p>No episodes yet.</p>"
    start, end = episodes[0].time, episodes[-1].time
    span = max(end - start, 1e-9)
    injected = [0] * _BINS
    held = [0] * _BINS
    for e in episodes:
        b = min(int((e.time - start) / span * _BINS), _BINS - 1)
        injected[b] += len(e.data.get("injected", ()))
        held[b] += len(e.data.get("held_out", ()))
    peak = max(max(i + h for i, h in zip(injected, held)), 1)
    width, height, base = _LABEL + _PLOT, 180, 150
    bar = _PLOT / _BINS
    parts = [_svg_open(width + 20, height, "injections over time"),
             f'<text x="4" y="20">peak {peak} per bin</text>',
             '<text x="4" y="40" fill="#0969da">injected</text><text x="4" y="56" fill="#bc4c00">held out</text>']
    for b in range(_BINS):
        x0 = _LABEL + b * bar
        h_in = injected[b] / peak * 130
        h_out = held[b] / peak * 130
        parts.append(f'<rect class="injected" x="{x0:.1f}" y="{base - h_in:.1f}" width="{bar - 1:.1f}" '
                     f'height="{h_in:.1f}" fill="#0969da"><title>{injected[b]} injected</title></rect>')
        parts.append(f'<rect class="held" x="{x0:.1f}" y="{base - h_in - h_out:.1f}" width="{bar - 1:.1f}" '
                     f'height="{h_out:.1f}" fill="#bc4c00"><title>{held[b]} held out</title></rect>')
    parts.append(f'<text x="{_LABEL}" y="{height - 8}">{when(start)} UTC</text>')
    parts.append(f'<text x="{width}" y="{height - 8}" text-anchor="end">{when(end)} UTC</text>')
    parts.append("</svg>")
    return "".join(parts)


def lesson_table(rows: Sequence[tuple[Experience, Evidence]]) -> str:
    head = ("<tr><th>id</th><th>status</th><th>verdict</th><th>lift</th><th>interval</th><th>randomized</th>"
            "<th>injected</th><th>held out</th><th>scope</th><th>lesson</th></tr>")
    body = []
    for exp, ev in rows:
        verdict = ev.verdict.value
        body.append(
            f'<tr class="lesson {escape(exp.status.value)}" data-id="{escape(exp.id)}">'
            f"<td><code>{escape(exp.id)}</code></td><td>{escape(exp.status.value)}</td>"
            f'<td class="{verdict}">{verdict}</td>'
            f'<td class="num">{lift(ev.lift, ev.lower, ev.upper)}</td>'
            f"<td>{escape(interval(ev.lower, ev.upper))}</td><td class=\"num\">{ev.randomized}</td>"
            f'<td class="num">{ev.injected}</td><td class="num">{ev.held_out}</td>'
            f"<td>{escape(scope_text(exp.scope))}</td><td>{escape(exp.render())}</td></tr>")
    return f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"


def render_page(rows: Sequence[tuple[Experience, Evidence]], events: Sequence[Event], location: str) -> str:
    """The whole page as one string."""
    counts = {v: sum(ev.verdict.value == v for _, ev in rows) for v in COLOURS}
    summary = ", ".join(f'<span class="{v}">{n} {v}</span>' for v, n in counts.items())
    forest = forest_plot(rows) if rows else "<p>No lessons yet.</p>"
    return (
        f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{HTML_GENERATOR}"
        f"<title>Lamar: {escape(shorten(location, 60))}</title><style>{_CSS}</style></head><body>"
        f"<h1>What the agent believes</h1><p>Store <code>{escape(location)}</code>, "
        f"{len(rows)} lessons ({summary}), {len(events)} events; generated {when(time.time())} UTC.</p>"
        "<h2>Lift of each lesson</h2><p>Dot: measured lift on reward from randomized holdouts; line: its "
        "anytime-valid interval (dashed where it runs past the axis). Helps when the whole line is right "
        "of zero, harms when left.</p>"
        f"{forest}<h2>Injections over time</h2>{injection_chart(events)}"
        f"<h2>Lessons</h2>{lesson_table(rows)}</body></html>\n"
    )


def cmd_html(args: argparse.Namespace) -> int:
    check_output(args.out, ours=is_html_page, what="the HTML page", force=args.force)
    lam = open_engine(args)
    try:
        rows = [(exp, lam.evidence(exp.id)) for exp in lam.experiences()]
        events = lam.store.read(0)
        location = lam.store.location
    finally:
        lam.close()
    page = render_page(rows, events, location)
    Path(args.out).write_text(page, encoding="utf-8")
    print(f"wrote {args.out} ({len(rows)} lessons, {len(page)} bytes)")
    return 0
