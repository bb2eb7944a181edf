"""The in-process reference store: a list and a set behind a lock. Nothing touches disk."""

from __future__ import annotations

import _thread
from collections.abc import Sequence

from lamar._errors import EventConflict, InvalidEvent
from lamar.store.base import EVENT_KINDS, Event, closed_store, scrubbed_log
from lamar.store.held import held_conflict, held_in


class MemoryStore:
    """Events in a Python list; safe across threads of one process.

    >>> s = MemoryStore()
    >>> [e.seq for e in s.append([Event("status", {"id": "x", "status": "retired"})])]
    [1]
    """

    def __init__(self) -> None:
        self.location = ":memory:"
        self._events: list[Event] = []
        self._keys: dict[str, Event] = {}
        self._state: tuple[int, str] | None = None
        self._lock = _thread.allocate_lock()  # threading's Lock, without importing threading
        self._closed = False

    def append(self, events: Sequence[Event]) -> list[Event]:
        self._check_open()
        unknown = next((e.kind for e in events if e.kind not in EVENT_KINDS), None)
        if unknown is not None:  # the engine could not fold the log back: refused like the other stores do
            raise InvalidEvent(f"an event of this write has the kind {unknown!r}, which is not one of "
                               f"{', '.join(sorted(EVENT_KINDS))}; nothing was written")
        with self._lock:
            keys = [e.key for e in events if e.key is not None]
            clash = next((k for k in keys if k in self._keys), None) or held_in(next(iter(self._events), None), events)
            if clash is not None:
                raise EventConflict(f"event key {clash!r} is already in the store" if clash in self._keys
                                    else held_conflict(clash, self.location))
            if len(set(keys)) != len(keys):
                raise EventConflict(f"event key {_repeated(keys)!r} is in this write twice")
            last = self._events[-1].seq if self._events else 0
            stored = [Event(e.kind, e.data, e.key, last + i + 1, e.time) for i, e in enumerate(events)]
            self._events.extend(stored)
            self._keys.update((e.key, e) for e in stored if e.key is not None)
            return stored

    def read(self, after: int = 0) -> list[Event]:
        self._check_open()
        events = self._events  # a rewrite swaps in a new list; this one stays whole
        start = events[0].seq - 1 if events else 0
        return events[max(0, after - start):]

    def rewrite(self, through: int, snapshot: Event) -> bool:
        with self._lock:
            self._check_open()
            events = self._events
            last = events[-1].seq if events else 0
            if through > last or through < 1:
                raise ValueError(f"cannot rewrite through seq {through}: the log holds seqs 1..{last}")
            if events[0].kind == "snapshot" and events[0].seq >= through:
                return False
            start = events[0].seq - 1
            kept = events[through - start:]
            if any(e.kind == "erase" for e in kept):  # the snapshot was folded before it: it may hold the text
                return False
            self._events = [Event(snapshot.kind, snapshot.data, None, through, snapshot.time), *kept]
            self._keys = {e.key: e for e in kept if e.key is not None}
            return True

    def scrub(self, events: Sequence[Event]) -> int:
        with self._lock:
            self._check_open()
            replaced = scrubbed_log(self._events, events, self.location)  # a read in progress keeps its list
            self._events = replaced
            self._keys = {e.key: e for e in replaced if e.key is not None}
            self._state = None
            return len(events)

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        self._check_open()
        found = [self._keys.get(key) for key in keys]
        return sorted((e for e in found if e is not None), key=lambda e: e.seq)

    def load_state(self) -> str | None:
        self._check_open()
        return None if self._state is None else self._state[1]

    def save_state(self, seq: int, text: str) -> None:
        with self._lock:
            self._check_open()
            events = self._events  # only those after `seq`: a save costs what the state's tail holds
            start = events[0].seq - 1 if events else 0
            erased = any(e.kind == "erase" for e in events[max(0, seq - start):])  # the text may be in it
            if not erased and (self._state is None or self._state[0] <= seq):
                self._state = (seq, text)

    def _check_open(self) -> None:
        # The events would still be there, but a use after close is a bug the other stores refuse:
        # code that passes in memory must not fail only once it runs on a file or a database.
        if self._closed:
            raise closed_store(self.location)

    def close(self) -> None:
        self._closed = True


def _repeated(keys: Sequence[str]) -> str | None:
    """The first key of `keys` that appeared before it."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None
