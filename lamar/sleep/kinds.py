"""The kinds of sleep proposal: for each, what it touches, how it is checked, shown and carried out."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from lamar._errors import InvalidReport, LamarError, echoed
from lamar.experience import Experience, Status
from lamar.sleep.printed import printed_id
from lamar.sleep.proposals import Proposal
from lamar.store import Event


@dataclasses.dataclass(frozen=True)
class ProposalKind:
    """How one kind of proposal is checked, shown and applied.

    One record per kind is the single source of truth: `lamar review` shows `describe(p)` and
    `apply` writes `events(p)`, and both read the same fields, so a hand-edited report cannot make
    apply do what review did not show. A new kind declares itself with one `register(...)` call;
    apply refuses (skips, with the reason) a kind that is not registered.

    Attributes:
        name: the `Proposal.kind` it handles.
        touches: the stored lessons the proposal changes (apply refuses if one is missing).
        check: raises InvalidReport (or another LamarError) when the proposal is malformed.
        describe: the lines review shows, built from the fields `events` uses.
        events: what apply appends to the store.
    """

    name: str
    touches: Callable[[Proposal], Sequence[str]]
    check: Callable[[Proposal], None]
    describe: Callable[[Proposal], list[str]]
    events: Callable[[Proposal], list[Event]]


KINDS: dict[str, ProposalKind] = {}


def register(kind: ProposalKind) -> ProposalKind:
    """Make `kind` known to review and apply (a later registration of the same name replaces it)."""
    KINDS[kind.name] = kind
    return kind


def kind_of(proposal: Proposal) -> ProposalKind:
    """The registered kind of `proposal`; InvalidReport naming the known kinds otherwise."""
    found = KINDS.get(proposal.kind)
    if found is None:
        raise InvalidReport(f"unknown proposal kind {echoed(proposal.kind)}; this Lamar applies {sorted(KINDS)}")
    return found


def _ids(proposal: Proposal) -> Sequence[str]:
    return proposal.experience_ids


def _need_ids(proposal: Proposal) -> None:
    if not proposal.experience_ids:
        raise InvalidReport(f"proposal {echoed(proposal.id)} ({proposal.kind}) names no lesson")


def audit_reason(proposal: Proposal) -> str:
    """The reason the events `proposal` writes record, as `Lamar.retire` would store one: its
    credentials redacted; InvalidReport when a hand edit made it longer than a reason may be."""
    from lamar.safety.boundary import MAX_LESSON_CHARS
    from lamar.safety.secrets import scrub

    size = len(proposal.reason)
    if size > MAX_LESSON_CHARS:
        raise InvalidReport(f"{proposal.kind} proposal {echoed(proposal.id)}: its reason is {size:,} characters long, "
                            f"at most {MAX_LESSON_CHARS:,}: shorten it in the report to a few sentences, or run sleep "
                            "again for a new report")
    return f"sleep {proposal.kind}: {scrub(proposal.reason)[0]}"


def _status_check(proposal: Proposal) -> None:
    _need_ids(proposal)
    audit_reason(proposal)


def _status_events(status: Status) -> Callable[[Proposal], list[Event]]:
    def events(proposal: Proposal) -> list[Event]:
        reason = audit_reason(proposal)
        return [Event("status", {"id": i, "status": status.value, "reason": reason}) for i in proposal.experience_ids]
    return events


def _status_describe(verb: str) -> Callable[[Proposal], list[str]]:
    return lambda p: [f"  {verb} lesson {echoed(i)}" for i in p.experience_ids]


def _merge_parts(proposal: Proposal) -> tuple[str, list[str]]:
    into, sources = proposal.payload.get("into"), proposal.payload.get("from")
    if not isinstance(into, str) or not isinstance(sources, list) or not sources or \
            not all(isinstance(i, str) for i in sources) or into in sources:
        raise InvalidReport(f"merge proposal {echoed(proposal.id)} needs payload into (an id) and from (other ids)")
    if set(proposal.experience_ids) != {into, *sources}:
        raise InvalidReport(f"merge proposal {echoed(proposal.id)}: experience_ids "
                            f"{echoed(list(proposal.experience_ids))} are not the lessons its payload merges "
                            f"({echoed([into, *sources])}); the report was edited")
    return into, sources


def _merge_touches(proposal: Proposal) -> Sequence[str]:
    into, sources = _merge_parts(proposal)
    return [into, *sources]


def _merge_check(proposal: Proposal) -> None:
    _merge_parts(proposal)
    if proposal.payload.get("activate", False) is not True and "activate" in proposal.payload:
        raise InvalidReport(f"merge proposal {echoed(proposal.id)}: payload activate must be true or left out")


def _merge_describe(proposal: Proposal) -> list[str]:
    into, sources = _merge_parts(proposal)
    # Hand-edited ids are shown as refusals show them: quoted, cut when long, credentials redacted.
    target = echoed(into)
    retired = "it is retired, its" if len(sources) == 1 else "they are retired, their"
    activated = f"; {target} becomes active, as the merged lesson was" if proposal.payload.get("activate") else ""
    merged = ", ".join(map(echoed, sources))
    return [f"  merge {merged} into {target} ({retired} evidence moves to {target}{activated})"]


def _merge_events(proposal: Proposal) -> list[Event]:
    into, sources = _merge_parts(proposal)
    if not proposal.payload.get("activate"):
        return [Event("merge", {"into": into, "from": sources})]
    return [Event("merge", {"into": into, "from": sources}),
            Event("status", {"id": into, "status": Status.ACTIVE.value, "reason": audit_reason(proposal)})]


def candidate_lesson(proposal: Proposal) -> Experience:
    """The lesson a candidate proposal adds, exactly as apply stores it, re-screened.

    Raises:
        InvalidReport: the payload is not a lesson, is not a candidate, holds a secret,
            reads as instructions to the model or asks for a dangerous action.
    """
    from lamar.safety import injection_reason
    from lamar.safety.actions import action_reason
    from lamar.safety.boundary import admitted

    raw = proposal.payload.get("experience")
    if not isinstance(raw, Mapping):
        raise InvalidReport(f"candidate proposal {echoed(proposal.id)} has no lesson in payload.experience")
    try:
        exp = admitted(Experience.from_dict(raw))
    except LamarError as exc:
        raise InvalidReport(f"candidate proposal {echoed(proposal.id)}: {exc}") from None
    if exp.status is not Status.CANDIDATE:
        raise InvalidReport(f"candidate proposal {echoed(proposal.id)} has status {exp.status.value!r}: a mined "
                            "lesson enters as a candidate, never as an active belief")
    if not exp.id or tuple(proposal.experience_ids) != (exp.id,):
        raise InvalidReport(f"candidate proposal {echoed(proposal.id)}: experience_ids "
                            f"{echoed(list(proposal.experience_ids))} do not name its lesson ({echoed(exp.id)})")
    text = "\n".join([exp.precondition, exp.action, exp.rationale, *exp.scope.values()])
    injected = injection_reason(text)
    if injected:
        raise InvalidReport(f"candidate proposal {echoed(proposal.id)} looks like an injection attempt: {injected}")
    dangerous = action_reason(text)
    if dangerous:
        raise InvalidReport(f"candidate proposal {echoed(proposal.id)} asks for a dangerous action: {dangerous}")
    return exp


def _candidate_describe(proposal: Proposal) -> list[str]:
    exp = candidate_lesson(proposal)
    # A scope value may hold a line break (a lesson admits one): printed as an id is, it cannot start a line.
    scope = ", ".join(f"{printed_id(k)}={printed_id(v)}" for k, v in exp.scope.items()) or "everywhere"
    from lamar.sleep.warned import warning_line

    warned = warning_line(proposal)  # a person decides on it: said beside what apply would do
    return [f"  new lesson {echoed(exp.id)} ({exp.status.value}, scope {scope}): {exp.render()}",
            *([f"  {warned}"] if warned else [])]


def _candidate_events(proposal: Proposal) -> list[Event]:
    exp = candidate_lesson(proposal).with_identity()
    return [Event("experience", exp.to_dict(), key=f"experience:{exp.id}")]


def _candidate_check(proposal: Proposal) -> None:
    candidate_lesson(proposal)


def _compact_check(proposal: Proposal) -> None:
    episodes = proposal.payload.get("episodes")
    if not isinstance(episodes, list) or not all(isinstance(e, str) for e in episodes):
        raise InvalidReport(f"compact proposal {echoed(proposal.id)} needs payload.episodes, a list of episode ids")


def _compact_describe(proposal: Proposal) -> list[str]:
    return [f"  fold {len(proposal.payload.get('episodes') or [])} old episodes into the lessons' counts"]


def _contradiction_describe(proposal: Proposal) -> list[str]:
    lessons = len(proposal.experience_ids)
    return [f"  acknowledge: the bandit keeps testing each of the {lessons} lessons (nothing else changes)"]


register(ProposalKind("retire", _ids, _status_check, _status_describe("retire"), _status_events(Status.RETIRED)))
register(ProposalKind("promote", _ids, _status_check, _status_describe("promote to active"),
                      _status_events(Status.ACTIVE)))
register(ProposalKind("merge", _merge_touches, _merge_check, _merge_describe, _merge_events))
register(ProposalKind("contradiction", _ids, _need_ids, _contradiction_describe, lambda p: []))
register(ProposalKind("candidate", lambda p: [], _candidate_check, _candidate_describe, _candidate_events))
register(ProposalKind("compact", lambda p: [], _compact_check, _compact_describe,
                      lambda p: [Event("compact", dict(p.payload))]))


def describe(proposal: Proposal) -> list[str]:
    """What applying the proposal would do, one line each; a malformed one says why it is refused."""
    try:
        kind = kind_of(proposal)
        kind.check(proposal)
        return kind.describe(proposal)
    except LamarError as exc:
        return [f"  REFUSED by apply: {exc}"]


__all__ = ["KINDS", "ProposalKind", "audit_reason", "candidate_lesson", "describe", "kind_of", "register"]

