"""The in-process store saves the engine's state at a cost that does not grow with the log: the
check for an `erase` event after the state reads the events after it only."""

from __future__ import annotations

from lamar.store.base import Event
from lamar.store.memory import MemoryStore


class _Unwalkable(list[Event]):
    """The log as a list that refuses to be walked from its start."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        raise AssertionError("save_state walked the whole log")


def _store(n: int) -> MemoryStore:
    store = MemoryStore()
    store.append([Event("status", {"id": f"x{i}", "status": "retired"}) for i in range(n)])
    return store


def test_saving_the_state_does_not_walk_the_whole_log() -> None:
    store = _store(2000)
    store._events = _Unwalkable(store._events)  # the appends are done: only the save is watched
    store.save_state(1990, "state")
    assert store.load_state() == "state"


def test_a_state_folded_before_an_erase_event_is_still_refused() -> None:
    store = _store(10)
    store.append([Event("erase", {"id": "x3", "by": "ops"})])
    store._events = _Unwalkable(store._events)
    store.save_state(10, "before the erase")
    assert store.load_state() is None
    store.save_state(11, "after the erase")
    assert store.load_state() == "after the erase"
