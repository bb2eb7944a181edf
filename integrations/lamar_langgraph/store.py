"""`LangGraphStore`: the Lamar event log kept in any LangGraph `BaseStore`, one item per event."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, cast

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result
from langgraph.store.base.batch import AsyncBatchedBaseStore

from lamar import CorruptStore, EventConflict, InvalidArgument, LamarError, StoreError
from lamar.store import Event
from lamar.store.appendable import check_appendable, storable_key
from lamar_langgraph.backend_failure import backend_failure
from lamar_langgraph.bakery import BakeryLock, seconds

_HEAD = "head"
_CHUNK = 500  # gets per batch when reading many events
_RETRIES = 50
_TRIES = 3  # whole attempts at a write when the store is too slow to keep the lock
# Events a scrub replaces per batch: one SQL statement on SqliteStore (5 bound values an item,
# within SQLite's 32766) and PostgresStore (4, within PostgreSQL's 65535), so one transaction.
_SCRUB_BATCH = 5000
# Where the fold reads that a lesson is erased, and the erase event whose pending marker says the
# scrub is not done (last of them in log order): a scrub writes these last (see `scrub`).
_MARKS = ("experience", "snapshot", "erase")
# The BaseStores whose `batch` runs its gets in the order given and writes all its puts at once (one SQL
# INSERT on SqliteStore and PostgresStore, dict updates in the order given on InMemoryStore): there a read
# sends the head and the next events together, and a small write commits in one batch (see `append`).
_ORDERED = ("langgraph.store.memory.InMemoryStore", "langgraph.store.sqlite.base.SqliteStore",
            "langgraph.store.postgres.base.PostgresStore")
_AHEAD = 8  # events a read asks for beside the head: what a write's sync after it usually finds
# Events a write commits in the batch that ends its hold on the lock: few enough that the batch lands
# well within the lease after the last check that nobody took us for dead.
_ONE_BATCH = 64


def _batch_in_order(base: BaseStore) -> bool:
    """Whether `base.batch` is one of `_ORDERED`'s own: the first class of its type that defines `batch` is one
    of them, and the object holds no `batch` of its own. A `batch` overridden (to log, retry or split the ops)
    may send them in several statements, and a write's events and its commit would no longer land together."""
    if "batch" in getattr(base, "__dict__", {}):
        return False
    for cls in type(base).__mro__:
        if f"{cls.__module__}.{cls.__qualname__}" in _ORDERED:
            return True
        if "batch" in vars(cls):
            return False
    return False


def sanitize_namespace(namespace: str | Sequence[str]) -> tuple[str, ...]:
    """A namespace LangGraph accepts, from a label or a sequence of labels.

    '%', '.' and NUL are escaped (``%25``, ``%2E``, ``%00``), so distinct labels stay
    distinct. Empty labels and the root label "langgraph" (reserved by LangGraph) are refused.

    >>> sanitize_namespace(("lamar", "team.prod"))
    ('lamar', 'team%2Eprod')

    Raises:
        InvalidArgument: (a ValueError and a TypeError) the namespace is not a label or a
            sequence of labels, is empty, has an empty or non-string label, or starts with "langgraph".
    """
    if not isinstance(namespace, (str, Sequence)):
        raise InvalidArgument(f"a namespace is a label or a tuple of labels, e.g. ('lamar',); got {namespace!r}")
    labels = (namespace,) if isinstance(namespace, str) else tuple(namespace)
    if not labels:
        raise InvalidArgument("a namespace needs at least one label, e.g. ('lamar',)")
    clean = []
    for label in labels:
        if not isinstance(label, str) or not label:
            raise InvalidArgument(f"namespace labels are non-empty strings; got {label!r} in {labels!r}")
        clean.append(label.replace("%", "%25").replace(".", "%2E").replace("\x00", "%00"))
    if clean[0] == "langgraph":
        raise InvalidArgument('LangGraph reserves the root label "langgraph"; use another, e.g. ("lamar",)')
    return tuple(clean)


