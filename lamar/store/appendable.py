"""`check_appendable`: what a file or database backend can store whole, checked before any write begins."""

from __future__ import annotations

import json
from collections.abc import Sequence

from lamar.store.base import EVENT_KINDS, Event


def check_appendable(events: Sequence[Event]) -> None:
    """Refuse, before any write begins, an event no backend can store whole.

    A lone surrogate in a key used to fail half-way through a SQLite transaction and leave it
    open; a NaN or a NUL would be stored by one backend and refused by another. The file and
    database backends call this first (it computes each event's `data_json`, which their write
    then sends, and one `json.dumps` of the kind and key); the memory store persists nothing, so
    it skips it to keep the in-process hot path at its target.

    Raises:
        InvalidEvent: naming the event and what is wrong with it; nothing is written.
    """
    from lamar._errors import InvalidEvent
    from lamar.storable import storable_problem, time_problem

    for number, event in enumerate(events, 1):
        problem = None
        if not isinstance(event.kind, str) or not isinstance(event.data, dict) or (
                event.key is not None and not isinstance(event.key, str)):
            problem = "kind and key must be strings and data a JSON object"
        elif event.kind not in EVENT_KINDS:  # stored, it would make the whole log unreadable
            problem = f"its kind is not one of {', '.join(sorted(EVENT_KINDS))}"
        else:
            try:  # the whole check in C on the hot path; the walk below decides the rest
                # The data's text as it will be sent (computed once): escaped to ASCII, so NUL and
                # surrogates show as escapes, and a float that is not finite as a bare NaN or
                # Infinity. Text holding any of those (a string may spell them too) is walked.
                text = event.data_json()
                clean = not any(mark in text for mark in _SUSPECT) and _clean(
                    json.dumps([event.kind, event.key], ensure_ascii=False))
            except (TypeError, ValueError, RecursionError):
                clean = False
            if not clean:
                problem = storable_problem([event.kind, event.key, event.data]) or _not_json(event)
            if problem is None and time_problem(event.time):
                problem = f"its time {time_problem(event.time)}"
        if problem:
            raise InvalidEvent(f"event #{number} of this write ({event.kind!r}) cannot be stored: {problem}; "
                               "nothing was written")


def storable_key(key: object) -> bool:
    """Whether `key` is text a file or database store can hold (UTF-8, no NUL). No write stores
    any other, so a lookup drops it unasked: the id is simply not there."""
    return isinstance(key, str) and _clean(key) and "\x00" not in key


_SUSPECT = ("\\u0000", "\\ud", "NaN", "Infinity")  # in escaped JSON text: a NUL, a surrogate, a float not finite


def _clean(text: str) -> bool:
    """Whether JSON text written unescaped (ensure_ascii=False) is storable: UTF-8, no NUL."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return "\\u0000" not in text


def _not_json(event: Event) -> str | None:
    """Why an event that `storable_problem` passed still cannot be written as JSON, or None."""
    try:
        json.dumps([event.kind, event.key, event.data], allow_nan=False)
        event.data_json()
    except (TypeError, ValueError, RecursionError):
        return "it is not JSON"
    return None
