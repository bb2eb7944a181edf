"""The app's pages as HTML strings: lessons, one lesson, episodes, sleep review, confirmations; every
stored value escaped, no inline script or style (see `layout`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from lamar.cli.charts import evidence_chart, forest_plot
from lamar.cli.render import lift, number, plural, scope_text, shorten, when
from lamar.cli.show import provenance_lines
from lamar.cli.standing import STANDINGS, merged_into, shown_interval, standing, standing_of, verdict_changes
from lamar.cli.timeline import Appearance, EvidencePoint
from lamar.experience import Experience
from lamar.policy.verdicts import Evidence
from lamar.preview import Preview
from lamar.sleep.kinds import describe
from lamar.sleep.printed import printed_id, printed_reason
from lamar.sleep.proposals import Proposal
from lamar.store.base import Event
from lamar.whatif import Estimate, WhatIfReport
from lamar.whatif.report import HEADLINE
from lamar_ui.bidi import lesson, said

_NAV = (("/", "Lessons"), ("/episodes", "Episodes"), ("/recall", "Try a context"), ("/whatif", "What if?"),
        ("/sleep", "Sleep"), ("/add", "Add a lesson"))


_NO_FOLLOW = ' data-follow="no"'


# A store in memory looks like any other on the page; what is added to it goes when the server stops.
_THROWAWAY = ('<p class="throwaway" role="note">This store is <code>:memory:</code>, a throwaway: nothing '
              "added or changed here is kept when <code>lamar ui</code> stops. Start it with "
              "<code>--store FILE</code> to keep what you do.</p>")


def layout(title: str, body: str, *, active: str, location: str, version: int, follow: bool = True) -> str:
    """The frame every page shares; `version` lets ui.js notice writes by other processes and reload
    the page, unless `follow` is False (a page that answers a form: a reload would lose what was typed since).

    Every value that came from a store (lesson text, scope values, reasons, ids) goes through
    `escape`: lessons are untrusted text. Pages carry no inline script or style, so the
    Content-Security-Policy can forbid both; the only script is the app's own `ui.js`.
    """
    current = ' class="active"'
    links = "".join(f'<a href="{href}"{current if href == active else ""}>{label}</a>' for href, label in _NAV)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{escape(title)} · Lamar</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'  # a phone: laid out at its width
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/ui.css"><script src="/static/ui.js" defer></script></head>'
        f'<body data-version="{version}"{"" if follow else _NO_FOLLOW}><header><strong>Lamar</strong><nav>{links}</nav>'
        f'<span class="store">store <code>{escape(location)}</code></span></header>'
        + (_THROWAWAY if location == ":memory:" else "")
        + f"<main><h1>{escape(title)}</h1>{body}</main></body></html>\n"
    )


def hidden_token(token: str) -> str:
    return f'<input type="hidden" name="token" value="{escape(token)}">'


def _verdict(ev: Evidence) -> str:
    """The lesson's standing (helps, harms, dropped, no effect, unproven), its meaning on hover."""
    name = standing(ev)
    return (f'<span class="verdict {name.replace(" ", "-")}" title="{escape(STANDINGS[name][1])}">'
            f"{name}</span>")


def _status(exp: Experience) -> str:
    """The lesson's status; a merged lesson's links the lesson its evidence went into, as `lamar show` names it."""
    into = merged_into(exp)
    if not into:
        return exp.status.value
    return f'retired: merged into <a href="/lessons/{quote(into, safe="")}"><code>{escape(into)}</code></a>'


def legend() -> str:
    """What each standing means, in words, beside the colours the plot uses."""
    items = "".join(f'<li><span class="verdict {name.replace(" ", "-")}">{name}</span> {escape(meaning)}</li>'
                    for name, (_, meaning) in STANDINGS.items())
    return f'<ul class="legend">{items}</ul>'


def _options(name: str, values: Iterable[str], chosen: str) -> str:
    opts = [f'<option value=""{" selected" if not chosen else ""}>any {name}</option>']
    opts += [f'<option value="{v}"{" selected" if v == chosen else ""}>{v}</option>' for v in values]
    return f'<select name="{name}" aria-label="{name}">{"".join(opts)}</select>'


