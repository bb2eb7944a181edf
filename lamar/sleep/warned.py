"""A mined candidate's warning: what its text would have the agent do that a person should decide on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lamar.sleep.proposals import Proposal


def lesson_warning(precondition: Any, action: Any, rationale: Any) -> str:
    """Why a lesson's text instructs harm (`lamar.safety.instructs`), or "": each part read on its own,
    so a sentence never runs from one into the next."""
    from lamar.safety.instructs import instructed_harm

    for part in (precondition, action, rationale):
        reason = instructed_harm(part) if isinstance(part, str) else None
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


def warning_line(proposal: Proposal) -> str:
    """The line review, `lamar sleep` and `lamar ui` show for a warned proposal, or "" for another."""
    from lamar.sleep.printed import printed_reason

    warning = proposal_warning(proposal)
    if not warning:
        return ""
    return (f"WARNING: this lesson tells the agent to do harm ({printed_reason(warning)}); "
            "approve it only if you mean it")


__all__ = ["lesson_warning", "proposal_warning", "warning_line"]
