"""`lamar whatif`: what other policies would have got over the logged episodes (docs/whatif.md)."""

from __future__ import annotations

import argparse
import datetime
import math
import time

from lamar._errors import InvalidArgument, advised
from lamar.cli.observe import parse_pairs
from lamar.cli.render import dump_json, plural, visible
from lamar.cli.session import UsageError, open_engine
from lamar.listing import LS_ADVICE
from lamar.typed import typed_number
from lamar.whatif import Estimate, WhatIfReport, whatif
from lamar.whatif.alternatives import NOTHING_PROVEN
from lamar.whatif.ask import spelt_out, unknown_lesson
from lamar.whatif.report import EXACT, HEADLINE, THIN


def parse_since(text: str | None, now: float | None = None) -> float | None:
    """--since: seconds since the epoch, an ISO date or time, or an age such as 7d, 12h, 30m.

    >>> parse_since("7d", now=1_000_000.0)
    395200.0
    >>> parse_since("1970-01-02T00:00:00+00:00")
    86400.0
    """
    if text is None:
        return None
    moment = _moment(text.strip(), now)
    if moment is None or not math.isfinite(moment):  # nan, inf or an age past float's range match no episode
        raise UsageError(f"--since takes seconds since the epoch, an ISO date (2026-11-30) or an age "
                         f"(7d, 12h, 30m); got {text!r}")
    return moment


def _moment(value: str, now: float | None) -> float | None:
    """The time `value` names, or None when it is none of the forms --since takes."""
    if not value.isascii():  # float() and isdigit() also read other scripts' digits: a time is read as typed
        return None
    units = {"d": 86400.0, "h": 3600.0, "m": 60.0}
    if value[-1:] in units and value[:-1].replace(".", "", 1).isdigit():
        return (time.time() if now is None else now) - float(value[:-1]) * units[value[-1]]
    seconds = typed_number(value)  # float() also reads `1_0` as 10
    if seconds is not None:
        return seconds
    try:
        stamp = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.astimezone()  # a date without a zone is the local one
    return stamp.timestamp()


def _cell(estimate: Estimate, percent: bool) -> str:
    if not math.isfinite(estimate.value):
        return "n/a"
    scale, unit, digits = (100.0, "%", 1) if percent else (1.0, "", 3)
    sign = "" if percent else "+"
    lo = f"{scale * estimate.lower:{sign}.{digits}f}" if math.isfinite(estimate.lower) else "-inf"
    hi = f"{scale * estimate.upper:{sign}.{digits}f}" if math.isfinite(estimate.upper) else "inf"
    return f"{scale * estimate.value:{sign}.{digits}f}{unit} [{lo}, {hi}]"


def render(report: WhatIfReport, estimators: list[str], compacted: int = 0, anytime: bool = False) -> str:
    """The report as a table: per alternative and estimator, success and reward with their 95%
    intervals (with `anytime`, their confidence sequences), beside what the logged policy got on
    the same (supported) episodes; `compacted` episodes, which the log no longer holds, are said
    to be left out."""
    counts = (f"episodes  {report.logged} logged, {report.reported} reported, {report.randomized} of them "
              "with a coin (0 < p < 1)")
    lines = [f"store     {visible(report.store)}", counts]
    if compacted:
        # `lamar stats` still counts them, so the two counts would disagree without a word.
        lines.append(f"          {plural(compacted, 'older episode')} compacted by sleep are left out "
                     "(the log no longer holds their coins)")
    lines.append("")
    bracket = "[anytime 95%]" if anytime else "[95%]"
    rows = [("policy", "estimator", "outside", "effective", f"success {bracket}", f"reward {bracket}",
             "logged policy, same episodes")]
    notes = []
    thin = False
    for alt in report.alternatives:
        if not alt.evaluable:
            rows.append((visible(alt.policy), "-", alt.outside_shown, f"{alt.effective:.0f}", "not evaluable",
                         "", ""))
            inside = ("every episode is outside the support" if not alt.supported else
                      f"only {alt.supported} of {plural(alt.episodes, 'episode')} "
                      f"{'is' if alt.supported == 1 else 'are'} "
                      "inside the support, too few to estimate "
                      "from, and the others are outside")
            notes.append(f"{visible(alt.policy)}: {inside} (it changes lessons the log never randomized there)")
            continue
        if alt.policy == "proven" and alt.description == NOTHING_PROVEN:
            notes.append(f"proven: {NOTHING_PROVEN}")
        logged = f"{100 * alt.success['logged'].value:.1f}% / {alt.reward['logged'].value:+.3f}"
        effective = f"{alt.effective:.0f}" + (" thin" if alt.thin else "")
        if alt.thin and any(name in EXACT for name in estimators):
            thin = True
        for name in (["logged"] if alt.policy == "logged" else estimators):
            success, reward = alt.success[name], alt.reward[name]
            if anytime:
                success, reward = success.anytime(), reward.anytime()
            rows.append((visible(alt.policy), name, alt.outside_shown, effective, _cell(success, True),
                         _cell(reward, False), logged))
        blind = [name for name in estimators if alt.says_nothing(name)]
        if blind:
            notes.append(f"{visible(alt.policy)}: {', '.join(blind)} spans the whole range "
                         "(the log seldom or never saw "
                         "every coin this policy changes fall its way at once); pi-dr reads each lesson's coin alone, "
                         "assuming the effects add up")
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    lines += ["", "outside: share of episodes where the policy would inject a lesson the log left out for certain,",
              "or leave out one it injected for certain: those episodes are left out, never extrapolated.",
              "effective: episodes the exact estimators (ips, snips, dr) rest on.",
              ("[anytime 95%]: a confidence sequence, valid however often you ask and however many episodes "
               "carry a coin." if anytime else
               "[95%]: the interval for this one reading of the log; asking again as the log grows, read --anytime."),
              "Estimators and their assumptions: docs/whatif.md."]
    if thin:
        lines.append(f"thin: under {THIN:.0f} effective episodes, as the weights show or as the coins predict (a "
                     "slate the policy needs seldom or never drawn): the exact estimators' intervals are not to be "
                     "trusted; pi and pi-dr need far fewer but assume the lessons' effects add up.")
    lines += notes
    return "\n".join(lines)


def cmd_whatif(args: argparse.Namespace) -> int:
    scope = parse_pairs(args.scope, "--scope")
    since = parse_since(args.since)
    estimators = list(dict.fromkeys(args.estimator or [HEADLINE]))  # an estimator asked twice is one row
    lam = open_engine(args)
    try:
        policies = spelt_out(lam, args.policy or ())
        try:
            report = whatif(lam, policies or None, since=since, scope=scope or None)
        except InvalidArgument as exc:
            if (cause := unknown_lesson(exc)) is not None:
                raise advised(InvalidArgument, str(exc).removesuffix(exc.advice), LS_ADVICE) from cause
            raise
        # Only the table says how many compacted episodes it leaves out: --json skips the count.
        compacted = 0 if args.json else int(lam.stats()["compacted"]["episodes"])
    finally:
        lam.close()
    if args.json:
        dump_json(report.to_dict())
    else:
        print(render(report, estimators, compacted, args.anytime))
    return 0