def lessons_page(rows: Sequence[tuple[Experience, Evidence]], *, verdict: str, status: str, scope: str,
                 chart: str, text: str = "", total: int | None = None, page: int = 1, per_page: int = 0) -> str:
    """The filter form, the forest plot of the lessons shown, injections over time (`chart`), and
    the table: `rows` are page `page` of the `total` lessons the filters match, `per_page` a page."""
    form = (
        '<form class="filters" method="get" action="/">'
        f'<input name="q" dir="auto" aria-label="words" placeholder="words in the lesson" value="{escape(text)}">'
        f'{_options("verdict", ("helps", "harms", "unknown"), verdict)}'
        f'{_options("status", ("active", "candidate", "retired"), status)}'
        f'<input name="scope" dir="auto" aria-label="scope" placeholder="scope, e.g. language=swift" '
        f'value="{escape(scope)}">'
        '<button type="submit">Filter</button></form>'
    )
    if not rows and not (text or verdict or status or scope):  # a new store: not a filter that missed
        return (form + '<p class="empty">No lessons yet. <a href="/add">Add a lesson</a> '
                "(or run <code>lamar add</code>); "
                "a lesson an agent or sleep stores shows here within two seconds.</p>")
    if not rows:
        return form + "<p>No lesson matches.</p>"
    table = [('<table class="lessons"><thead><tr><th>lesson</th><th>status</th><th>verdict</th>'
              "<th>lift</th><th>interval</th><th>randomized</th><th>injected</th><th>held out</th>"
              "<th>restarts</th></tr></thead><tbody>")]
    for exp, ev in rows:
        table.append(
            f'<tr class="lesson {exp.status.value}" data-id="{escape(exp.id)}">'
            f'<td class="text"><a href="/lessons/{quote(exp.id, safe="")}">{lesson(exp, 90)}</a>'
            f'<br><code>{escape(exp.id)}</code> <span class="scope">{said(scope_text(exp.scope))}</span></td>'
            f"<td>{_status(exp)}</td><td>{_verdict(ev)}</td>"
            f'<td class="num">{lift(ev.lift, ev.lower, ev.upper)}</td>'
            f"<td>{escape(shown_interval(ev.lower, ev.upper))}</td>"
            f'<td class="num">{ev.randomized}</td><td class="num">{ev.injected}</td>'
            f'<td class="num">{ev.held_out}</td><td class="num">{ev.restarts}</td></tr>')
    table.append("</tbody></table>")
    total = len(rows) if total is None else total
    paging = _paging(total, page, per_page, {"q": text, "verdict": verdict, "status": status, "scope": scope})
    counted = plural(total, "lesson")
    if len(rows) < total:
        first = (page - 1) * per_page + 1
        counted += f"; {first} to {first + len(rows) - 1} shown, in the plot and the table"
    return (form + f"<p>{counted}. Dot: lift measured against randomized holdouts; "
            "line: its anytime-valid interval, drawn no wider than a lift can be, [-2, +2] (dashed where it "
            "runs past the axis). Helps when the whole line is right of zero, harms when left.</p>"
            f'{legend()}{paging}<div class="forest wide">{forest_plot(rows)}</div>'
            f'<div class="forest narrow">{forest_plot(rows, narrow=True)}</div><h2>Injections over time</h2>{chart}'
            f"<h2>Lessons</h2>{''.join(table)}{paging}")