class LangGraphStore:
    """A Lamar store backend over a LangGraph `BaseStore` (InMemoryStore, SqliteStore, PostgresStore).

    Layout, under `namespace` (default ``("lamar",)``)::

        (*namespace, "events")   "000000000042" -> {"seq", "kind", "key", "time", "data" (JSON text), "writer"}
        (*namespace, "keys")     <unique event key> -> {"seq"}
        (*namespace, "head")     "head" -> {"seq": the last committed event, "writer", "time"}
        (*namespace, "state")    "head" -> {"seq", "body"}: the engine's saved state (a cache)
        (*namespace, "writers")  <writer id>[~n] -> {"choosing", "ticket", "beat"}   (the write lock)

    Every event is its own item and nothing is ever updated in place except the head (and an
    event's data, by `scrub`, which `Lamar.erase` uses). A writer takes the bakery lock
    (`BakeryLock`), writes its events at the next sequence numbers, then moves the head: that
    single put is the commit, so a batch is all or nothing and a writer killed half-way leaves
    only items past the head, which the next writer overwrites. Readers read the head, then
    exactly the events up to it: sequence numbers are dense and never reused, so `read(after)`
    cannot skip an event.

    The guarantee rests on one timing assumption, since `BaseStore` has no compare-and-set:
    a writer that holds the lock commits within `lease` seconds (it checks this itself and
    aborts past half the lease). A writer paused longer than that between its check and its
    commit (a debugger, a frozen VM) can collide with the next writer. Clocks of writers on
    different machines must agree to well within `lease`.

    The BaseStore stays yours: `close` does not close it. Use a synchronous store
    (`PostgresStore`, not `AsyncPostgresStore`); Lamar's async methods run the store in a thread.

    Args:
        store: any LangGraph `BaseStore`.
        namespace: where Lamar's items live; one label or a tuple (sanitised, see
            `sanitize_namespace`). Two Lamar stores in one BaseStore need two namespaces.
        lease: seconds (a finite number) after which a silent writer is taken for dead (its lock released).
        timeout: seconds a write waits for the lock before raising `StoreError`.
        location: how the store names itself in messages (default: the store type and namespace).
        compact: called after a scrub (`Lamar.erase`) to make the database under the BaseStore
            drop replaced values. Required to erase from a BaseStore other than `InMemoryStore`,
            `SqliteStore` and `PostgresStore`; for those it runs after Lamar's own step (see `scrub`).
        ordered_batch: whether `store.batch` runs its gets in the order given and writes all its puts at
            once, as `InMemoryStore`, `SqliteStore` and `PostgresStore` do: a read then sends the head and
            the next events together, and a write of up to 64 events its events and its commit in one batch.
            None (the default): so for those three and their subclasses that leave `batch` as it is; a
            subclass that overrides `batch` may split or reorder the ops, so it takes the general path (a
            batch each) unless given True, which says its `batch` hands them on whole, in order.

    >>> from langgraph.store.memory import InMemoryStore
    >>> from lamar import Lamar, Experience
    >>> lam = Lamar(LangGraphStore(InMemoryStore()))
    >>> lam.get(lam.add(Experience("the build fails", "read the log"))).action
    'read the log'
    """

    def __init__(self, store: BaseStore, namespace: str | Sequence[str] = ("lamar",), *,
                 lease: float = 30.0, timeout: float = 120.0, location: str | None = None,
                 compact: Callable[[], None] | None = None, ordered_batch: bool | None = None) -> None:
        if not isinstance(store, BaseStore):
            raise InvalidArgument(f"LangGraphStore wraps a langgraph BaseStore (InMemoryStore, SqliteStore, "
                                  f"PostgresStore); got {type(store).__name__}")
        if isinstance(store, AsyncBatchedBaseStore):
            # Lamar reads and writes the store synchronously. An async store refuses that inside its
            # event loop, and outside it hands each call to that loop, which fails once the loop is
            # closed and can collide with the loop's own work: said here, not as a failed read.
            raise InvalidArgument(f"LangGraphStore needs a synchronous store, and {type(store).__name__} is async: "
                                  "open PostgresStore (or SqliteStore) on the same database, or use InMemoryStore; "
                                  "Lamar's async methods (arecall, areport) run it in a thread")
        lease, timeout = seconds("lease", lease, finite=True), seconds("timeout", timeout, finite=False)
        if compact is not None and not callable(compact):
            raise InvalidArgument(f"compact is a function of no arguments; got {type(compact).__name__}")
        self.compact = compact
        self.store = store
        self.namespace = sanitize_namespace(namespace)
        self.lease = float(lease)
        self.timeout = float(timeout)
        self.location = location or f"langgraph:{type(store).__name__}:{'/'.join(self.namespace)}"
        self._events = (*self.namespace, "events")
        self._keys = (*self.namespace, "keys")
        self._head = (*self.namespace, "head")
        self._state = (*self.namespace, "state")
        self._writer = uuid.uuid4().hex
        self._lock = BakeryLock(self._run, (*self.namespace, "writers"), self._writer,
                                lease=self.lease, timeout=self.timeout)
        self._local = threading.Lock()  # threads sharing this object share one bakery place
        self._closed = False
        if ordered_batch is not None and not isinstance(ordered_batch, bool):
            raise InvalidArgument(f"ordered_batch is True, False or None (found out from the store's class); got "
                                  f"{ordered_batch!r}")
        self._ordered = _batch_in_order(store) if ordered_batch is None else ordered_batch

    # -- the protocol ---------------------------------------------------------------------------

    def append(self, events: Sequence[Event]) -> list[Event]:
        """Write `events` atomically at the next sequence numbers.

        Raises:
            EventConflict: an event's key is already stored, or repeated in the batch.
            StoreError: the BaseStore failed, or the lock could not be had in time.
        """
        events = list(events)
        keys = [e.key for e in events if e.key is not None]
        if len(set(keys)) != len(keys):
            raise EventConflict(f"a batch repeats an event key ({sorted(keys)}); nothing was written")
        check_appendable(events)  # an event the backend or a later read would refuse: nothing is written
        texts = [e.data_json() for e in events]
        if not events:
            return []
        with self._local:
            self._check_open()
            for _ in range(_TRIES):
                with self._lock:
                    head = self._refuse_stored_keys(keys)
                    if not self._lock.fresh():
                        continue  # slow enough to be taken for dead, but nothing written yet: again
                    stored = [e.numbered(head + i) for i, e in enumerate(events, 1)]
                    ops: list[Op] = [PutOp(self._events, _seq_key(e.seq), self._value(e, text), index=False,
                                           ttl=None) for e, text in zip(stored, texts)]
                    ops += [PutOp(self._keys, e.key, {"seq": e.seq}, index=False, ttl=None)
                            for e in stored if e.key is not None]
                    head_value = {"seq": stored[-1].seq, "writer": self._writer, "time": time.time()}
                    commit = PutOp(self._head, _HEAD, head_value, index=False, ttl=None)
                    if self._ordered and len(stored) <= _ONE_BATCH:
                        # One statement: the events, the head past them (the commit) and the end of our
                        # hold land together, so no writer can take the lock before the commit shows.
                        self._run([*ops, commit, self._lock.ending()])
                        self._lock.ended()
                        return stored
                    self._run(ops)  # invisible until the head moves past them
                    if not self._lock.fresh():
                        raise StoreError(
                            f"a write to {self.location} took over half the {self.lease:.0f}s lease; another "
                            "writer may have taken the lock, so nothing was committed: retry")
                    self._run([commit])  # the commit
                    return stored
            raise self._too_slow()

    def scrub(self, events: Sequence[Event]) -> int:
        """Replace the data of stored events and drop the saved state (`ErasableStore.scrub`):
        what `Lamar.erase` uses.

        Under the write lock every named event is checked first (stored at its seq, up to the
        head, with the same kind, key and time); then each event's item gets a new value with the
        same seq, kind, key, time and writer and the new data, in one `batch` per 5000 events that
        also deletes the saved state. Over `SqliteStore` and `PostgresStore` one batch is one
        transaction: a scrub of up to 5000 events is all or nothing. A larger one, or one over
        another BaseStore, can be cut short between puts; every put is a whole event, an
        `experience` or `snapshot` event (where the fold reads that a lesson is erased) and then the
        `erase` event (whose pending marker the scrub clears) go last,
        and every batch deletes the saved state before its puts, so a scrub cut short leaves a log
        that folds to the same verdicts, without the lesson marked erased yet: running
        `Lamar.erase` again finishes it (an event already replaced is replaced again, unchanged).

        Then the database under the BaseStore drops the old values: nothing to do for an
        `InMemoryStore` (nothing on disk); a `SqliteStore` scrubs with `secure_delete` on, then
        VACUUMs its file and empties its write-ahead log (TRUNCATE checkpoint); a `PostgresStore`
        VACUUMs its `store` table, which removes the old row versions from it (their bytes can stay
        in the pages' free space until it is reused, and in the server's write-ahead log, replicas
        and backups until they are recycled; a `compact` that runs `VACUUM FULL store` rewrites the
        table's files). Then `compact`, when given. `scrub([])` does only this step; a scrub of
        `erase` events alone (their pending marker cleared), which replaces no erased text, skips it.

        Raises:
            ValueError: an event is not stored as named; nothing changed.
            StoreError: the BaseStore is of another type and no `compact` was given, or its SQLite
                journal mode is PERSIST, or its PostgreSQL connection is not in autocommit mode
                (nothing changed); the BaseStore failed; or the values were replaced but the
                database could not drop the old ones (a reader kept SQLite's write-ahead log busy,
                VACUUM or `compact` failed): scrub again (for `scrub([])`, which replaced nothing,
                the message says so and names what must change first).
        """
        from lamar_langgraph.erasure import compaction

        events = sorted(events, key=lambda e: e.kind in _MARKS)  # stable: log order otherwise
        check_appendable(events)  # an event the backend or a later read would refuse: nothing is written
        texts = [e.data_json() for e in events]
        step = compaction(self.store, self.compact, self.location)
        with self._local:
            self._check_open()
            step.check()
            with step.replacing():
                for _ in range(_TRIES):
                    with self._lock:
                        head = self._read_head()
                        stored = self._named(events, head)
                        if not self._lock.fresh():
                            continue  # nothing written yet: again
                        # Replacing is safe even past the lease: a writer that took us for dead
                        # appends after the head, and every event replaced here is at or below it.
                        # SqliteStore commits in a `finally` even when a statement fails; its
                        # deletes run before the one INSERT of the values, so what can commit
                        # alone is the saved state's delete, which only costs a fold.
                        drop = PutOp(self._state, _HEAD, None)
                        if not events:
                            self._run([drop])
                        for start in range(0, len(events), _SCRUB_BATCH):
                            end = start + _SCRUB_BATCH
                            self._run([drop, *(PutOp(self._events, _seq_key(e.seq), {**old, "data": text},
                                                     index=False, ttl=None)
                                               for e, old, text in zip(events[start:end], stored[start:end],
                                                                       texts[start:end]))])
                        break
                else:
                    raise self._too_slow()
                if not events or any(e.kind != "erase" for e in events):
                    step.compact(scrubbed=bool(events))
        return len(events)

    def read(self, after: int = 0) -> list[Event]:
        """Committed events with seq > after, in commit order."""
        self._check_open()
        first = max(int(after), 0) + 1
        out: list[Event] = []
        if self._ordered:
            # The head first, then the next events in the same batch: each event up to the head was
            # committed before the head was read, so what the batch finds of them is committed.
            ahead = [GetOp(self._events, _seq_key(s), refresh_ttl=False) for s in range(first, first + _AHEAD)]
            found = self._get([GetOp(self._head, _HEAD, refresh_ttl=False), *ahead])
            head = self._head_of(found[0])
            for item in found[1:head - first + 2]:
                if item is None:
                    break  # asked for again below, where a missing event is an error
                out.append(self._decode(item.value, first))
                first += 1
        else:
            head = self._read_head()
        for start in range(first, head + 1, _CHUNK):
            seqs = range(start, min(start + _CHUNK, head + 1))
            items = self._get([GetOp(self._events, _seq_key(s), refresh_ttl=False) for s in seqs])
            for seq, item in zip(seqs, items):
                if item is None:
                    raise CorruptStore(f"event {seq} is missing from {self.location} (its head is at {head})")
                out.append(self._decode(item.value, seq))
        return out

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        """The committed events holding any of these keys, in seq order."""
        self._check_open()
        keys = [key for key in keys if storable_key(key)]  # no write stores any other: it is simply not there
        if not keys:
            return []
        head, claims = self._head_and_claims(keys)
        seqs = [(k, int(c.value["seq"])) for k, c in zip(keys, claims) if c is not None and int(c.value["seq"]) <= head]
        items = self._get([GetOp(self._events, _seq_key(seq), refresh_ttl=False) for _, seq in seqs]) if seqs else []
        found = [self._decode(item.value, seq) for (key, seq), item in zip(seqs, items)
                 if item is not None and item.value.get("key") == key]  # not a dead writer's stale claim
        return sorted(found, key=lambda e: e.seq)

    def load_state(self) -> str | None:
        """The engine's saved state (a cache beside the log; see `Lamar`)."""
        self._check_open()
        item = self._get([GetOp(self._state, _HEAD, refresh_ttl=False)])[0]
        body = None if item is None else item.value.get("body")
        return body if isinstance(body, str) else None

    def save_state(self, seq: int, text: str) -> None:
        self._check_open()
        with self._local:
            # Under the write lock, as a scrub drops the state: one folded before an `erase` event
            # may hold the text that erase took out, so it is not kept. Never waited for: the state
            # is a cache, saved on reads too, and a later save keeps it.
            if not self._lock.try_acquire():
                return
            try:
                # Fresh after the read, or a scrub may have taken us for dead and begun meanwhile.
                if not any(e.kind == "erase" for e in self.read(seq)) and self._lock.fresh():
                    self._run([PutOp(self._state, _HEAD, {"seq": seq, "body": text}, index=False, ttl=None)])
            finally:
                self._lock.release()

    def close(self) -> None:
        """Stop using the BaseStore (which stays open: it is the caller's to close)."""
        self._closed = True

    def __repr__(self) -> str:
        return f"LangGraphStore({self.location!r})"

    # -- inside ---------------------------------------------------------------------------------

    def _value(self, event: Event, text: str) -> dict[str, Any]:
        # The data goes in as JSON text: exactly what the other backends keep, and no
        # backend can alias, reorder or re-type it.
        return {"seq": event.seq, "kind": event.kind, "key": event.key, "time": event.time,
                "data": text, "writer": self._writer}

    def _decode(self, value: Any, seq: int) -> Event:
        try:
            if int(value["seq"]) != seq:
                raise ValueError(f"it says it is event {value['seq']}")
            raw = {"seq": seq, "kind": value["kind"], "key": value.get("key"), "time": value["time"],
                   "data": json.loads(value["data"])}
            return Event.from_dict(raw)
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptStore(f"event {seq} in {self.location} does not parse: {exc}") from exc

    def _named(self, events: list[Event], head: int) -> list[dict[str, Any]]:
        """The stored values of `events`, each checked to be the event it names (ValueError if not)."""
        found: list[dict[str, Any]] = []
        for start in range(0, len(events), _CHUNK):
            chunk = events[start:start + _CHUNK]
            items = self._get([GetOp(self._events, _seq_key(e.seq), refresh_ttl=False) for e in chunk])
            for event, item in zip(chunk, items):
                old = None if item is None or not 0 < event.seq <= head else self._decode(item.value, event.seq)
                if old is None or (old.kind, old.key, old.time) != (event.kind, event.key, event.time):
                    raise ValueError(f"event {event.seq} ({event.kind}) is not stored in {self.location} as "
                                     "named; nothing was changed")
                found.append(dict(cast("Item", item).value))
        return found

    def _read_head(self) -> int:
        return self._head_of(self._get([GetOp(self._head, _HEAD, refresh_ttl=False)])[0])

    def _head_and_claims(self, keys: list[str]) -> tuple[int, list[Item | None]]:
        """The head, then the claims of `keys`: in one batch where the store runs its gets in order."""
        if not self._ordered:
            head = self._read_head()
            return head, self._get([GetOp(self._keys, k, refresh_ttl=False) for k in keys]) if keys else []
        found = self._get([GetOp(self._head, _HEAD, refresh_ttl=False),
                           *(GetOp(self._keys, k, refresh_ttl=False) for k in keys)])
        return self._head_of(found[0]), found[1:]

    def _head_of(self, item: Item | None) -> int:
        if item is None:
            return 0
        try:
            return int(item.value["seq"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptStore(f"the head of {self.location} does not parse: {item.value!r}") from exc

    def _refuse_stored_keys(self, keys: list[str]) -> int:
        """The head, under the write lock; EventConflict if a key is held by a committed event (claims
        past the head are left over from a writer that died before its commit, and do not count)."""
        head, claims = self._head_and_claims(keys)
        suspects = [(k, int(c.value["seq"])) for k, c in zip(keys, claims)
                    if c is not None and int(c.value["seq"]) <= head]
        if not suspects:
            return head
        found = self._get([GetOp(self._events, _seq_key(seq), refresh_ttl=False) for _, seq in suspects])
        for (key, _), item in zip(suspects, found):
            # A dead writer's claim can point at a seq a later writer reused for another event.
            if item is not None and item.value.get("key") == key:
                raise EventConflict(f"event key {key!r} is already in {self.location}; nothing was written")
        return head

    def _get(self, ops: Sequence[GetOp]) -> list[Item | None]:
        return cast("list[Item | None]", self._run(ops))

    def _run(self, ops: Sequence[Op]) -> list[Result]:
        for attempt in range(_RETRIES):
            try:
                return self.store.batch(ops)
            except LamarError:
                raise
            except RuntimeError as exc:
                # InMemoryStore iterates plain dicts without a lock: a put from another
                # thread can make a search fail with "dictionary changed size during
                # iteration". Every operation here is idempotent, so doing it again is safe.
                if "during iteration" not in str(exc) or attempt == _RETRIES - 1:
                    raise backend_failure(self.location, exc) from exc
            except Exception as exc:  # the backend's own errors (sqlite3, psycopg, ...)
                raise backend_failure(self.location, exc) from exc
        raise AssertionError("unreachable")

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"{self.location} is closed; open a new LangGraphStore")

    def _too_slow(self) -> StoreError:
        """Every attempt of a write found the lock stale before it could write: the store's
        answers take longer than half the lease."""
        return StoreError(f"{self.location} answered too slowly to keep the write lock ({_TRIES} tries); "
                          "raise `lease`")


def _seq_key(seq: int) -> str:
    return f"{seq:012d}"  # zero-padded so that listing by key is listing in seq order
