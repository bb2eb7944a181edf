"""Sleep: the offline step. It proposes; `apply` carries out what a reviewer approved."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from lamar._errors import EventConflict, UnknownProposal
from lamar.experience import Experience, Status
from lamar.sleep.consolidate import consolidate, normalize
from lamar.sleep.proposals import ApplyResult, Dropped, Proposal, SleepReport
from lamar.store import Event

if TYPE_CHECKING:
    from lamar.engine import Lamar


def run_sleep(lam: Lamar, *, traces: Any = None, model: Any = None, **options: Any) -> SleepReport:
    """Look at the store (and traces, with a model) and propose; write nothing."""
    made_at = lam._seq
    proposals = consolidate(lam)
    dropped: list[Dropped] = []
    if traces is not None or model is not None:
        from lamar.sleep.mining import mine

        mined, refused = mine(lam, traces=traces, model=model, **options)
        proposals += mined
        dropped += refused
    return SleepReport(proposals=proposals, dropped=dropped, made_at=made_at)


def apply_report(lam: Lamar, report: SleepReport, *, only: Iterable[str] | None = None) -> ApplyResult:
    """Apply the chosen proposals, each re-checked against the store as it is now."""
    by_id = {p.id: p for p in report.proposals}
    if only is None:
        chosen = list(report.proposals)
    else:
        wanted = list(only)
        missing = [pid for pid in wanted if pid not in by_id]
        if missing:
            raise UnknownProposal(f"the report has no proposal {missing[0]!r}; its ids are {sorted(by_id)}")
        chosen = [by_id[pid] for pid in wanted]
    applied: list[str] = []
    skipped: list[tuple[str, str]] = []
    for proposal in chosen:
        lam._sync()
        if proposal.id in lam._applied:
            skipped.append((proposal.id, "already applied"))
            continue
        stale = _stale(lam, proposal)
        if stale:
            skipped.append((proposal.id, stale))
            continue
        events = _events_for(proposal)
        events.append(Event("applied", {"proposal": proposal.id, "kind": proposal.kind},
                            key=f"proposal:{proposal.id}"))
        try:
            lam.store.append(events)
        except EventConflict:
            skipped.append((proposal.id, "already applied (by another writer)"))
            continue
        applied.append(proposal.id)
    lam._sync()
    return ApplyResult(applied=applied, skipped=skipped)


def _stale(lam: Lamar, proposal: Proposal) -> str:
    """Why the proposal no longer fits the store, or "" when it still does."""
    for exp_id, status in proposal.expect.items():
        state = lam._lessons.get(exp_id)
        if state is None:
            return f"lesson {exp_id} is not in this store"
        if state.experience.status.value != status:
            return f"lesson {exp_id} is {state.experience.status.value} now (was {status} when proposed)"
    return ""


def _events_for(proposal: Proposal) -> list[Event]:
    kind, ids = proposal.kind, proposal.experience_ids
    reason = f"sleep {kind}: {proposal.reason}"
    if kind == "retire":
        return [Event("status", {"id": i, "status": Status.RETIRED.value, "reason": reason}) for i in ids]
    if kind == "promote":
        return [Event("status", {"id": i, "status": Status.ACTIVE.value, "reason": reason}) for i in ids]
    if kind == "merge":
        return [Event("merge", {"into": proposal.payload["into"], "from": list(proposal.payload["from"])})]
    if kind == "candidate":
        exp = Experience.from_dict(proposal.payload["experience"]).with_identity()
        return [Event("experience", exp.to_dict(), key=f"experience:{exp.id}")]
    if kind == "compact":
        return [Event("compact", dict(proposal.payload))]
    return []  # a contradiction is acknowledged; the bandit keeps testing both sides


__all__ = ["ApplyResult", "Dropped", "Proposal", "SleepReport", "apply_report", "normalize", "run_sleep"]