def _paging(total: int, page: int, per_page: int, filters: Mapping[str, str]) -> str:
    """Links to the previous and the next page of lessons, the filters kept; "" on a single page."""
    if not per_page or total <= per_page:
        return ""
    last = -(-total // per_page)
    kept = {name: value for name, value in filters.items() if value}

    def link(number: int, label: str, rel: str) -> str:
        return f'<a href="/?{escape(urlencode({**kept, "page": str(number)}))}" rel="{rel}">{label}</a>'

    links = [link(page - 1, "&larr; previous", "prev")] if page > 1 else []
    links.append(f"page {page} of {last}")
    if page < last:
        links.append(link(page + 1, "next &rarr;", "next"))
    return f'<nav class="paging" aria-label="pages of lessons">{" ".join(links)}</nav>'


def lesson_page(exp: Experience, ev: Evidence, points: Sequence[EvidencePoint], shown: Sequence[Appearance],
                logged: str, trail: Sequence[tuple[float, str]]) -> str:
    """One lesson in full: text, scope, provenance, evidence then and now, how its verdict moved
    and why, episodes (`logged`: how many injected it, pending ones included), audit trail, levers."""
    erased = bool(exp.provenance.get("erased"))
    levers = ["erase"] if exp.status.value != "retired" or not erased else []
    if not erased:
        levers.insert(0, "revive" if exp.status.value == "retired" else "retire")
    if not erased and exp.status.value != "retired":  # a retired lesson is revived before it is edited
        levers.insert(1, "edit")
    chart = evidence_chart([(p.randomized, p.lift, p.lower, p.upper, p.verdict, p.restarts, p.eligible)
                            for p in points])
    episodes = "".join(
        f"<tr><td><code>{escape(a.episode_id)}</code></td><td>{when(a.time)}</td>"
        f"<td>{escape(a.signal or ('pending' if a.reward is None else f'{a.reward:+.2f}'))}</td></tr>"
        for a in reversed(shown[-20:]))
    audit = "".join(f"<li>{when(t)} UTC: {said(what)}</li>" for t, what in trail)
    provenance = "".join(f"<li>{said(line)}</li>" for line in provenance_lines(exp.provenance))
    changes = "".join(f"<li>{escape(line)}</li>" for line in verdict_changes(points))
    return (
        f'<p class="lesson-text" data-id="{escape(exp.id)}">{lesson(exp)}</p>'
        f"<dl><dt>id</dt><dd><code>{escape(exp.id)}</code></dd>"
        f"<dt>scope</dt><dd>{said(scope_text(exp.scope))}</dd><dt>status</dt><dd>{_status(exp)}</dd>"
        f"<dt>verdict</dt><dd>{_verdict(ev)} ({escape(STANDINGS[standing(ev)][1])}): {escape(ev.summary())}; "
        f"in reported episodes {ev.injected} injected, {ev.held_out} held out; {plural(ev.restarts, 'restart')}; "
        f"the selection's own estimate {number(ev.estimate, 2)}</dd></dl>"
        f"<p>{' '.join(_lever_link(exp.id, lever) for lever in levers) or 'erased: its text is gone'}</p>"
        f"<h2>Evidence over time</h2>{chart}"
        f'<h2>How the verdict moved</h2><ul class="changes">'
        f"{changes or '<li>it has not changed since the lesson was added</li>'}</ul>"
        f"<h2>Where it came from</h2><ul>{provenance}</ul>"
        f"<h2>Audit trail</h2><ul>{audit or '<li>nothing yet</li>'}</ul>"
        f"<h2>Latest episodes that injected it</h2><p>{escape(logged[:1].upper() + logged[1:])}.</p>"
        f"<table><thead><tr><th>episode</th><th>when (UTC)</th><th>outcome</th></tr></thead>"
        f"<tbody>{episodes}</tbody></table>"
    )


def _lever_link(exp_id: str, lever: str) -> str:
    return f'<a class="button" href="/lessons/{quote(exp_id, safe="")}/{lever}">{lever.capitalize()}…</a>'


def episodes_page(episodes: Sequence[Event], outcomes: Mapping[str, Mapping[str, Any]], texts: Mapping[str, str],
                  *, pending_only: bool, total: int, pending: int) -> str:
    """The latest recalls: context, what was injected and held out, the outcome or 'pending'."""
    toggle = ('<a href="/episodes">show all</a>' if pending_only
              else f'<a href="/episodes?{urlencode({"pending": "1"})}">show pending only</a>')
    rows = []
    for event in episodes:
        data = event.data
        outcome = outcomes.get(data["id"])
        result = ("pending" if outcome is None else "expired" if outcome.get("expired")  # no reward to show
                  else (outcome.get("signal") or f"{float(outcome['reward']):+.2f}"))

        def names(ids: Iterable[str]) -> str:
            return "<br>".join(f'<a href="/lessons/{quote(i, safe="")}">{said(shorten(texts.get(i, i), 60))}</a>'
                               for i in ids) or "none"

        rows.append(
            f'<tr class="episode{" pending" if outcome is None else ""}"><td><code>{escape(data["id"])}</code>'
            f"<br>{when(event.time)}</td><td class=\"text\">{said(scope_text(data.get('context', {})))}</td>"
            f'<td class="text">{names(data.get("injected", ()))}</td>'
            f'<td class="text">{names(data.get("held_out", ()))}</td><td>{escape(result)}</td></tr>')
    listed = len(episodes)
    shown = (f"the latest {listed} {'pending ' if pending_only else ''}shown, newest first"
             if listed < (pending if pending_only else total) else "newest first")
    return (f"<p>{plural(total, 'episode')}, {pending} pending (no outcome reported yet); {shown}. {toggle}</p>"
            "<table><thead><tr><th>episode</th><th>context</th><th>injected</th><th>held out</th>"
            f"<th>outcome</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _evidence_cell(ev: Mapping[str, Any] | Evidence | None) -> str:
    if ev is None:
        return "n/a"
    data = ev.to_dict() if isinstance(ev, Evidence) else ev
    # A report file can be edited by hand: every field is shown as a number or escaped text.
    low, high, mid = (_number(data.get(name)) for name in ("lower", "upper", "lift"))
    # Then and now are named as the lessons page names a lesson (dropped among them): a report's copy from its
    # verdict, estimate and bounds, or its verdict alone where a hand-edited report holds no standing's parts.
    verdict, estimate = str(data.get("verdict")), _number(data.get("estimate"))
    name = verdict if verdict not in ("helps", "harms", "unknown") else standing_of(
        verdict, math.nan if estimate is None else estimate, -math.inf if low is None else low,
        math.inf if high is None else high)
    badge = (_verdict(ev) if isinstance(ev, Evidence) else f'<span class="verdict {escape(name.replace(" ", "-"))}"'
             + (f' title="{escape(STANDINGS[name][1])}">' if name in STANDINGS else ">") + f"{escape(name)}</span>")
    return (f"{badge} "
            f"{escape(lift(mid, low, high))} {escape(shown_interval(low, high))}, "
            f"{escape(str(data.get('randomized', 0)))} randomized")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


# What a run without a model proposes (`lamar.sleep`): all but mined lessons, which need traces and a model.
_WITHOUT_MODEL = " (without a model: retire, narrow, merge, promote, contradictions, compact)"


def sleep_page(proposals: Sequence[Proposal], decisions: Mapping[str, str], now: Mapping[str, Evidence | None],
               texts: Mapping[str, str], token: str, *, has_report: bool, model: str, message: str,
               approved: Sequence[str] = (), applied: int = 0, focus: str = "") -> str:
    """Run sleep; each proposal with its evidence when proposed and now, side by side; approve,
    reject, apply. Decisions are written into the same report file `lamar review` writes; the
    Apply form names the `approved` proposals shown, so Apply acts on what was seen.
    `proposals` are those left to decide; `applied` counts the report's others, applied already.
    `focus`: where the page opens focused, a proposal's id, "apply" or "said" (the `message`); a screen
    reader says the message there too, as the focused element's description."""
    run = (f'<form method="post" action="/sleep/run">{hidden_token(token)}<button type="submit">Run sleep'
           f'{escape(" with " + model) if model else _WITHOUT_MODEL}'
           "</button></form>")

    def focused(name: str, *, own: bool = False) -> str:
        if focus != name:
            return ""
        return (" autofocus" + ("" if own else ' aria-describedby="said"')) if message else ""

    head = (f'<div id="said" role="status" tabindex="-1"{focused("said", own=True)}><p class="message">'
            f"{escape(message)}</p></div>" if message else "") + run
    if not has_report:
        return head + "<p>No sleep report yet. Sleep proposes; nothing changes until you approve and apply.</p>"
    if not proposals and not applied:
        return head + "<p>The last sleep proposed nothing.</p>"
    if applied:
        head += f'<p class="applied">{plural(applied, "proposal")} already applied, not listed.</p>'
    if not proposals:
        return head + "<p>Nothing is left to decide; run sleep again for new proposals.</p>"
    cards = []
    for n, p in enumerate(proposals, 1):
        decision = decisions.get(p.id, "undecided")
        lessons = "".join(  # each lesson's id beside its text: a merge's duplicates read alike
            f'<tr><td class="text"><a href="/lessons/{quote(i, safe="")}">'
            f'{said(shorten(texts.get(i, i), 70))}</a> <code>{escape(printed_id(i))}</code></td>'
            f'<td class="text">{_evidence_cell(p.evidence.get(i))}</td>'
            f'<td class="text">{_evidence_cell(now.get(i))}</td></tr>'
            for i in p.experience_ids)
        # What apply would do, from the fields apply acts on (lamar.sleep.kinds): one source of truth.
        new = "".join(f'<p class="warning">{said(line.strip())}</p>' if line.strip().startswith("WARNING:")
                      else f"<p>{said(line.strip())}</p>" for line in describe(p))  # set apart: a person decides
        buttons = "".join(
            f'<form method="post" action="/sleep/decide">{hidden_token(token)}'
            f'<input type="hidden" name="proposal" value="{escape(p.id)}">'
            f'<button type="submit" name="decision" value="{d}" aria-label="{label} {escape(printed_id(p.id))}">'
            f'{label}</button></form>'
            for d, label in (("approved", "Approve"), ("rejected", "Reject")))
        cards.append(
            f'<section class="proposal {decision}" data-id="{escape(p.id)}" tabindex="-1" '
            f'aria-labelledby="proposal-{n}"{focused(p.id)}><h2 id="proposal-{n}">{escape(printed_id(p.kind))} '
            f'<code>{escape(printed_id(p.id))}</code> <span class="decision">{decision}</span></h2>'
            f"<p>{said(printed_reason(p.reason))}</p>{new}<table><thead><tr><th>lesson</th>"
            f"<th>evidence when proposed</th><th>evidence now</th></tr></thead><tbody>{lessons}</tbody></table>"
            f'<div class="buttons">{buttons}</div></section>')
    waiting = sum(1 for d in decisions.values() if d == "approved")
    shown = "".join(f'<input type="hidden" name="approved" value="{escape(pid)}">' for pid in approved)

    def form(focus: str) -> str:
        return (f'<form method="post" action="/sleep/apply">{hidden_token(token)}{shown}'
                f'<button type="submit"{focus}>Apply {plural(waiting, "approved proposal")}</button></form>')

    apply = form(focused("apply")) if waiting else "<p>Nothing approved is waiting to be applied.</p>"
    # Also above the cards while some are left to decide: below them, a keyboard reached it past every other card.
    early = form("") if waiting and any(decisions.get(p.id, "undecided") == "undecided" for p in proposals) else ""
    return head + early + "".join(cards) + apply



def preview_page(seen: Preview | None, context: str, error: str = "") -> str:
    """What a recall would choose for a context and why, as `lamar recall --dry-run` prints it:
    each eligible lesson, wanted or not, its chance over the draws, the selection's estimate, its
    coin, its verdict and interval, then the prompt a recall would add. Nothing is logged."""
    form = ('<form class="filters" method="get" action="/recall">'
            f'<input name="context" dir="auto" aria-label="context" size="60" value="{escape(context)}" '
            'placeholder="context, e.g. project=trace language=swift task=build_fails">'
            '<button type="submit">Preview</button></form>')
    if seen is None:
        if error:
            return form + f'<p class="error">{escape(error)}</p>'
        return form + ("<p>Type a context as an agent would recall it: see which lessons are eligible, which the "
                       "selection wants and why, and the prompt a recall would add. Nothing is logged: no "
                       "episode, no evidence.</p>")
    wanted = sum(row.wanted for row in seen.lessons)
    note = (f'<p class="message">Nothing was logged. {plural(len(seen.lessons), "eligible lesson")} for '
            f"<code>{said(scope_text(seen.context))}</code> (k={seen.k}); a recall would inject "
            f"{plural(wanted, 'lesson')} unless a coin holds one out. Chance: the share of {seen.draws} draws "
            "that wanted the lesson; coin: the chance a wanted lesson is held out for the evidence.</p>")
    if not seen.lessons:
        return form + note
    rows = [('<table class="preview"><thead><tr><th>lesson</th><th>wanted</th><th>chance</th><th>estimate</th>'
             "<th>coin</th><th>verdict</th><th>interval</th></tr></thead><tbody>")]
    for row in seen.lessons:
        rows.append(
            f'<tr class="{"wanted" if row.wanted else "not-wanted"}" data-id="{escape(row.id)}">'
            f'<td class="text"><a href="/lessons/{quote(row.id, safe="")}">{lesson(row.experience, 90)}</a>'
            f'<br><code>{escape(row.id)}</code> <span class="scope">{said(scope_text(row.experience.scope))}'
            f'</span></td><td>{"yes" if row.wanted else "no"}</td><td class="num">{row.chance:.0%}</td>'
            f'<td class="num">{"cold" if row.cold else escape(number(row.estimate, 2))}</td>'
            f'<td class="num">{row.holdout:.0%}</td><td>{escape(row.verdict.value)}</td>'
            f"<td>{escape(shown_interval(row.lower, row.upper))}</td></tr>")
    rows.append("</tbody></table>")
    prompt = seen.as_prompt()
    shown = f'<h2>The prompt a recall would add</h2><pre class="prompt">{escape(prompt)}</pre>' if prompt else ""
    return form + note + "".join(rows) + shown


def whatif_page(report: WhatIfReport | None, policies: str, error: str = "") -> str:
    """Each alternative policy's doubly robust estimate beside what the logged policy got on the
    same episodes, with the share of episodes the log cannot speak for (docs/whatif.md)."""
    form = ('<form class="filters" method="get" action="/whatif">'
            f'<input name="policies" aria-label="policies" size="60" value="{escape(policies)}" '
            'placeholder="policies, e.g. none proven k:1 holdout:0.05 without:LESSON_ID">'
            '<button type="submit">Estimate</button></form>')
    if report is None:
        return form + f'<p class="error">{escape(error)}</p>'

    def cell(estimate: Estimate, percent: bool) -> str:
        scale, digits = (100.0, 1) if percent else (1.0, 3)
        unit = "%" if percent else ""
        return escape(f"{scale * estimate.value:.{digits}f}{unit} [{scale * estimate.lower:.{digits}f}, "
                      f"{scale * estimate.upper:.{digits}f}]")

    def anytime(estimate: Estimate, percent: bool) -> str:
        """The cell's tooltip: the confidence sequence, for a reader who asks again as the log grows."""
        if not math.isfinite(estimate.anytime_lower):
            return ""
        scale, digits = (100.0, 1) if percent else (1.0, 3)
        text = (f"anytime 95%: [{scale * estimate.anytime_lower:.{digits}f}, "
                f"{scale * estimate.anytime_upper:.{digits}f}]")
        return f' title="{escape(text)}"'


    head = ('<table class="whatif"><thead><tr><th>policy</th><th>what it does</th><th>outside the log</th>'
            "<th>effective episodes</th><th>success [95%]</th><th>reward [95%]</th>"
            "<th>logged policy, same episodes</th></tr></thead><tbody>")
    rows = [head]
    for alt in report.alternatives:
        if not alt.evaluable:
            rows.append(f'<tr data-policy="{escape(alt.policy)}"><td>{escape(alt.policy)}</td>'
                        f'<td class="words">{escape(alt.description)}</td><td>{escape(alt.outside_shown)}</td>'
                        '<td colspan="4">not evaluable: it changes lessons the log never randomized</td></tr>')
            continue
        name = "logged" if alt.policy == "logged" else HEADLINE
        thin = " (thin)" if alt.thin and name != "logged" else ""
        success = cell(alt.success[name], True)
        if alt.says_nothing(name):
            success += (f'<br><span class="hint">whole range: the log rarely drew this slate; pi-dr, if the '
                        f'lessons add up: {cell(alt.success["pi-dr"], True)}</span>')
        rows.append(f'<tr data-policy="{escape(alt.policy)}"><td>{escape(alt.policy)}</td>'
                    f'<td class="words">{escape(alt.description)}</td>'
                    f'<td class="num">{escape(alt.outside_shown)}</td>'
                    f'<td class="num">{alt.effective:.0f}{thin}</td>'
                    f"<td{anytime(alt.success[name], True)}>{success}</td>"
                    f"<td{anytime(alt.reward[name], False)}>{cell(alt.reward[name], False)}</td>"
                    f"<td>{cell(alt.success['logged'], True)}</td></tr>")
    rows.append("</tbody></table>")
    note = (f"<p>{plural(report.reported, 'reported episode')} of {report.logged} logged, "
            f"{report.randomized} with a coin. "
            "Estimates are doubly robust (cross-fitted) from the logged propensities; <em>outside the log</em> is "
            "the share of episodes where a policy would inject a lesson the log left out for certain, or leave out "
            "one it injected for certain: those episodes are left out, never extrapolated. "
            "Each [95%] is the interval for this "
            "one reading of the log; hover over it for its confidence sequence, which holds however often you ask as "
            "the log grows. Under 30 effective episodes an interval is "
            "<em>thin</em>: not to be trusted.</p>")
    return form + note + "".join(rows)


__all__ = ["episodes_page", "hidden_token", "layout", "legend", "lesson_page", "lessons_page", "preview_page",
           "sleep_page", "whatif_page"]
