"""A lesson's next version (`Lamar.edit`): the rule for its evidence, and the event that records it;
and the event that retires or revives a lesson (`Lamar.retire`, `Lamar.revive`)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lamar import arguments
from lamar._errors import EventConflict, InvalidArgument, InvalidExperience, advised
from lamar.experience import Experience, Scope, Status
from lamar.store.base import Event

if TYPE_CHECKING:
    from lamar.state.holder import Holder


NEW_TREATMENT = ("action", "scope")
"""The fields whose change makes a lesson a different treatment: an edit of one cannot keep the evidence."""


def revive_first(exp_id: str, how: str | None = None) -> str:
    """The advice that ends the refusal to edit retired lesson `exp_id`: revive it by `how`, Python's call by
    default; a front finds the advice by this value and names its own way (a command, a tool, a button)."""
    return f"revive it first with {how or f'lam.revive({exp_id!r})'} to edit it, or add a new lesson"


class EvidenceRule(str, enum.Enum):
    """What an edit does to the lesson's evidence.

    The lesson the model reads is the treatment, so a new text is a new treatment: by default its
    evidence restarts as a new segment (`LessonState.renew`: the next share of the lesson's alpha,
    warm-up tries for the new text), as it does when the fall detector sees the world change.
    `evidence="keep"` carries the evidence over for a wording fix that the editor asserts changes
    nothing the model would do differently; it is refused when the action or the scope changes (a
    different treatment, or other contexts than the evidence was measured in).
    """

    RESTART = "restart"
    KEEP = "keep"


def edit_event(exp: Experience, *, precondition: Any = None, action: Any = None, rationale: Any = None,
               scope: Any = None, evidence: Any = "restart", reason: Any = "edited by hand") -> Event:
    """The `edit` event that makes `exp`'s next version (None keeps a field), every argument checked.

    The event holds the whole next version, so a fold needs nothing else, and its key names the
    version, so two writers editing the same version cannot both store theirs.

    Raises:
        InvalidExperience: `exp` is retired, or a new text is empty, too long or holds a credential.
        InvalidContext: the scope is not a mapping of strings.
        InvalidArgument: nothing would change, a bad `evidence` or `reason`, or "keep" with a new
            action or scope.
    """
    from lamar.safety.boundary import TEXT_FIELDS

    if evidence is None:
        raise InvalidArgument("evidence must be one of ['restart', 'keep']; got None")
    rule = arguments.choice(EvidenceRule, evidence, "evidence")
    reason = arguments.reason(reason)
    fields: dict[str, Any] = {name: value for name, value in
                              (("precondition", precondition), ("action", action), ("rationale", rationale))
                              if value is not None}
    if scope is not None:
        if not isinstance(scope, Mapping):
            raise InvalidArgument(f"scope is a mapping of strings, like {{'project': 'trace'}}; "
                                  f"got {type(scope).__name__}")
        fields["scope"] = scope if isinstance(scope, Scope) else Scope(scope)
    if not fields:
        raise InvalidArgument("edit() needs at least one of precondition, action, rationale or scope")
    if exp.status is Status.RETIRED and exp.provenance.get("erased"):  # revive refuses it: say so here
        raise InvalidExperience(f"lesson {exp.id} was erased: its text is gone and it cannot be revived or "
                                "edited; add a new lesson")
    if exp.status is Status.RETIRED:
        raise advised(InvalidExperience, f"lesson {exp.id} is retired: ", revive_first(exp.id))
    new, changed = next_version(exp, fields)
    if not changed:
        raise InvalidArgument(f"lesson {exp.id} already reads so (in prompt form): nothing to edit")
    if rule is EvidenceRule.KEEP and (moved := [name for name in NEW_TREATMENT if name in changed]):
        raise InvalidArgument(f"evidence='keep' (--keep-evidence) is for a wording fix; this edit changes the "
                              f"{' and the '.join(moved)}, so it is a different treatment and its evidence "
                              "restarts: leave evidence out")
    version = exp.version + 1
    data = {"id": exp.id, "version": version, **{name: getattr(new, name) for name in TEXT_FIELDS},
            "scope": dict(new.scope), "changed": changed, "evidence": rule.value, "reason": reason}
    return Event("edit", data, key=edit_key(exp.id, version))


def next_version(exp: Experience, fields: Mapping[str, Any]) -> tuple[Experience, list[str]]:
    """`exp` with `fields` replaced, as it would be stored (screened, in the prompt's form), and the
    names of the fields that this changes: what an edit's rule for the evidence is judged on.

    Raises:
        InvalidExperience: a new text is one `add` would refuse.
    """
    from lamar.safety.boundary import TEXT_FIELDS, admitted

    new = admitted(dataclasses.replace(exp, **fields))
    return new, [name for name in (*TEXT_FIELDS, "scope") if getattr(new, name) != getattr(exp, name)]


def edit_key(exp_id: str, version: int) -> str:
    """The unique key of the event that makes `version` of a lesson: one writer's edit takes it,
    and an erase takes the next one, so that an edit made from the text before it is refused."""
    return f"edit:{exp_id}:{version}"


def write_edit(holder: Holder, exp: Experience, **changes: Any) -> None:
    """Store `exp`'s next version (`edit_event` checks `changes`) through the engine's holder.

    Raises:
        EventConflict: another writer stored this version first.
    """
    event = edit_event(exp, **changes)
    try:
        holder.write([event])
    except EventConflict:
        raise EventConflict(f"another writer stored version {event.data['version']} of lesson {exp.id} "
                            "first: read it again (get) and edit that version") from None


def status_event(exp: Experience, status: Status, reason: Any) -> Event | None:
    """The `status` event that gives `exp` that status; None when it has it already.

    Raises:
        InvalidArgument: a bad reason, or reviving a lesson whose text was erased.
    """
    reason = arguments.reason(reason)
    if exp.status is status:
        return None  # already so: a second event would only repeat the audit trail
    if status is not Status.RETIRED and exp.provenance.get("erased"):
        raise InvalidArgument(f"lesson {exp.id} was erased: its text is gone, so it cannot be injected again; "
                              "add a new lesson instead (`lamar add`, or Lamar.add)")
    return Event("status", {"id": exp.id, "status": status.value, "reason": reason})


__all__ = ["EvidenceRule", "edit_event", "edit_key", "revive_first", "status_event", "write_edit"]
