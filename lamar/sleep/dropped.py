"""Retiring a lesson the selection dropped: proposed once it has gone RETIRE_AFTER reported episodes of its
scope unchosen, in words that say its harm is not proven (docs/sleep.md, "A lesson the selection dropped")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lamar._errors import InvalidReport, echoed
from lamar.experience import Status
from lamar.policy.dropped import RETIRE_AFTER, unchosen_text
from lamar.policy.verdicts import Evidence, no_evidence_yet
from lamar.sleep.kinds import ProposalKind, audit_reason, register
from lamar.sleep.proposals import Proposal
from lamar.store import Event

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView

KIND = "retire_dropped"


def propose_retiring_dropped(lam: SleepView, skip: frozenset[str] = frozenset()) -> list[Proposal]:
    """A `retire_dropped` proposal for each live lesson, not in `skip`, that the selection dropped
    (`Evidence.dropped`) and has not chosen in RETIRE_AFTER or more reported episodes of its scope; writes nothing.

    Such a lesson gets no more randomized episodes, so its verdict stays unknown for ever: the proposal
    says so, and leaves the choice to a person (retire it, or keep it for the selection to try again).
    """
    out = []
    for exp in lam.experiences():
        if exp.status is Status.RETIRED or exp.id in skip:
            continue
        ev = lam.evidence(exp.id)
        if not ev.dropped or ev.unchosen is None or ev.unchosen < RETIRE_AFTER:
            continue
        out.append(Proposal(
            id=Proposal.make_id(KIND, [exp.id]), kind=KIND, experience_ids=(exp.id,), reason=_reason(ev),
            evidence={exp.id: {**ev.to_dict(), "version": exp.version}}, expect={exp.id: exp.status.value}))
    return out


def _reason(ev: Evidence) -> str:
    measure = (f"lift {ev.lift:+.3f} [{ev.lower:+.3f}, {ev.upper:+.3f}] over {ev.randomized} randomized episodes"
               if ev.measured else f"lift n/a: {no_evidence_yet(ev.randomized, ev.restarts)}")
    why = "" if ev.fell_at is not None else ", after its estimate fell below zero"
    return (f"NOT proven harm: the selection stopped choosing it: {unchosen_text(ev)}{why}. Its estimate of the "
            f"lift is {ev.estimate:+.2f}; its verdict stays unknown ({measure}) while the selection does not choose "
            "it. Retire it, or keep it to let the selection try it again")


def still_dropped(lam: SleepView, proposal: Proposal) -> str:
    """Why a retire_dropped proposal no longer holds, or "" when the lesson is still dropped and has not
    been chosen since the report was made."""
    exp_id = proposal.experience_ids[0]
    ev = lam.evidence(exp_id)
    if not ev.dropped:
        return (f"lesson {exp_id} is no longer dropped by the selection (verdict {ev.verdict.value}, estimate "
                f"{ev.estimate:+.2f})")
    then = proposal.evidence.get(exp_id, {}).get("unchosen")
    if ev.unchosen is None or (isinstance(then, int) and ev.unchosen < then):
        return f"lesson {exp_id} was chosen again since the report was made"
    return ""


def _one(proposal: Proposal) -> str:
    if len(proposal.experience_ids) != 1:
        raise InvalidReport(f"{KIND} proposal {echoed(proposal.id)} needs exactly one lesson")
    return proposal.experience_ids[0]


def _check(proposal: Proposal) -> None:
    _one(proposal)
    audit_reason(proposal)


def _describe(proposal: Proposal) -> list[str]:
    return [f"  retire lesson {echoed(_one(proposal))} (the selection dropped it; its harm is not proven)"]


def _events(proposal: Proposal) -> list[Event]:
    return [Event("status", {"id": _one(proposal), "status": Status.RETIRED.value, "reason": audit_reason(proposal)})]


register(ProposalKind(KIND, lambda p: [_one(p)], _check, _describe, _events))

__all__ = ["KIND", "propose_retiring_dropped", "still_dropped"]
