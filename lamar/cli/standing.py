"""How a lesson stands, as the HTML report and `lamar ui` show it: the verdict split for a reader."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from lamar.cli.render import bound, interval, no_evidence, plural, when
from lamar.experience import Experience
from lamar.policy.dropped import DROP_MARGIN, dropped_by
from lamar.policy.history import EvidencePoint
from lamar.policy.verdicts import Evidence

SMALL_EFFECT = 0.1  # a tenth of a reward point: about five points of success rate when rewards are +-1

# name -> (colour, what it means); the order is the legend's
STANDINGS = {
    "helps": ("#1a7f37", "proven to help"),
    "harms": ("#cf222e", "proven to harm"),
    "dropped": ("#bc4c00", f"unknown, dropped by the selection: its estimate is below -{DROP_MARGIN:g}"),
    "no effect": ("#6e7781", f"unknown, and any effect is small (the interval lies within ±{SMALL_EFFECT:g})"),
    "unproven": ("#8c959f", "unknown: too little evidence yet"),  # light, yet a mark WCAG calls visible on white
}


def standing(ev: Evidence) -> str:
    """One of STANDINGS' names for this evidence.

    "unknown" covers three different lessons: one the selection has stopped injecting because its
    estimate is negative (harm suspected, not proven), one measured well enough to say it does little,
    and one with too little evidence to say anything. Each gets its own name and colour here; the
    verdict itself (helps, harms, unknown) is unchanged.
    """
    return standing_of(ev.verdict.value, ev.estimate, ev.lower, ev.upper)


def standing_of(verdict: str, estimate: float, lower: float, upper: float) -> str:
    """`standing` of evidence given by its parts, as a sleep report's copy holds them (a bound unknown: infinite)."""
    if verdict != "unknown":
        return verdict
    if dropped_by(verdict, estimate):
        return "dropped"
    if no_evidence(lower, upper):
        return "unproven"
    if -SMALL_EFFECT <= lower and upper <= SMALL_EFFECT:
        return "no effect"
    return "unproven"


def merged_into(exp: Experience) -> str:
    """The lesson a retired lesson was merged into ("" when it was not): its evidence lives on there,
    so its own standing (a "dropped" among them) no longer says anything."""
    into = exp.provenance.get("merged_into")
    return into if exp.status.value == "retired" and isinstance(into, str) else ""


def status_text(exp: Experience) -> str:
    """The lesson's status, "retired: merged into exp_..." (as `lamar show` words it) for a merged one."""
    into = merged_into(exp)
    return f"retired: merged into {into}" if into else exp.status.value


def status_label(exp: Experience, ev: Evidence) -> str:
    """The status and standing a lesson's tooltip shows; a merged lesson's status alone says it all."""
    return status_text(exp) if merged_into(exp) else f"{exp.status.value}, {standing(ev)}"


def colour(name: str) -> str:
    return STANDINGS[name][0]


def shown_interval(lower: float | None, upper: float | None) -> str:
    """The interval as a page prints it: clipped to [-2, 2], or "no evidence yet".

    >>> shown_interval(-42.3, 43.2), shown_interval(-0.1, 2.7), shown_interval(0.1, 0.3)
    ('no evidence yet', '[-0.10, +2.00]', '[+0.10, +0.30]')
    """
    return "no evidence yet" if no_evidence(lower, upper) else interval(lower, upper)


def verdict_changes(points: Sequence[EvidencePoint]) -> list[str]:
    """Each time the verdict changed between kept points, in a sentence that says why.

    The points are the ones the engine kept (see `lamar.policy.history`): a change is dated by
    the first kept point that shows it, so a verdict that came and went between two points
    is not seen.
    """
    lines = []
    held: set[str] = set()
    restarts = points[0].restarts if points else 0
    for before, after in itertools.pairwise(points):
        held.add(before.verdict)
        if before.verdict == after.verdict:
            continue
        at = f"{when(after.time)} UTC, after {plural(after.randomized, 'randomized episode')}"
        if after.verdict != "unknown":
            side = "above" if after.verdict == "helps" else "below"
            since = " (counted since its evidence restarted)" if after.restarts > restarts else ""
            lines.append(f"{at}: {'back to' if after.verdict in held else 'became'} {after.verdict}: the interval "
                         f"{interval(after.lower, after.upper)} lies {side} zero{since}")
            restarts = after.restarts
        elif after.restarts > before.restarts:
            lines.append(f"{at}: {before.verdict} withdrawn: its evidence restarted (a change in the lesson's "
                         "effect was proven, or its text was edited: the audit trail says which), so the verdict "
                         "must be earned again")
        elif (after.lower > 0) if before.verdict == "helps" else (after.upper < 0):
            lines.append(f"{at}: {before.verdict} withdrawn on doubt: the latest outcomes no longer bear the "
                         "effect out (the interval over all of them still reads "
                         f"{interval(after.lower, after.upper)}); "
                         "it comes back once the episodes since prove it on their own")
        else:
            side = "lower bound fell to" if before.verdict == "helps" else "upper bound rose to"
            edge = after.lower if before.verdict == "helps" else after.upper
            lines.append(f"{at}: {before.verdict} withdrawn: newer outcomes moved the lift to "
                         f"{after.lift:+.2f} and the {side} {bound(edge)}, so zero is inside the interval again")
    return lines


__all__ = ["DROP_MARGIN", "SMALL_EFFECT", "STANDINGS", "colour", "merged_into", "no_evidence", "shown_interval",
           "standing", "standing_of", "status_label", "status_text", "verdict_changes"]
