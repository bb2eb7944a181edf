"""Rejected proposals: a person's no, kept in the store as an applied record, so that sleep asks
again only once what the proposal rests on has changed (docs/sleep.md, "Rejected proposals")."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from lamar._errors import EventConflict, InvalidReport, LamarError, UnknownProposal, echoed
from lamar.sleep.proposals import Proposal, SleepReport
from lamar.store import Event

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView

PREFIX, UNDONE = "reject:", "unreject:"
# Kinds whose verdict rests on the lesson's randomized evidence: more of it, or a restart, is news.
_ON_EVIDENCE = frozenset({"retire", "promote", "narrow"})
_DROPPED = "retire_dropped"  # rests on the reported episodes the lesson went unchosen (lamar.sleep.dropped)
# The ids sleep makes ("retire_0a1b..."): a record id holds one between colons, so no colon, no space.
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.-]{1,200}")
_RECORD = re.compile(r"(?P<subject>[A-Za-z0-9_.-]{1,200}):(?P<count>\d{1,18}|-):(?P<state>[0-9a-f]{8}|-):"
                     r"(?P<n>\d{1,9})")
Absorbed = Callable[[str], int]
_SHOWN_REASON = 300  # characters of the rejected proposal's reason kept beside the record


@dataclasses.dataclass(frozen=True)
class Rejection:
    """One rejection the store holds, in force until undone or until what it rests on changes.

    Attributes:
        id: the record's id, the `proposal` of its applied event (`reject:...`).
        proposal: the rejected proposal's id; "compact" for a compaction, which folds other episodes each night.
        count: what the proposal rested on when rejected: randomized episodes (retire, promote, narrow),
            sessions (a mined candidate), episodes to fold (compact) or reported episodes unchosen
            (retire_dropped); None for a merge or a contradiction, which rest on their lessons' texts.
        state: a digest of the named lessons' versions (and, for the kinds judged on evidence, their
            evidence restarts) when rejected; "-" when it names none.
        kind, lessons, reason, time: what the person saw, kept beside the record and by a checkpoint's
            snapshot ("" and () after a checkpoint written by a Lamar that kept the record's id alone).
    """

    id: str
    proposal: str
    count: int | None
    state: str
    kind: str = ""
    lessons: tuple[str, ...] = ()
    reason: str = ""
    time: float | None = None

    def holds_for(self, proposal: Proposal, absorbed: Absorbed = lambda _id: 0) -> bool:
        """Whether this rejection covers `proposal` as sleep makes it now (`absorbed`: `absorbed_in(lam)`)."""
        if subject(proposal) != self.proposal or state(proposal, absorbed) != self.state:
            return False  # another change, or a lesson it names was edited, merged into or restarted
        now = count(proposal)
        return self.count is None or now is None or now < 2 * max(self.count, 1)

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self) | {"lessons": list(self.lessons)}


def subject(proposal: Proposal) -> str:
    return "compact" if proposal.kind == "compact" else proposal.id


def count(proposal: Proposal) -> int | None:
    """What the proposal's verdict rests on, as `Rejection.count` says; None when only its lessons' texts."""
    if proposal.kind == "compact":
        episodes = proposal.payload.get("episodes")
        return len(episodes) if isinstance(episodes, list) else 0
    if proposal.kind == "candidate":
        ev = next(iter(proposal.evidence.values()), {})
        return _whole(ev.get("sessions", ev.get("traces")))
    if proposal.kind in _ON_EVIDENCE:
        return sum(_whole(ev.get("randomized")) for ev in proposal.evidence.values())
    if proposal.kind == _DROPPED:  # kept by a person: asked again once it has gone twice as long unchosen
        return sum(_whole(ev.get("unchosen")) for ev in proposal.evidence.values())
    return None


def state(proposal: Proposal, absorbed: Absorbed = lambda _id: 0) -> str:
    """A digest of the named lessons as the proposal saw them: each one's version, how many lessons were merged
    into it (`absorbed`), and for the kinds judged on evidence its restarts, so an edit, a merge into it or a
    restart of its evidence is a new question."""
    on_evidence = proposal.kind in _ON_EVIDENCE or proposal.kind == _DROPPED  # a new fall restarts it too
    parts = sorted([i, _whole(ev.get("version")), _whole(ev.get("restarts")) if on_evidence else 0, absorbed(i)]
                   for i, ev in proposal.evidence.items() if "version" in ev)
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:8] if parts else "-"


def absorbed_in(lam: SleepView) -> Absorbed:
    """How many lessons the store merged into each lesson, by id (0 for one it does not hold)."""
    def absorbed(exp_id: str) -> int:
        held = lam.lesson(exp_id)
        merged = held.experience.provenance.get("merged_from") if held is not None else None
        return len(merged) if isinstance(merged, list) else 0
    return absorbed


def _whole(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _parsed(record: str) -> Rejection | None:
    found = _RECORD.fullmatch(record[len(PREFIX):]) if record.startswith(PREFIX) else None
    if found is None:
        return None
    number = found["count"]
    return Rejection(record, found["subject"], None if number == "-" else int(number), found["state"])


def _records(lam: SleepView) -> tuple[list[Rejection], set[str]]:
    """Every rejection record the store holds, and the ids of those undone."""
    held = lam.applied_ids()
    undone = {r[len(UNDONE):] for r in held if r.startswith(UNDONE)}
    return sorted(filter(None, map(_parsed, held)), key=lambda r: r.id), undone


def in_force(lam: SleepView) -> list[Rejection]:
    """The rejections not undone, nor said yes to since (each one holds for a proposal only while `holds_for`
    says so)."""
    records, undone = _records(lam)
    # Applying the proposal (an older report, `--only`) is a yes: the no is over, and sleep lists it as applied.
    return [r for r in records if r.id not in undone and not lam.applied(r.proposal)]


def rejected_by(proposal: Proposal, rejections: Iterable[Rejection], absorbed: Absorbed) -> Rejection | None:
    """The rejection that keeps `proposal` out of a report, or None."""
    return next((r for r in rejections if r.holds_for(proposal, absorbed)), None)


def without_rejected(lam: SleepView, report: SleepReport) -> SleepReport:
    """The report without the proposals a rejection in force covers; their ids go in its summary's
    "rejected" (None: the store could not say, and every proposal is listed)."""
    import logging

    try:
        rejections = in_force(lam)
    except LamarError as exc:  # leaving them out is a courtesy: it must not cost a report whose mining cost calls
        logging.getLogger(__name__).warning("Lamar's sleep lists every proposal, rejected or not: %s", exc)
        return dataclasses.replace(report, summary={**report.summary, "rejected": None})
    absorbed = absorbed_in(lam)
    out = [p.id for p in report.proposals if rejected_by(p, rejections, absorbed)]
    return dataclasses.replace(report, proposals=[p for p in report.proposals if p.id not in out],
                               summary={**report.summary, "rejected": out})


def reject(lam: SleepView, report: SleepReport, only: Sequence[str]) -> list[str]:
    """Record the person's no to the proposals `only` names; the ids of those recorded now (one the
    store holds as applied, or as rejected already on the same grounds, is left as it is).

    Raises:
        UnknownProposal: an id the report does not hold.
        InvalidReport: a proposal id sleep would not make (edited by hand): it cannot name a record.
    """
    from lamar.safety.secrets import scrub

    by_id = {p.id: p for p in report.proposals}
    missing = [pid for pid in only if pid not in by_id]
    if missing:
        raise UnknownProposal(f"the report has no proposal {echoed(missing[0])}")
    edited = [pid for pid in only if not _PLAIN_ID.fullmatch(pid)]
    if edited:  # refused before any is recorded
        raise InvalidReport(f"proposal id {echoed(edited[0])} is not one sleep makes (it was edited): run sleep "
                            "again, and reject the proposal of the new report")
    done: list[str] = []
    for pid in dict.fromkeys(only):
        proposal = by_id[pid]
        lam.sync()
        records, undone = _records(lam)
        absorbed = absorbed_in(lam)
        if lam.applied(pid) or rejected_by(proposal, (r for r in records if r.id not in undone), absorbed):
            continue
        grounds = f"{PREFIX}{subject(proposal)}:{_shown(count(proposal))}:{state(proposal, absorbed)}:"
        number = 1 + sum(1 for r in records if r.id.startswith(grounds))  # undone on these grounds before
        record = f"{grounds}{number}"
        data = {"proposal": record, "kind": "reject", "rejects": pid, "of": proposal.kind,
                "lessons": list(proposal.experience_ids), "reason": scrub(proposal.reason)[0][:_SHOWN_REASON]}
        try:
            lam.append([Event("applied", data, key=f"proposal:{record}")])
        except EventConflict:  # another reviewer said the same no at the same time
            continue
        # This no replaces an earlier one of the same subject, which no longer held (each compaction,
        # or the same proposal on grounds changed since): `lamar rejections` lists the subject once.
        _undo(lam, [r for r in records if r.proposal == subject(proposal) and r.id not in undone])
        done.append(pid)
    lam.sync()
    return done


def said_yes(lam: SleepView, applied: Iterable[Proposal]) -> None:
    """Undo the rejections in force of the proposals just applied, as `unreject` would: applying one is a yes,
    and applying a compaction is a yes to compaction, whatever episodes the rejected one would have folded."""
    subjects = {subject(p) for p in applied}
    if subjects:
        _undo(lam, [r for r in in_force(lam) if r.proposal in subjects])


def _shown(value: int | None) -> str:
    return "-" if value is None else str(value)


def unreject(lam: SleepView, proposal_id: str) -> list[Rejection]:
    """Undo the rejections in force of `proposal_id` (a rejected proposal's id, "compact" or one
    starting "compact_" for compactions, or a record's id); those undone, none when none was in force."""
    lam.sync()
    name = "compact" if proposal_id.startswith("compact_") else proposal_id
    undo = described(lam, [r for r in in_force(lam) if name in (r.proposal, r.id)])
    _undo(lam, undo)
    lam.sync()
    return undo


def _undo(lam: SleepView, rejections: Iterable[Rejection]) -> None:
    for rejection in rejections:
        try:
            lam.append([Event("applied", {"proposal": UNDONE + rejection.id, "kind": "unreject"},
                              key=f"proposal:{UNDONE}{rejection.id}")])
        except EventConflict:  # another writer undid it at the same time
            pass


def described(lam: SleepView, rejections: Sequence[Rejection]) -> list[Rejection]:
    """The rejections with what the person saw, as the store keeps it beside each record (a checkpoint
    keeps it in its snapshot), or read from the record's event when the folded state has it not."""
    from lamar.store.base import KeyedStore

    noes = dict(lam.noes())
    if keys := [f"proposal:{r.id}" for r in rejections if r.id not in noes]:  # a state saved before it kept them
        store, wanted = lam.store, set(keys)
        events = store.lookup(keys) if isinstance(store, KeyedStore) else [e for e in store.read() if e.key in wanted]
        noes |= {str(e.data.get("proposal")): {**e.data, "time": e.time} for e in events if e.kind == "applied"}
    out = []
    for r in rejections:
        seen = noes.get(r.id)
        if seen is None:  # folded into a checkpoint by a Lamar that kept its id alone
            out.append(r)
            continue
        lessons, at = seen.get("lessons"), seen.get("time")
        out.append(dataclasses.replace(
            r, kind=str(seen.get("of", "")), reason=str(seen.get("reason", "")),
            time=float(at) if isinstance(at, (int, float)) and not isinstance(at, bool) else None,
            lessons=tuple(map(str, lessons)) if isinstance(lessons, list) else ()))
    return sorted(out, key=lambda r: (r.time is None, r.time or 0.0, r.id))


__all__ = ["PREFIX", "UNDONE", "Absorbed", "Rejection", "absorbed_in", "count", "described", "in_force", "reject",
           "rejected_by", "said_yes", "state", "subject", "unreject", "without_rejected"]
