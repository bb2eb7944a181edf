"""A write lock made only of puts and reads on a LangGraph `BaseStore` (Lamport's bakery)."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any, Self, cast

from langgraph.store.base import Op, PutOp, Result, SearchItem, SearchOp

from lamar import InvalidArgument, StoreError

# Enough for every writer that wrote or waited within a lease: older entries are cleared, so the list stays small.
_MAX_WRITERS = 1000
# Tickets taken in a row that each went stale (half a lease passed) before the lock was ours.
_STALE_TRIES = 20

Run = Callable[[Sequence[Op]], list[Result]]


class BakeryLock:
    """Mutual exclusion among writers that share one `BaseStore` namespace.

    `BaseStore` has no transactions and no compare-and-set, so writers take a ticket the way
    customers do in a bakery: announce that you are choosing, take one more than the largest
    ticket you see, then wait until nobody is choosing and nobody holds a smaller ticket.

    Correct for any store whose single puts and reads are atomic and ordered (SQLite,
    PostgreSQL, an `InMemoryStore` under the GIL), with one timing assumption: a writer
    whose entry has been silent for `lease` seconds is taken for dead and its place cleared.
    A waiting writer refreshes its entry every quarter lease, and starts over with a new
    ticket if it was ever silent for half a lease; the holder checks `fresh()` before it
    writes and before it commits. Only a stall of more than half a lease between such a
    check and a put landing can let two writers overlap.

    Args:
        run: executes a batch of store operations (with error wrapping).
        namespace: the namespace that holds one entry per waiting or writing writer.
        writer: this writer's unique id.
        lease: seconds after which a silent entry is taken for a dead writer's.
        timeout: seconds to wait for the lock before giving up with `StoreError`.
    """

    def __init__(self, run: Run, namespace: tuple[str, ...], writer: str, *,
                 lease: float, timeout: float) -> None:
        self.run = run
        self.namespace = namespace
        self.writer = writer
        self.lease = seconds("lease", lease, finite=True)
        self.timeout = seconds("timeout", timeout, finite=False)
        self._ticket = 0
        self._since = 0.0  # time.monotonic() when our visible beat was taken
        self._broken = True  # no continuous presence yet
        self._ended = False  # the caller's commit carried `ending()`: nothing left to release
        self._entry = writer  # the key of our entry (see `ended`)
        self._idle: str | None = None  # the key of the idle entry `ending()` left, which our next ticket deletes
        self._holds = 0

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        try:
            self.release()
        except StoreError:
            if exc_type is None:
                raise
            # The error already on its way out says more; our entry goes stale after `lease`.

    def acquire(self) -> None:
        """Wait for our turn.

        Raises:
            StoreError: the lock was not free within `timeout` seconds, or the store kept
                answering too slowly for the lease.
        """
        deadline = time.monotonic() + self.timeout
        blocker: str | None = None
        self._ended = False
        for _ in range(_STALE_TRIES):
            if time.monotonic() >= deadline:
                break
            self._take_ticket()
            if not self.fresh():
                # Half a lease went by within one ticket: the store answers too slowly for this
                # lease, and taking tickets again and again would only spin until the timeout.
                continue
            delay = 0.0005
            while self.fresh() and time.monotonic() < deadline:
                blocker = self._blocker()
                if blocker is None:
                    if self.fresh():
                        return
                    break
                if time.monotonic() - self._since > self.lease / 4:
                    self._announce(choosing=False, ticket=self._ticket)  # still alive, still waiting
                time.sleep(delay * (0.5 + random.random()))  # jitter: waiters must not poll in step
                delay = min(delay * 2, 0.004)
            # Out of the inner loop without the lock: we went quiet for half a lease (a slow
            # store, a stalled process), so others may have taken us for dead: start over.
        else:
            self.release()
            raise StoreError(
                f"the LangGraph store took longer than half the {self.lease:g}s lease to answer while "
                f"taking the Lamar write lock in {self.namespace}, {_STALE_TRIES} times; raise `lease`")
        self.release()
        raise StoreError(
            f"waited {self.timeout:.0f}s for the Lamar write lock in {self.namespace} "
            f"(writer {blocker or 'unknown'} had it); raise `timeout` if writes are that slow")

    def try_acquire(self) -> bool:
        """Take the lock if no other writer holds or wants it, else leave it to them: False, nothing held."""
        self._ended = False
        self._take_ticket()
        if self.fresh() and self._blocker() is None and self.fresh():
            return True
        self.release()
        return False

    def release(self) -> None:
        if self._ended:
            self._ended = False
            return
        self._ticket = 0
        self.run([PutOp(self.namespace, self._entry, None)])

    def ending(self) -> PutOp:
        """The put that ends our hold, for a caller to send in the one statement that commits its write
        (see `LangGraphStore.append`), so that the hold cannot end before the commit is visible. It leaves
        an idle entry (neither choosing nor holding a ticket, so nobody waits for it) that the next
        holder's look clears once it is a lease old. Call `ended` once that batch has landed."""
        return PutOp(self.namespace, self._entry, {"choosing": False, "ticket": 0, "beat": time.time()},
                     index=False, ttl=None)

    def ended(self) -> None:
        """The batch that carried `ending()` landed: the hold is over, and `release` has nothing to do. Our next
        ticket goes under a new key: another writer's look may read the idle entry a lease old and clear it
        after we came back, which must not clear the entry that holds our new ticket."""
        self._ticket = 0
        self._ended = True
        self._idle = self._entry
        self._holds += 1
        self._entry = f"{self.writer}~{self._holds}"

    def fresh(self) -> bool:
        """Whether nobody can have taken us for dead: our entry's visible beat has never
        been older than half a lease (the other half absorbs clock differences)."""
        return not self._broken and time.monotonic() - self._since < self.lease / 2

    def _take_ticket(self) -> None:
        self._ticket = 0
        self._announce(choosing=True, ticket=0, first=True)
        self._ticket = 1 + max((e[1] for e in self._entries().values()), default=0)
        self._announce(choosing=False, ticket=self._ticket)

    def _announce(self, *, choosing: bool, ticket: int, first: bool = False) -> None:
        start = time.monotonic()
        value = {"choosing": choosing, "ticket": ticket, "beat": time.time()}
        ops = [PutOp(self.namespace, self._entry, value, index=False, ttl=None)]
        if first and self._idle is not None:
            ops.append(PutOp(self.namespace, self._idle, None))
        self.run(ops)
        if first:
            self._idle = None
        # Until this put landed, others saw our previous beat; if that one grew old, our
        # place may have been cleared in between.
        self._broken = False if first else self._broken or time.monotonic() - self._since > self.lease / 2
        self._since = start

    def _entries(self) -> dict[str, tuple[bool, int, float]]:
        """Each writer's (choosing, ticket, beat); an entry no writer could have written is cleared."""
        op = SearchOp(self.namespace, limit=_MAX_WRITERS, refresh_ttl=False)
        items = cast("list[SearchItem]", self.run([op])[0] or [])
        if len(items) >= _MAX_WRITERS:
            raise StoreError(f"more than {_MAX_WRITERS} writers are queued in {self.namespace}")
        entries = {}
        for item in items:
            if tuple(item.namespace) != self.namespace:  # a search matches sub-namespaces too
                continue
            entry = _entry(item.value)
            if entry is None:
                # Left by something else than a writer (a hand-made put, a damaged item): it
                # would otherwise block every writer, or crash each, for good.
                self.run([PutOp(self.namespace, item.key, None)])
            else:
                entries[item.key] = entry
        return entries

    def _blocker(self) -> str | None:
        """A live writer that goes before us, or None when it is our turn."""
        now = time.time()
        mine = (self._ticket, self._entry)
        dead = []
        for writer, (choosing, ticket, beat) in self._entries().items():
            if writer == self._entry:
                continue
            if now - beat > self.lease:
                # A writer killed while waiting or writing (its partial batch was never committed,
                # see LangGraphStore.append), or one idle since its last commit: clearing its place is safe.
                dead.append(PutOp(self.namespace, writer, None))
                continue
            if choosing or (ticket and (ticket, writer) < mine):
                return writer
        if dead:
            self.run(dead)
        return None


