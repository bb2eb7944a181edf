"""The write lock of `LangGraphStore` against what its namespace may hold besides live writers'
entries, and against a lease too short for the store to keep."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langgraph.store.base import SearchOp
from langgraph.store.memory import InMemoryStore

from lamar import Experience, InvalidArgument, Lamar, StoreError
from lamar_langgraph import LangGraphStore
from lamar_langgraph.bakery import BakeryLock

WRITERS = ("lamar", "writers")


@pytest.mark.parametrize("entry", [
    {"ticket": "x", "beat": time.time()},
    {"ticket": 1, "beat": "now"},
    {"ticket": None, "beat": None},
    {"ticket": True, "beat": time.time()},
    {"ticket": 1, "beat": float("inf")},
    {"ticket": 1, "beat": float("nan")},
    {"ticket": -3, "beat": time.time()},
])
def test_an_entry_no_writer_could_have_written_is_cleared_not_a_crash(entry: dict[str, Any]) -> None:
    store = InMemoryStore()
    store.put(WRITERS, "stray", entry)
    lam = Lamar(LangGraphStore(store, timeout=2))
    lesson = lam.add(Experience("the build fails", "read the log"))
    assert lam.get(lesson).action == "read the log"
    assert store.get(WRITERS, "stray") is None


def test_a_lease_too_short_for_the_store_says_to_raise_the_lease_and_gives_up_soon() -> None:
    lam = Lamar(LangGraphStore(InMemoryStore(), lease=1e-6, timeout=30))
    start = time.monotonic()
    with pytest.raises(StoreError, match="raise `lease`"):
        lam.add(Experience("the build fails", "read the log"))
    assert time.monotonic() - start < 5  # not the whole timeout spent re-taking tickets


@pytest.mark.parametrize("lease", [float("inf"), float("nan"), -1.0, 0, True, "30"])
def test_a_lease_that_would_never_expire_or_is_no_number_is_refused(lease: Any) -> None:
    with pytest.raises(InvalidArgument, match="lease is a"):
        LangGraphStore(InMemoryStore(), lease=lease)
    with pytest.raises(InvalidArgument, match="lease is a"):
        BakeryLock(InMemoryStore().batch, WRITERS, "w1", lease=lease, timeout=1.0)


def test_a_crashed_writers_place_is_cleared_after_a_finite_lease() -> None:
    store = InMemoryStore()
    crashed = BakeryLock(store.batch, WRITERS, "crashed", lease=60.0, timeout=1.0)
    crashed.acquire()  # and never released: its process died
    store.put(WRITERS, "crashed", {**store.get(WRITERS, "crashed").value, "beat": time.time() - 61})  # type: ignore[union-attr]
    with BakeryLock(store.batch, WRITERS, "next", lease=60.0, timeout=30.0):
        assert store.get(WRITERS, "crashed") is None


def test_a_timeout_may_be_endless() -> None:
    assert LangGraphStore(InMemoryStore(), timeout=float("inf")).timeout == float("inf")


def test_saving_the_state_gives_up_at_once_while_another_writer_holds_the_lock() -> None:
    # The state is a cache, saved on reads too (a sync); like the other stores' save_state it must
    # never wait for the write lock, or a read waits for another process's whole write.
    store = InMemoryStore()
    lamar_store = LangGraphStore(store, timeout=0.05)
    lam = Lamar(lamar_store)
    lam.add(Experience("the build fails", "read the log"))
    seq = lamar_store.read()[-1].seq
    with BakeryLock(store.batch, WRITERS, "another process", lease=60.0, timeout=1.0):
        lamar_store.save_state(seq, "a state")  # no StoreError for having waited out the timeout
        assert lamar_store.load_state() != "a state"
        assert store.get(WRITERS, "another process") is not None
    assert [item.key for item in store.search(WRITERS)] == []  # nothing of ours left behind either
    lamar_store.save_state(seq, "a state")
    assert lamar_store.load_state() == "a state"


def test_a_writer_back_from_idle_is_never_dropped_by_a_look_that_found_its_idle_entry_old() -> None:
    """A writes less often than once a lease, so its entry from its last commit (`ending()`) is a lease old. B's
    look reads it, A comes back and takes a ticket after B's, then B clears what it read as idle. C, taking its
    ticket after that, must still see A: else, once B is done, A and C would both find no one before them."""
    store = InMemoryStore()
    a, b, c = (BakeryLock(store.batch, WRITERS, name, lease=60.0, timeout=5.0) for name in "abc")
    a.acquire()
    store.batch([a.ending()])
    a.ended()
    idle = next(item for item in store.search(WRITERS))
    store.put(WRITERS, idle.key, {**idle.value, "beat": time.time() - 61})  # its last commit, a lease ago

    def a_comes_back_after_the_look(ops: Any) -> Any:
        found = store.batch(ops)
        if any(isinstance(op, SearchOp) for op in ops):
            b.run = store.batch
            a._take_ticket()  # A's acquire, up to its wait for B
        return found

    b._take_ticket()
    b.run = a_comes_back_after_the_look
    assert b._blocker() is None  # B holds the lock; A waits behind B's ticket
    c._take_ticket()
    assert a._blocker() == b.writer and c._blocker() == b.writer
    store.batch([b.ending()])
    b.ended()
    assert [a._blocker(), c._blocker()].count(None) == 1  # one of them writes, the other waits for it
