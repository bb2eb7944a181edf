"""The in-process reference store: a list and a set behind a lock. Nothing touches disk."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from lamar._errors import EventConflict
from lamar.store.base import Event


class MemoryStore:
    """Events in a Python list; safe across threads of one process.

    >>> s = MemoryStore()
    >>> [e.seq for e in s.append([Event("status", {"id": "x", "status": "retired"})])]
    [1]
    """

    def __init__(self) -> None:
        self.location = ":memory:"
        self._events: list[Event] = []
        self._keys: set[str] = set()
        self._lock = threading.Lock()

    def append(self, events: Sequence[Event]) -> list[Event]:
        with self._lock:
            keys = [e.key for e in events if e.key is not None]
            clash = next((k for k in keys if k in self._keys), None)
            if clash is not None or len(set(keys)) != len(keys):
                raise EventConflict(f"event key {clash!r} is already in the store")
            base = len(self._events)
            stored = [Event(e.kind, e.data, e.key, base + i + 1, e.time) for i, e in enumerate(events)]
            self._events.extend(stored)
            self._keys.update(keys)
            return stored

    def read(self, after: int = 0) -> list[Event]:
        return self._events[after:]

    def close(self) -> None:
        pass