def seconds(name: str, value: Any, *, finite: bool) -> float:
    """`value` as a positive number of seconds, else `InvalidArgument` saying what to pass.

    A lease must also be finite: the entry of a writer that crashed under an endless lease is
    never taken for dead, and every other writer waits for it until its timeout, for good.

    >>> seconds("timeout", float("inf"), finite=False)
    inf
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise InvalidArgument(f"{name} is a positive number of seconds; got {value!r}")
    if finite and not math.isfinite(value):
        raise InvalidArgument(f"{name} is a finite number of seconds (the default is 30): a writer that "
                              f"crashes holding the lock blocks every other one until it expires; got {value!r}")
    return float(value)


def _entry(value: Any) -> tuple[bool, int, float] | None:
    """A writer's (choosing, ticket, beat) from its item, or None if no writer wrote it.

    >>> _entry({"choosing": False, "ticket": 2, "beat": 1.5}), _entry({"ticket": "2", "beat": 1.5})
    ((False, 2, 1.5), None)
    """
    if not isinstance(value, dict):
        return None
    choosing, ticket, beat = value.get("choosing", False), value.get("ticket", 0), value.get("beat", 0.0)
    if not isinstance(choosing, bool) or isinstance(ticket, bool) or not isinstance(ticket, int) or ticket < 0:
        return None
    if isinstance(beat, bool) or not isinstance(beat, (int, float)) or not math.isfinite(beat):
        return None
    return choosing, ticket, float(beat)
