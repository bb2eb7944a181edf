"""`checked_events`: events from another store, held to what the API would have written, and folded
(`checked_fold`) as the store's readers will fold them."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lamar._errors import EventConflict, InvalidEvent, LamarError
from lamar.experience import Experience, check_context
from lamar.signals import Signal
from lamar.storable import finite_number, storable_problem, text_problem, time_problem, whole_number
from lamar.store.base import EVENT_KINDS, Event

if TYPE_CHECKING:
    from lamar.state.follower import Follower

_SIGNALS = {s.value for s in Signal}


def _ids(value: Any, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(i, str) and i for i in value):
        raise ValueError(f"{name!r} must be a list of ids (strings)")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name!r} must be a non-empty string; got {value!r}")
    return value


def _number(value: Any, name: str, low: float, high: float) -> float:
    if not finite_number(value) \
            or not low <= value <= high:
        raise ValueError(f"{name!r} must be a number in [{low:g}, {high:g}]; got {value!r}")
    return float(value)


def _episode(data: Mapping[str, Any]) -> None:
    _text(data.get("id"), "id")
    check_context(data.get("context"), capped=False)  # logs written before the limit keep their contexts
    eligible = set(_ids(data.get("eligible"), "eligible"))
    for name in ("injected", "held_out"):
        if not set(_ids(data.get(name), name)) <= eligible:
            raise ValueError(f"{name!r} names a lesson that is not in 'eligible'")
    p = data.get("p")
    if not isinstance(p, Mapping):
        raise TypeError("'p' must map lesson ids to probabilities")
    for exp_id, prob in p.items():
        _number(prob, f"p[{exp_id}]", 0.0, 1.0)


def _outcome(data: Mapping[str, Any]) -> None:
    _text(data.get("episode"), "episode")
    for flag in ("expired", "default"):
        if not isinstance(data.get(flag, False), bool):
            raise TypeError(f"{flag!r} must be true or false")
    if data.get("expired") and data.get("reward") is None:
        return  # the pending policy (lamar.pending) gave up on the episode: no reward, by design
    _number(data.get("reward"), "reward", -1.0, 1.0)
    if data.get("signal") is not None and data.get("signal") not in _SIGNALS:
        raise ValueError(f"'signal' must be one of {sorted(_SIGNALS)} or null; got {data.get('signal')!r}")
    if not isinstance(data.get("replace", False), bool):
        raise TypeError("'replace' must be true or false")


def _experience(data: Mapping[str, Any]) -> dict[str, Any]:
    from lamar.safety.boundary import admitted

    given = Experience.from_dict(data)
    exp = admitted(given)
    _text(exp.id, "id")
    # Only the text changes, and only where it was not in prompt form: a copy stays a copy.
    changed = {name: getattr(exp, name) for name in ("precondition", "action", "rationale")
               if data.get(name, "") != getattr(exp, name)}
    if exp.provenance is not given.provenance:  # a credential in it, redacted as `add` redacts it
        changed["provenance"] = dict(exp.provenance)
    return {**data, **changed}


def _edit(data: Mapping[str, Any]) -> dict[str, Any]:
    from lamar.safety.boundary import TEXT_FIELDS, admitted

    _text(data.get("id"), "id")
    version = data.get("version")
    if not whole_number(version, low=2):
        raise ValueError(f"'version' must be a whole number >= 2 (the lesson's next version); got {version!r}")
    if data.get("evidence", "restart") not in ("restart", "keep"):
        raise ValueError(f"'evidence' must be restart or keep; got {data.get('evidence')!r}")
    changed = data.get("changed", [])
    if not isinstance(changed, list) or not set(changed) <= {*TEXT_FIELDS, "scope"}:
        raise ValueError(f"'changed' must list some of {[*TEXT_FIELDS, 'scope']}; got {changed!r}")
    if data.get("evidence") == "keep" and {"action", "scope"} & set(changed):
        raise ValueError("an edit of the action or the scope cannot keep the evidence")
    if not isinstance(data.get("reason", ""), str):
        raise TypeError("'reason' must be a string")
    if not isinstance(data.get("scope"), Mapping) or not isinstance(data.get("rationale"), str):
        raise TypeError("an edit holds the whole next version: 'scope' a mapping and 'rationale' a string")
    exp = admitted(Experience.from_dict(data))  # the texts as `edit` would store them
    return {**data, **{name: getattr(exp, name) for name in TEXT_FIELDS if data.get(name, "") != getattr(exp, name)}}


def _status(data: Mapping[str, Any]) -> None:
    _text(data.get("id"), "id")
    if data.get("status") not in ("candidate", "active", "retired"):
        raise ValueError(f"'status' must be candidate, active or retired; got {data.get('status')!r}")
    if not isinstance(data.get("reason", ""), str):
        raise TypeError("'reason' must be a string")


def _scope(data: Mapping[str, Any]) -> None:
    _text(data.get("id"), "id")
    _text(data.get("key"), "key")
    _text(data.get("value"), "value")
    if not isinstance(data.get("reason", ""), str):
        raise TypeError("'reason' must be a string")
    if not isinstance(data.get("continued", {}), Mapping):  # the slice an erasure keeps (lamar.state.erasure)
        raise TypeError("'continued' must be a mapping")


def _merge(data: Mapping[str, Any]) -> None:
    _text(data.get("into"), "into")
    _ids(data.get("from"), "from")


def _applied(data: Mapping[str, Any]) -> None:
    _text(data.get("proposal"), "proposal")


def _compact(data: Mapping[str, Any]) -> None:
    _ids(data.get("episodes"), "episodes")


def _erase(data: Mapping[str, Any]) -> None:
    _text(data.get("id"), "id")
    _text(data.get("by"), "by")
    if not isinstance(data.get("reason", ""), str):
        raise TypeError("'reason' must be a string")
    if not isinstance(data.get("contexts", False), bool):
        raise TypeError("'contexts' must be true or false")
    if "episodes" in data:
        _ids(data["episodes"], "episodes")


def _episode_key(event: Event) -> None:
    """An engine resumed from a saved state finds a reported episode and its outcomes by these
    keys alone: one keyed otherwise would be unreported to it, and a report counted twice."""
    if event.kind == "episode":
        want = f"episode:{event.data.get('id')}"
        if event.key != want:
            raise ValueError(f"its key is {event.key!r}, not {want!r} (what recall writes): give it that key")
    elif event.kind == "outcome":
        want = f"outcome:{event.data.get('episode')}"
        number = event.key[len(want) + 1:] if isinstance(event.key, str) \
            and event.key.startswith(f"{want}:") else ""
        if event.key != want and not (number.isdigit() and number.isascii() and number[0] != "0"):
            raise ValueError(f"its key is {event.key!r}, not {want!r} (what report writes; {want}:N for "
                             "the Nth replacement): give it that key")


_CHECKS = {"episode": _episode, "outcome": _outcome, "status": _status, "scope": _scope, "merge": _merge,
           "applied": _applied, "compact": _compact, "erase": _erase}


def checked_event(event: Event) -> Event:
    """`event` as the API would have written it (a lesson's text in prompt form); ValueError otherwise."""
    if event.kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {event.kind!r}")
    if event.key is not None and (not isinstance(event.key, str) or text_problem(event.key)):
        raise ValueError("its key must be a string without NUL or lone surrogates")
    problem = time_problem(event.time)
    if problem:
        raise ValueError(f"its time {problem}")
    if not isinstance(event.data, Mapping):
        raise TypeError("its data must be a JSON object")
    problem = storable_problem(event.data)
    if problem:
        raise ValueError(f"its data {problem}")
    _episode_key(event)
    if event.kind == "experience":
        return dataclasses.replace(event, data=_experience(event.data))
    if event.kind == "edit":
        return _reason_scrubbed(dataclasses.replace(event, data=_edit(event.data)))
    check = _CHECKS.get(event.kind)
    if check is not None:
        check(event.data)
    return _reason_scrubbed(event)


def _reason_scrubbed(event: Event) -> Event:
    """`event` with a credential in its audit reason redacted, as `Lamar.retire` and apply store one."""
    from lamar.safety.secrets import scrub

    reason = event.data.get("reason")
    if not isinstance(reason, str):
        return event
    cleaned = scrub(reason)[0]
    return event if cleaned == reason else dataclasses.replace(event, data={**event.data, "reason": cleaned})


def checked_events(events: Sequence[Event], where: str, before: Sequence[Event] = ()) -> list[Event]:
    """Every event checked (see `checked_event`), then the whole log folded in memory (`checked_fold`)."""
    return checked_fold(events, where, before)[0]


def checked_fold(events: Sequence[Event], where: str, before: Sequence[Event] = (),
                 tuning: Mapping[str, Any] | None = None) -> tuple[list[Event], Follower]:
    """Every event checked (see `checked_event`), then the whole log folded in memory, and that fold.

    Import (and export) copies events verbatim, so a hand-edited or hostile file could put in a
    store what no API call can: a NaN reward, a propensity of 5, a time in the year 5000, a
    lesson id that is a number, a lone surrogate, a secret in a lesson. Each event is checked, a
    lesson's text is brought into prompt form as `add` would, and the whole log is folded by a
    scratch engine in memory; the first failure refuses the whole file before anything is written.

    Args:
        events: the events to copy.
        where: the source's location, for messages.
        before: events the target already holds (they are folded first at their seqs, and the copy's events
            numbered after them, as the target numbers a write).
        tuning: a `Policy`'s fields to fold under (the defaults when None): the tuning of the copy's readers,
            so that the fold is the state they resume from, where the target numbers the log as it is here.

    Returns:
        The events as the API would have written them, and the follower of their fold (`before` first).

    Raises:
        InvalidEvent: naming the first event that the API would not have written, or the log
            that does not fold; nothing has been written anywhere.
    """
    out = []
    for number, event in enumerate(events, 1):
        try:
            out.append(checked_event(event))
        except (LamarError, ValueError, TypeError, KeyError) as exc:
            raise InvalidEvent(f"{where}: event #{number} ({event.kind!r}) is refused: {exc}; nothing was "
                               "copied: fix or remove that event and try again") from None
    return out, _dry_run(before, out, where, tuning or {})


def _dry_run(before: Sequence[Event], out: Sequence[Event], where: str, tuning: Mapping[str, Any]) -> Follower:
    from lamar.policy.config import Policy
    from lamar.state.follower import Follower
    from lamar.store.scratch import NumberedLog

    try:
        # Numbered as the target numbers a write after what it holds, so that this fold is the state saved there.
        scratch = NumberedLog(before, out)
    except EventConflict as exc:
        raise EventConflict(f"{exc} (an event of {where} repeats a key already in the target, or in {where}); "
                            "nothing was copied") from None
    try:
        log = Follower(scratch, Policy(**tuning))  # the fold an engine opening the copy would do
        log.sync()
        for exp_id, state in log.cache.lessons.items():
            ev = state.evidence(log.policy, log.cache.n_active)
            if any(math.isnan(x) for x in (ev.lift, ev.lower, ev.upper)):
                raise ValueError(f"lesson {exp_id}'s evidence would be NaN")
    except (LamarError, ValueError, TypeError, KeyError, OverflowError) as exc:
        raise InvalidEvent(f"{where}: the events, once copied, would not fold into a usable store ({exc}); "
                           "nothing was copied") from None
    return log


def without_erased(events: Sequence[Event]) -> list[Event]:
    """`events` with every erased lesson's text taken out: an erase stopped behind its event (its
    process killed) leaves the text in the source until its next writer scrubs it, and a copy
    nobody writes to would keep it for good."""
    erases = [e for e in events if e.kind == "erase"]
    if not erases:
        return list(events)
    from lamar.policy.config import Policy
    from lamar.state.erasure import scrub_all

    current = {e.seq: e for e in events}
    try:
        scrub_all(current, erases, Policy())
    except (LamarError, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return list(events)  # a malformed log: `checked_events` names the event at fault
    return list(current.values())


__all__ = ["checked_event", "checked_events", "checked_fold", "without_erased"]
