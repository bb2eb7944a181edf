"""Narrowing: when a lesson's evidence splits by context, propose fixing its scope to the slice
where it helps, citing the evidence of every slice of that key."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from lamar._errors import InvalidReport, echoed
from lamar.experience import Status
from lamar.policy.verdicts import SliceEvidence, Verdict, no_evidence_yet
from lamar.sleep.kinds import ProposalKind, audit_reason, register
from lamar.sleep.printed import printed_id
from lamar.sleep.proposals import Proposal
from lamar.store import Event

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView


def propose_narrowing(lam: SleepView) -> list[Proposal]:
    """A `narrow` proposal for each live lesson whose evidence splits by context; writes nothing.

    A lesson scoped to `task=build` may help in Swift and hurt in Python. The engine's per-slice
    ledgers (policy/features.py) judge each value of each free context key; when one value is
    proven to help and another proven to harm (or the lesson is proven harmful overall but
    helpful in one value), the scope should say so. Applying the proposal appends a `scope`
    event: the lesson keeps its id, history and audit trail, the old scope goes into its
    provenance, and its evidence continues that slice's ledger.
    """
    out = []
    for exp in lam.experiences():
        if exp.status is Status.RETIRED:
            continue
        ev = lam.evidence(exp.id)
        by_key: dict[str, list[tuple[str, SliceEvidence]]] = defaultdict(list)
        for name, s in ev.slices.items():
            key, _, value = name.partition("=")
            by_key[key].append((value, s))
        for key, slices in sorted(by_key.items()):
            # A value a recall scrubbed ("[REDACTED:...]" in it) is no scope: no context as given equals it.
            helps = [(v, s) for v, s in slices if s.verdict is Verdict.HELPS and "[REDACTED:" not in v]
            harms = [(v, s) for v, s in slices if s.verdict is Verdict.HARMS]
            if not helps or not (harms or ev.verdict is Verdict.HARMS):
                continue
            value = max(helps, key=lambda pair: pair[1].lower)[0]
            cited = "; ".join(f"{key}={v}: {s.verdict.value}, {_measure(s)}" for v, s in sorted(slices))
            whole = (f"lift {ev.lift:+.3f} over {ev.randomized} randomized" if ev.measured
                     else f"lift n/a: {no_evidence_yet(ev.randomized)}")
            overall = f"lesson-wide {ev.verdict.value}, {whole}"
            others = [v for v, _ in helps if v != value]
            extra = f"; it also helps where {key} is {', '.join(others)} (add a copy scoped there)" if others else ""
            payload = {"key": key, "value": value, "scope": {**dict(exp.scope), key: value}}
            out.append(Proposal(
                id=Proposal.make_id("narrow", [exp.id], payload), kind="narrow", experience_ids=(exp.id,),
                reason=(f"its evidence splits by {key}: narrow the scope to {key}={value} ({cited}; {overall})"
                        f"{extra}"),
                evidence={exp.id: {**ev.to_dict(), "version": exp.version}}, payload=payload,
                expect={exp.id: exp.status.value}))
            break  # one key at a time: narrowing resets the other keys' slices
    return out


def still_splits(lam: SleepView, proposal: Proposal) -> str:
    """Why a narrow proposal no longer holds, or "" when the slice is still proven to help."""
    exp_id = proposal.experience_ids[0]
    key, value = str(proposal.payload["key"]), str(proposal.payload["value"])
    if key in lam.get(exp_id).scope:
        return f"lesson {exp_id}'s scope already fixes {printed_id(key)}"
    slice_ev = lam.evidence(exp_id).slices.get(f"{key}={value}")
    if slice_ev is None or slice_ev.verdict is not Verdict.HELPS:
        now = "no verdict" if slice_ev is None else slice_ev.verdict.value
        return f"lesson {exp_id} is no longer proven to help where {printed_id(key)}={printed_id(value)} ({now})"
    return ""


def _parts(proposal: Proposal) -> tuple[str, str, str]:
    """(lesson, key, value) of a narrow proposal, checked as apply reads them."""
    key, value = proposal.payload.get("key"), proposal.payload.get("value")
    if len(proposal.experience_ids) != 1 or not isinstance(key, str) or not isinstance(value, str) or not key:
        raise InvalidReport(f"narrow proposal {echoed(proposal.id)} needs one lesson and payload key and value "
                            "(strings)")
    return proposal.experience_ids[0], key, value


def _check(proposal: Proposal) -> None:
    _parts(proposal)
    audit_reason(proposal)


def _describe(proposal: Proposal) -> list[str]:
    exp_id, key, value = _parts(proposal)
    # A hand edit can put a line break or 10 000 characters in the key or the value: each is printed as an id is.
    # The id is quoted (echoed): a possessive after its quote would read `'exp_1''s`.
    return [(f"  narrow the scope of lesson {echoed(exp_id)}: add {printed_id(key)}={printed_id(value)} (it stays "
             "eligible only there; its evidence continues that slice's)")]


def _events(proposal: Proposal) -> list[Event]:
    exp_id, key, value = _parts(proposal)
    return [Event("scope", {"id": exp_id, "key": key, "value": value,
                            "reason": audit_reason(proposal)})]


register(ProposalKind("narrow", lambda p: [_parts(p)[0]], _check, _describe, _events))



def _measure(s: SliceEvidence) -> str:
    """A slice's lift as a reviewer reads it: none while its interval spans every lift there can be."""
    if not s.measured:
        return f"lift n/a: {no_evidence_yet(s.randomized)}"
    return f"lift {s.lift:+.3f} [{s.lower:+.3f}, {s.upper:+.3f}] over {s.randomized} randomized"

__all__ = ["propose_narrowing", "still_splits"]
