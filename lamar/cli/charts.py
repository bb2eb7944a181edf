"""The SVG pictures of what the agent believes, shared by `lamar html` and `lamar ui`: each one
self-contained `<svg>` string, with no script, no outside reference, and every piece of lesson text escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from lamar.cli.isolate import label_marked, lesson_marked, marked
from lamar.cli.render import axis_range, lift, plural, when
from lamar.cli.standing import (
    STANDINGS,
    colour,
    no_evidence,
    shown_interval,
    standing,
    status_label,
)
from lamar.experience import Experience
from lamar.policy.verdicts import Evidence
from lamar.store.base import Store

COLOURS = {"helps": "#1a7f37", "harms": "#cf222e", "unknown": "#6e7781"}
INJECTED = "#0969da"
HELD_OUT = "#8250df"  # not the orange of "dropped": a held-out slot is no judgement
_ROW = 22
_LABEL = 260
_PLOT = 520
_BINS = 40
_SINCE = {1: " since the restart", 2: " since the last restart"}
# The forest plot's labels: room for the start of what to do after a condition that lessons of one heading share.
_NAMES, _LABEL_CHARS = 300, 44


def _svg_open(width: float, height: float, label: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{escape(label)}">')


def _rule(tick: float) -> str:
    """A gridline's attributes: the zero of a lift is a mark to read against (dark); the other ticks are
    the grid, a faint guide that says nothing by itself (class "grid")."""
    return ' stroke="#57606a"' if abs(tick) < 1e-9 else ' class="grid" stroke="#eaeef2"'


def _hollow(x: float, y: float, paint: str, kind: str = "hollow") -> str:
    """A retired lesson's dot (or, `kind` "swatch hollow", its legend's): an outline in its standing's colour,
    not a faded dot, which the page's white would wash out of sight (WCAG asks 3:1 of a chart's mark)."""
    return f'<circle class="{kind}" cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#fff" stroke="{paint}" stroke-width="2"/>'


def _legend(x: float, y: float, entries: Sequence[tuple[str, str]]) -> str:
    """Coloured swatches, each followed by its label, in one row from (x, y)."""
    parts = []
    for paint, label in entries:
        parts.append(f'<rect class="swatch" x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{paint}"/>'
                     f'<text x="{x + 14:.1f}" y="{y:.1f}">{escape(label)}</text>')
        x += 24 + 7 * len(label)
    return "".join(parts)


def forest_plot(rows: Sequence[tuple[Experience, Evidence]], *, narrow: bool = False) -> str:
    """One row per lesson, labelled by its text: the interval as a line, the lift as a dot, the
    colour its standing (`lamar.cli.standing`). The lesson's id is on the row (`data-id`) and in
    its tooltip. No interval is drawn past what a lift can be, and none that spans all of it.
    `narrow` draws it for a phone (340 wide): each label on a line of its own above its interval,
    groups of class "row" rather than "lesson", so a page that holds both plots counts each lesson once.

    Colours (here and in every chart of this module) are set as attributes on shapes only; text is
    drawn in the page's text colour and each colour is named by a swatch beside its label, so a
    page's stylesheet cannot hide what a colour means.
    """
    lo, hi = axis_range([v for _, ev in rows if not no_evidence(ev.lower, ev.upper)
                         for v in (ev.lower, ev.upper, ev.lift)])
    # Shrunk to a phone's width, the wide plot's 11 px labels read at 4 px: the narrow one is drawn at
    # about the width it is shown, its labels on lines of their own, as long as the wide one's.
    names, plot, row, chars, legend_x = (10, 320, 34, 52, 4) if narrow else (_NAMES, _PLOT, _ROW, _LABEL_CHARS, _NAMES)
    shown = STANDINGS if not narrow else tuple(STANDINGS)[:3]
    top = 52 if narrow else 34
    height = top + row * len(rows) + 36

    def x(value: float) -> float:
        clipped = min(max(value, lo), hi)
        return names + (clipped - lo) / (hi - lo) * plot

    parts = [_svg_open(names + plot + 20, height, "forest plot of lesson lifts"),
             _legend(legend_x, 14, [(colour(name), name) for name in shown])]
    end, below = legend_x + sum(24 + 7 * len(name) for name in shown), 14
    if narrow:  # the rest of the swatches on a second line
        rest = [name for name in STANDINGS if name not in shown]
        parts.append(_legend(legend_x, 32, [(colour(name), name) for name in rest]))
        end, below = legend_x + sum(24 + 7 * len(name) for name in rest), 32
    if any(exp.status.value == "retired" for exp, _ in rows):  # after the swatches, as `_legend` spaces them
        parts.append(f'{_hollow(end + 5, below - 4, "#57606a", "swatch hollow")}'
                     f'<text x="{end + 14}" y="{below}">retired</text>')
    tick = lo
    while tick <= hi + 1e-9:
        parts.append(f'<line{_rule(tick)} x1="{x(tick):.1f}" y1="{top - 10}" x2="{x(tick):.1f}" y2="{height - 30}"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 16}" text-anchor="middle">{tick:+.1f}</text>')
        tick += 0.5
    parts.append(f'<text x="{names + plot / 2:.1f}" y="{height - 2}" text-anchor="middle">'
                 "lift on reward (0 = no effect)</text>")
    for i, (exp, ev) in enumerate(rows):
        y = top + (row - 8 if narrow else 6) + i * row
        name = standing(ev)
        retired = exp.status.value == "retired"
        # An SVG text holds no <bdi>: the id and each field are isolated by marks (`lamar.cli.isolate`).
        measured = (f"lift {lift(ev.lift, ev.lower, ev.upper)} {shown_interval(ev.lower, ev.upper)}"
                    if not no_evidence(ev.lower, ev.upper) else "no evidence yet")  # no lift beside it, as the row
        tip = f"{marked(exp.id)} ({status_label(exp, ev)}): {measured}: {lesson_marked(exp)}"
        kind = "row" if narrow else "lesson"
        parts.append(f'<g class="{kind} {escape(name.replace(" ", "-"))}" data-id="{escape(exp.id)}" '
                     f'><title>{escape(tip)}</title>')
        parts.append(f'<text x="4" y="{y - 12 if narrow else y + 4}">{escape(label_marked(exp, chars))}</text>')
        lower, upper = ev.lower, ev.upper
        if no_evidence(lower, upper):
            parts.append(f'<text x="{x(0.0) + 6:.1f}" y="{y + 4}">no evidence yet</text>')
        else:
            dashed = "" if math.isfinite(lower) and math.isfinite(upper) and lo <= lower and upper <= hi \
                else ' stroke-dasharray="4 3"'  # runs off the axis: the bound is wider than shown
            parts.append(f'<line x1="{x(lower):.1f}" y1="{y}" x2="{x(upper):.1f}" y2="{y}" '
                         f'stroke="{colour(name)}" stroke-width="{1 if retired else 2}"{dashed}/>')
            parts.append(_hollow(x(ev.lift), y, colour(name)) if retired
                         else f'<circle cx="{x(ev.lift):.1f}" cy="{y}" r="4" fill="{colour(name)}"/>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def injection_chart(store: Store) -> str:
    """Stacked bars over the episodes the store holds, in equal bins: lessons injected and held out
    per bin, with a y-axis (lessons per bin) and the first and last episode's number and time.

    The episodes are the live ones (`lamar.whatif.injections`): a checkpoint folds the first
    episodes into one snapshot event, and a compaction drops episodes.
    """
    from lamar.whatif.injections import injections

    return injection_bars(injections(store).episodes)


def injection_bars(episodes: Sequence[tuple[float, int, int]]) -> str:
    """`injection_chart` of the episodes given as (time, lessons injected, lessons held out), in
    log order: for a reader that has them without the events (`lamar ui`, from the what-if fold)."""
    if not episodes:
        return "<p>No episodes yet.</p>"
    bins = min(_BINS, len(episodes))
    injected = [0] * bins
    held = [0] * bins
    for i, (_, n_in, n_out) in enumerate(episodes):
        b = i * bins // len(episodes)
        injected[b] += n_in
        held[b] += n_out
    peak = max(max(i + h for i, h in zip(injected, held)), 1)
    width, height, base, tall = _LABEL + _PLOT, 210, 160, 130
    bar = _PLOT / bins
    per_bin = math.ceil(len(episodes) / bins)
    parts = [_svg_open(width + 20, height, "lessons injected and held out over the episodes"),
             _legend(_LABEL, 14, [(INJECTED, "injected"), (HELD_OUT, "held out (the randomized control)")])]
    for value in sorted({0, peak // 2, peak}):  # the y-axis
        y = base - value / peak * tall
        parts.append(f'<line{_rule(value or 1)} x1="{_LABEL - 4}" y1="{y:.1f}" x2="{width}" y2="{y:.1f}"/>'
                     f'<text x="{_LABEL - 8}" y="{y + 4:.1f}" text-anchor="end">{value}</text>')
    parts.append(f'<text x="{_LABEL - 40}" y="{base - tall / 2:.1f}" text-anchor="end">'
                 f"lessons per {plural(per_bin, 'episode')}</text>")
    for b in range(bins):
        x0 = _LABEL + b * bar
        h_in = injected[b] / peak * tall
        h_out = held[b] / peak * tall
        parts.append(f'<rect class="injected" x="{x0:.1f}" y="{base - h_in:.1f}" width="{max(bar - 1, 0.5):.1f}" '
                     f'height="{h_in:.1f}" fill="{INJECTED}"><title>{injected[b]} injected</title></rect>')
        parts.append(f'<rect class="held" x="{x0:.1f}" y="{base - h_in - h_out:.1f}" '
                     f'width="{max(bar - 1, 0.5):.1f}" height="{h_out:.1f}" fill="{HELD_OUT}">'
                     f"<title>{held[b]} held out</title></rect>")
    parts.append(f'<text x="{_LABEL}" y="{base + 18}">episode 1</text>'
                 f'<text x="{_LABEL}" y="{base + 34}">{when(episodes[0][0])} UTC</text>')
    parts.append(f'<text x="{width}" y="{base + 18}" text-anchor="end">episode {len(episodes)}</text>'
                 f'<text x="{width}" y="{base + 34}" text-anchor="end">{when(episodes[-1][0])} UTC</text>')
    parts.append("</svg>")
    return "".join(parts)


def evidence_chart(points: Sequence[tuple[int, float, float, float, str, int, int]]) -> str:
    """One lesson's evidence as it moved: for each point (randomized episodes, lift, lower, upper, verdict,
    restarts, reported episodes where it was eligible), the interval as a vertical line coloured by the verdict
    then, the lift as a dot; a dashed vertical rule where the evidence restarted (the world changed)."""
    if not points:
        return "<p>No outcome has moved this lesson's evidence yet.</p>"
    finite = [v for p in points if not no_evidence(p[2], p[3]) for v in p[1:4] if math.isfinite(v)]
    lo, hi = axis_range(finite)
    width, height, top, base = _LABEL + _PLOT, 240, 30, 200
    n = len(points)

    def x(i: int) -> float:
        return _LABEL + (i + 0.5) / n * _PLOT

    def y(value: float) -> float:
        clipped = min(max(value, lo), hi)
        return base - (clipped - lo) / (hi - lo) * (base - top)

    parts = [_svg_open(width + 20, height, "the lesson's lift and interval over time"),
             _legend(_LABEL, 14, [(COLOURS[v], v) for v in COLOURS] + [("#57606a", "restart")])]
    tick = lo
    while tick <= hi + 1e-9:
        parts.append(f'<line{_rule(tick)} x1="{_LABEL - 4}" y1="{y(tick):.1f}" x2="{width}" y2="{y(tick):.1f}"/>'
                     f'<text x="{_LABEL - 8}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:+.1f}</text>')
        tick += 0.5
    parts.append(f'<text x="{_LABEL - 40}" y="{(top + base) / 2:.1f}" text-anchor="end">lift</text>')
    restarts = points[0][5]
    for i, (_, value, lower, upper, verdict, restarted, _) in enumerate(points):
        paint = COLOURS.get(verdict, COLOURS["unknown"])
        if restarted > restarts:
            parts.append(f'<line class="restart" x1="{x(i):.1f}" y1="{top}" x2="{x(i):.1f}" y2="{base}" '
                         'stroke="#57606a" stroke-dasharray="3 3"/>')
            restarts = restarted
        if no_evidence(lower, upper):  # an interval over every possible lift: nothing to draw
            continue
        # In its full colour (a faded bar stood at 2:1 against the page), narrower than the gap between
        # points; the lift an open dot on it, so it reads against its own interval.
        parts.append(f'<line x1="{x(i):.1f}" y1="{y(lower if math.isfinite(lower) else lo):.1f}" '
                     f'x2="{x(i):.1f}" y2="{y(upper if math.isfinite(upper) else hi):.1f}" '
                     f'stroke="{paint}" stroke-width="{min(max(_PLOT / n / 2, 1), 4):.1f}"/>')
        if math.isfinite(value):
            parts.append(f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="3" fill="#fff" stroke="{paint}" '
                         'stroke-width="1.5"/>')
    # The ends count reported episodes, which only grow: the randomized ones start again at 0 on a restart.
    seen, randomized, restarts = points[-1][6], points[-1][0], points[-1][5]
    parts.append(f'<text x="{_LABEL}" y="{base + 18}">{points[0][6]} reported</text>')
    parts.append(f'<text x="{width}" y="{base + 18}" text-anchor="end">{plural(seen, "reported episode")}, '
                 f'{randomized} randomized{_SINCE.get(min(restarts, 2), "")}</text>')
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["COLOURS", "HELD_OUT", "INJECTED", "evidence_chart", "forest_plot", "injection_bars", "injection_chart"]
