"""`lamar html`: one self-contained page (inline SVG and CSS, no scripts, no network)."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from html import escape
from pathlib import Path

from lamar.cli.charts import forest_plot, injection_chart
from lamar.cli.outputs import HTML_GENERATOR, check_output, is_html_page, write_output
from lamar.cli.render import lift, plural, scope_text, shorten, when
from lamar.cli.session import open_engine
from lamar.cli.standing import STANDINGS, shown_interval, standing, status_text
from lamar.experience import Experience
from lamar.policy.verdicts import Evidence

_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #1f2328; }
h1 { font-size: 1.4em; } h2 { font-size: 1.1em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid #d0d7de; padding: 4px 6px; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.helps { color: #1a7f37; } .harms { color: #cf222e; } .dropped { color: #bc4c00; }
.no-effect { color: #57606a; } .unproven { color: #6e7781; font-style: italic; }
th, td { white-space: nowrap; } td.text { white-space: normal; overflow-wrap: anywhere; min-width: 12em; }
ul.legend { list-style: none; padding: 0; font-size: 13px; } ul.legend span { font-weight: 600; }
tr.retired td { color: #57606a; } code { font-size: 12px; }
svg text { font: 11px system-ui, sans-serif; fill: #1f2328; }
"""


def lesson_table(rows: Sequence[tuple[Experience, Evidence]]) -> str:
    head = ("<tr><th>id</th><th>status</th><th>verdict</th><th>lift</th><th>interval</th><th>randomized</th>"
            "<th>injected</th><th>held out</th><th>scope</th><th>lesson</th></tr>")
    body = []
    for exp, ev in rows:
        name = standing(ev)
        body.append(
            f'<tr class="lesson {escape(exp.status.value)}" data-id="{escape(exp.id)}">'
            f"<td><code>{escape(exp.id)}</code></td><td>{escape(status_text(exp))}</td>"
            f'<td class="{_css(name)}" title="{escape(STANDINGS[name][1])}">{name}</td>'
            f'<td class="num">{lift(ev.lift, ev.lower, ev.upper)}</td>'
            f"<td>{escape(shown_interval(ev.lower, ev.upper))}</td><td class=\"num\">{ev.randomized}</td>"
            f'<td class="num">{ev.injected}</td><td class="num">{ev.held_out}</td>'
            f'<td class="text">{escape(scope_text(exp.scope))}</td><td class="text">{escape(exp.render())}</td></tr>')
    return f"<table><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"


def _css(name: str) -> str:
    return name.replace(" ", "-")


def legend() -> str:
    """What each standing's colour means, in words."""
    items = "".join(f'<li><span class="{_css(name)}">{name}</span>: {escape(meaning)}</li>'
                    for name, (_, meaning) in STANDINGS.items())
    return f'<ul class="legend">{items}</ul>'


def render_page(rows: Sequence[tuple[Experience, Evidence]], injections: str, events: int, location: str) -> str:
    """The whole page as one string.

    A forest plot of every lesson's lift and interval coloured by verdict, `injections` (the
    chart of injections and holdouts over time), and a table with one row per lesson; `events`
    is the log's length, as `lamar stats` counts it.
    """
    counts = {name: sum(standing(ev) == name for _, ev in rows) for name in STANDINGS}
    summary = ", ".join(f'<span class="{_css(name)}">{n} {name}</span>' for name, n in counts.items())
    forest = forest_plot(rows) if rows else "<p>No lessons yet.</p>"
    return (
        f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{HTML_GENERATOR}"
        f"<title>Lamar: {escape(shorten(location, 60))}</title><style>{_CSS}</style></head><body>"
        f"<h1>What the agent believes</h1><p>Store <code>{escape(location)}</code>, "
        f"{plural(len(rows), 'lesson')} ({summary}), {plural(events, 'event')}; generated {when(time.time())} UTC.</p>"
        "<h2>Lift of each lesson</h2><p>Dot: measured lift on reward from randomized holdouts; line: its "
        "anytime-valid interval, drawn no wider than a lift can be, [-2, +2] (dashed where it runs past "
        "the axis). Helps when the whole line is right of zero, harms when left.</p>"
        f"{legend()}{forest}<h2>Injections over time</h2>{injections}"
        f"<h2>Lessons</h2>{lesson_table(rows)}</body></html>\n"
    )


def cmd_html(args: argparse.Namespace) -> int:
    to_stdout = args.out == "-"  # as `lamar add --from -` reads stdin; `./-` names a file called "-"
    if not to_stdout:
        check_output(args.out, ours=is_html_page, what="the HTML page", force=args.force)
    lam = open_engine(args)
    try:
        rows = [(exp, lam.evidence(exp.id)) for exp in lam.experiences()]
        injections = injection_chart(lam.store)
        events = lam.stats()["events"]
        location = lam.store.location
    finally:
        lam.close()
    page = render_page(rows, injections, events, location)
    if to_stdout:  # the page alone, in the UTF-8 it declares, whatever the terminal's encoding
        if hasattr(sys.stdout, "buffer"):
            sys.stdout.flush()
            sys.stdout.buffer.write(page.encode("utf-8"))
        else:
            sys.stdout.write(page)
        return 0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    write_output(Path(args.out), page, "the HTML page")  # a failed write leaves the last page whole
    print(f"wrote {args.out} ({plural(len(rows), 'lesson')}, {len(page.encode('utf-8'))} bytes)")
    return 0
