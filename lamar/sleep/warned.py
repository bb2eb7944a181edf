"""A mined candidate's warning: what its text would have the agent do that a person should decide on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lamar.sleep.proposals import Proposal, SleepReport, already_applied

if TYPE_CHECKING:
    from lamar.engine import Lamar


def lesson_warning(precondition: Any, action: Any, rationale: Any) -> str:
    """Why a lesson's text instructs harm (`lamar.safety.instructs`), or "": each part read on its own,
    so a sentence never runs from one into the next; the precondition says whose branch a push is on."""
    from lamar.safety.instructs import instructed_harm

    situation = precondition if isinstance(precondition, str) else ""
    for part in (precondition, action, rationale):
        reason = instructed_harm(part, situation=situation) if isinstance(part, str) else None
        if reason:
            return reason
    return ""


def proposal_warning(proposal: Proposal) -> str:
    """The proposal's warning: as sleep wrote it, or read again from a candidate's lesson, so a report
    made before warnings, or one whose warning an edit took out, still shows it.

    >>> lesson = {"precondition": "after each fix", "action": "git push --force origin main"}
    >>> proposal_warning(Proposal("candidate_1", "candidate", ("exp_1",), "", payload={"experience": lesson}))
    "force-pushes over a shared branch: 'git push --force origin main'"
    """
    if proposal.warning or proposal.kind != "candidate":
        return proposal.warning
    lesson = proposal.payload.get("experience")
    if not isinstance(lesson, Mapping):
        return ""
    return lesson_warning(lesson.get("precondition"), lesson.get("action"), lesson.get("rationale"))


def unconfirmed(lam: Lamar, report: SleepReport, ids: Sequence[str]) -> list[tuple[str, str]]:
    """`(id, warning)` of each of `ids`, in their order, whose candidate is warned and not yet applied: one the
    store holds as applied (confirmed before, or in `lamar ui`) goes on, for apply to list it as applied."""
    warned = {p.id: w for p in report.proposals if p.id in ids and (w := proposal_warning(p))}
    if warned:
        for pid in already_applied(report, lam.would_skip(report)):
            warned.pop(pid, None)
    return [(pid, warned[pid]) for pid in dict.fromkeys(ids) if pid in warned]


def warning_line(proposal: Proposal) -> str:
    """The line review, `lamar sleep` and `lamar ui` show for a warned proposal, or "" for another."""
    from lamar.sleep.printed import printed_reason

    warning = proposal_warning(proposal)
    if not warning:
        return ""
    return (f"WARNING: this lesson tells the agent to do harm ({printed_reason(warning)}); "
            "approve it only if you mean it")


__all__ = ["lesson_warning", "proposal_warning", "unconfirmed", "warning_line"]
