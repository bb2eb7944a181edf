"""What mining lost to replies it could read only in part: whole replies without a lesson list
beside readable ones, and lessons too malformed to read; `SleepReport.mining_lost` holds it."""

from __future__ import annotations

from collections.abc import Sequence

_SHOWN = 5  # trace ids named: enough to find the batch, not a screenful


def unreadable_lesson(reason: str) -> bool:
    """Whether a lesson `parse_reply` dropped could not be read as a lesson at all (not an object,
    a key missing or of the wrong type), as opposed to one read and refused for what it says."""
    return reason.startswith(("malformed lesson", "a lesson must be a JSON object"))


def lost_message(replies: int, unread: Sequence[str], traces: Sequence[str], written: int,
                 malformed: Sequence[str], misread: Sequence[str] = ()) -> str:
    """What was lost, how much, and what to do; "" when nothing was. `unread`: why each unreadable
    reply of the `replies` was; `traces`: the ids (as shown) of the traces those replies were about;
    `malformed`: why each unreadable lesson of the `written` was; `misread`: the ids of the traces
    the replies holding those lessons were about (the message ends "run sleep again on those traces")."""
    parts = []
    if unread:
        parts.append(f"{len(unread)} of {replies} model replies held no lesson list, so {len(traces)} traces were not "
                     f"mined ({_named(traces)}; the last reply: {unread[-1]})")
    if malformed:
        about = f", in the replies about traces {_named(misread)}" if misread else ""
        parts.append(f"{len(malformed)} of the {written} lessons the model wrote could not be read as lessons "
                     f"(the first: {malformed[0]}){about}")
    if not parts:
        return ""
    return "; ".join(parts) + ": what could be read was mined; run sleep again on those traces, or check the model"


def _named(traces: Sequence[str]) -> str:
    return ", ".join(traces[:_SHOWN]) + (f", ... ({len(traces)} in all)" if len(traces) > _SHOWN else "")


__all__ = ["lost_message", "unreadable_lesson"]
