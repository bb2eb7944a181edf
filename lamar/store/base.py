"""The store protocol: an append-only log of events, from which everything else is derived."""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, runtime_checkable

from lamar._errors import CorruptStore, StoreError, a_or_an

# The advice a refusal ends with where the call made again is the next step (a lock held past the wait,
# another writer's race): a caller that words its own advice (the MCP server) finds it by these values.
WRITER_AGAIN = "try again once that writer is done"
ERASE_AGAIN = "erase again"
ERASE_AFTER = "then erase it again"  # after what must change first, which the message names
# A read-only store's advice, inside the messages of the refusals that wrap it; the MCP server cuts it by this value.
WRITABLE_COPY = "open a writable copy to change it"
# A full disk's advice, inside the messages of the refusals of a write the disk (or the file size limit) could not take.
FULL_DISK = "free some space on its disk, then try again"

# The one list of what the log can hold. Every backend stores exactly these, every reader
# refuses any other, and every fold (the engine's, PostgreSQL's rows) handles each of them.
EVENT_KINDS = frozenset(
    {"experience", "status", "scope", "merge", "episode", "outcome", "applied", "compact", "snapshot", "erase", "edit"}
)
# The kinds whose fold changes a lesson's row; the others touch episodes or the audit only.
LESSON_KINDS = frozenset({"experience", "status", "scope", "merge", "outcome", "erase", "edit"})


@dataclasses.dataclass(frozen=True)
class Event:
    """One immutable fact. `seq` is assigned by the store on append (0 before)."""

    kind: str
    data: dict[str, Any]
    key: str | None = None
    seq: int = 0
    time: float = dataclasses.field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "kind": self.kind, "time": self.time}
        if self.key is not None:
            out["key"] = self.key
        out["data"] = self.data
        return out

    @classmethod
    def from_dict(cls, raw: Any) -> Event:
        """Parse a stored event; raises ValueError/KeyError/TypeError on a malformed one."""
        if not isinstance(raw, dict):
            raise TypeError(f"an event is an object, got {type(raw).__name__}")
        kind = raw["kind"]
        if kind not in EVENT_KINDS:
            raise ValueError(f"unknown event kind {kind!r}")
        data = raw["data"]
        if not isinstance(data, dict):
            raise TypeError("event data is not an object")
        key = raw.get("key")
        if key is not None and not isinstance(key, str):
            raise TypeError("event key is not a string")
        return cls(kind=kind, data=data, key=key, seq=int(raw["seq"]), time=float(raw["time"]))

    def data_json(self) -> str:
        """`data` as the stores write it: compact, keys sorted. Computed once per event (a write
        checks it, sends it and may keep it), so `data` must not change once the event exists,
        as no code here changes it."""
        return self._data_text

    @functools.cached_property
    def _data_text(self) -> str:  # kept in the instance's __dict__: a frozen dataclass allows it
        return json.dumps(self.data, separators=(",", ":"), sort_keys=True)

    @classmethod
    def stored(cls, seq: int, kind: str, key: str | None, when: float, data: dict[str, Any]) -> Event:
        """An event as a store reads it back: the same as `Event(kind, data, key, seq, when)`,
        without the frozen constructor's checks per field, which a read of a whole log pays
        once per event."""
        event = object.__new__(cls)
        event.__dict__.update(kind=kind, data=data, key=key, seq=seq, time=when)
        return event

    def numbered(self, seq: int) -> Event:
        """This event as stored under `seq`, its data's text kept."""
        out = Event(kind=self.kind, data=self.data, key=self.key, seq=seq, time=self.time)
        if "_data_text" in self.__dict__:
            out.__dict__["_data_text"] = self.__dict__["_data_text"]
        return out


class UnknownKind(CorruptStore):
    """An event of a kind this Lamar does not know, which a newer Lamar writes: the way on is to upgrade,
    since an edit, or a backup put back, loses what that Lamar wrote."""

    def __init__(self, kind: str, where: str = "an event") -> None:
        from lamar.extras import upgrade_command

        self.kind, self.where = kind, where
        super().__init__(f"{where} is of the kind {kind!r}, which this Lamar does not know: a newer Lamar wrote it. "
                         f"Upgrade lamar ({upgrade_command()}) to open this store; it was left untouched")

    def at(self, place: str) -> UnknownKind:
        """The same refusal, its place named first (the store's path or URL)."""
        return UnknownKind(self.kind, f"{place}: {self.where}")


def stored_problem(event: Event) -> str | None:
    """What no write through the API could have stored in `event`, as read back from a store (a
    kind no release wrote, an outcome's reward that is not a number in [-1, 1], an episode's
    context, propensities or lesson lists of another type), or None. Cheap
    enough for every read of every event: the file backends run it on what they read, so a
    hand-edited log is refused when it is folded rather than folded into wrong evidence."""
    if event.kind not in EVENT_KINDS:
        return f"has the unknown kind {event.kind!r}"
    if event.kind == "outcome":
        reward: Any = event.data.get("reward")
        if reward is None:
            return None  # none (an expired episode's): the fold decides what an outcome needs
        if type(reward) not in (int, float) or not -1.0 <= reward <= 1.0:  # NaN fails the comparison
            return f"holds the reward {reward!r}, not a number in [-1, 1]"
    elif event.kind == "episode":
        data = event.data
        for name, shape in _EPISODE_SHAPES:
            if name in data and not isinstance(data[name], shape):
                return f"holds {a_or_an(name)} that is {_json_type(data[name])}, not {_json_type(shape())}"
    return None


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false"}.get(type(value), "a number")


# What a recall writes into an episode, by type: a context and propensities are objects, the
# lesson ids lists.
_EPISODE_SHAPES: tuple[tuple[str, type], ...] = (
    ("context", dict), ("p", dict), ("eligible", list), ("injected", list), ("held_out", list))


def closed_store(location: str) -> StoreError:
    """The error every backend raises when asked to read or write after `close()`."""
    if location == ":memory:":  # opened again it would be empty: its events end with the close
        return StoreError(f"the store {location} is closed, and its events with it; open a new one to read "
                          "or write, and close an in-memory store only when done with its events")
    return StoreError(f"the store {location} is closed; open it again to read or write it")


@runtime_checkable
class Store(Protocol):
    """What the engine needs from a backend.

    Three methods. `append` writes a batch atomically (all or nothing) and refuses any event
    whose unique `key` is already stored; `read` returns committed events after a sequence
    number, in commit order; `close` releases files and connections. The engine keeps its
    bandit state as a cache folded from this log, so a backend never has to know what a
    lesson, an episode or a verdict is. A backend may also `rewrite` the start of its log into
    one snapshot event (`RewritableStore`), which keeps it bounded, `scrub` stored events in
    place (`ErasableStore`: `Lamar.erase`), and may hold the folded state itself (`FoldedRows`:
    PostgreSQL's fold mode).
    """

    location: str

    def append(self, events: Sequence[Event]) -> list[Event]:
        """Write `events` atomically; return them with their sequence numbers.

        Raises:
            InvalidEvent: an event no backend can store (see `check_appendable`); nothing is written.
            EventConflict: an event's key is already stored (nothing is written).
            StoreError: the write failed (the previous state is intact).
        """
        ...

    def read(self, after: int = 0) -> list[Event]:
        """Committed events with seq > after, in commit order."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class KeyedStore(Store, Protocol):
    """A store that finds events by key and keeps the engine's saved state beside the log.

    With both, a fresh engine loads the saved state and folds only the events after it,
    and looks up an older episode by key when a report needs it (see `Follower.resume`).
    """

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        """The stored events holding any of these keys, in seq order (missing keys are skipped)."""
        ...

    def load_state(self) -> str | None:
        """The text last given to `save_state`, or None. Never takes a write lock."""
        ...

    def save_state(self, seq: int, text: str) -> None:
        """Keep `text` (the engine's state folded through `seq`), unless an `erase` event is stored
        after `seq` (the state may hold the text that erase took out). A store may keep a state of a
        later seq instead: an engine loads whichever it finds and folds the log past it.

        Best effort and quick: it may give up when the store is busy or read-only.

        Raises:
            StoreError: it could not be saved (nothing else changed).
        """
        ...


class StoredText(NamedTuple):
    """One stored event before its data is decoded: the data's text exactly as it was written."""

    seq: int
    kind: str
    key: str | None
    time: float
    data: str


@runtime_checkable
class TextStore(Store, Protocol):
    """A store that hands over its log undecoded, for a reader that decodes only what it needs
    (the what-if fold meets the same few texts again and again, an id apart)."""

    def read_texts(self, after: int = 0) -> list[StoredText]:
        """What `read(after)` returns, checked the same way up to decoding (a checksum, a gap)."""
        ...

    def decoded(self, row: StoredText) -> Event:
        """The event `row` holds, checked as `read` checks it.

        Raises:
            CorruptStore: its data does not parse, or holds what no write could have stored.
        """
        ...


NESTED = "it is nested deeper than any event Lamar writes: a line or row crafted or damaged"


def event_of(row: StoredText, decode: Callable[[str, str], Any] = lambda _kind, text: json.loads(text)) -> Event:
    """The event a stored text holds, checked as every read checks it (`stored_problem`).

    Raises:
        CorruptStore: what is wrong with it, for the store to name itself in.
    """
    if row.kind not in EVENT_KINDS:
        raise UnknownKind(row.kind, f"event {row.seq}")
    try:
        event = Event.stored(row.seq, row.kind, row.key, row.time, decode(row.kind, row.data))
    except (ValueError, TypeError) as exc:
        raise CorruptStore(f"event {row.seq} does not parse ({exc})") from exc
    except RecursionError:  # the JSON decoder's, on data crafted or damaged past any depth a write makes
        raise CorruptStore(f"event {row.seq} does not parse ({NESTED})") from None
    problem = stored_problem(event)
    if problem is not None:
        raise CorruptStore(f"event {row.seq} ({row.kind!r}) {problem}")
    return event


class RowsView(NamedTuple):
    """Lessons as the folded state holds them, with the namespace-wide inputs of decisions:
    the reward spread (sigma) and the count of non-retired lessons (the Bonferroni divisor).

    `tuning` is the tuning a store's rows were folded under (None: stale, to be built again).
    """

    states: list[Any]  # LessonState
    sigma: float
    active: int
    tuning: str | None


class FoldedRows(Protocol):
    """The fold mode's seam: a store whose `rows` attribute is one of these holds every lesson's
    folded state itself (lamar/store/postgres/rows.py), and the engine reads and writes through it
    instead of folding the log (lamar/state/holder.py). A store without `rows` (or with None)
    leaves the folding to the engine's cache.

    Reads return a view: the lessons' states, the reward spread, the count of non-retired
    lessons, and the tuning the rows were folded under (None: build them first).
    """

    def eligible(self, context: dict[str, str]) -> RowsView:
        """The non-retired lessons whose scope the context contains."""
        ...

    def lessons(self, ids: Sequence[str] | None = None) -> RowsView:
        """These lessons (all when None), in the order they were added."""
        ...

    def append(self, events: list[Event], *, strict: bool = False) -> list[Event]:
        """Append events and fold them into the rows in one transaction (`Store.append`'s contract;
        strict: an outcome whose episode is not found raises UnknownEpisode, writing nothing)."""
        ...

    def build(self, tuning: str, folder: Callable[[list[Event]], tuple[Iterable[Any], tuple[int, float, float]]],
              *, force: bool = False) -> None:
        """Replace every row by `folder(events)` of the whole log, under an exclusive lock
        (unless `force`, not when they are already built under `tuning`)."""
        ...

    def refresh(self, tuning: str, states: Iterable[Any], rewards: tuple[int, float, float], active: int,
                through: int, *, whole: bool = False) -> bool:
        """Under `exclusive`, after a write of this object's left the rows stale (a replaced outcome):
        write `states` (LessonState; `whole`: every lesson's) into their rows, `rewards` (n, mean,
        m2) and `active` (lessons not retired) as the namespace's, and mark the rows built under
        `tuning` again. Only when they were built under it before that write and the log ends at
        seq `through`; False, with nothing written, otherwise (`build` then)."""
        ...

    def settled(self) -> int | None:
        """The seq through which the log is settled (no event at or below it can still commit),
        or None when a write in flight did not end in time."""
        ...

    def exclusive(self) -> AbstractContextManager[None]:
        """Hold off every fold-mode write while the caller rewrites the log."""
        ...

    def erasing(self) -> float | None:
        """When the oldest erase event whose scrub was pending as the rows were last built was
        stored (None: none), as the last read found it: no question to the server."""
        ...

    def unscrubbed(self, after: int = 0) -> list[Event]:
        """The erase events with a seq above `after` whose scrub has not run (stored with
        `pending`), found by the store: no write folds the log in this mode (`erasure.finish`)."""
        ...

    def places(self) -> dict[str, int]:
        """Each lesson row's place in the order the lessons were added, by id (`in_rows_order`)."""
        ...


def in_rows_order(ids: Sequence[str], places: Mapping[str, int]) -> list[str]:
    """`ids`, in the log's order, with those that have a place among the rows (`FoldedRows.places`)
    put in the rows' order, each in a place one of them held; the others keep their places.

    An add takes its row's place before its event's seq, and another add may take both between
    them: two lessons may stand in one order in the rows and in the other in the log. The rows'
    order is the one fold-mode engines serve (the copy added first is the lesson, a later copy is
    retired as a copy of it, and recall lists the lessons in it), so what is folded from the log
    for them to serve (a build of the rows, a checkpoint's snapshot) keeps it.

    >>> in_rows_order(["b", "new", "a"], {"a": 1, "b": 2})
    ['a', 'new', 'b']
    """
    slots = [k for k, i in enumerate(ids) if i in places]
    ordered = list(ids)
    for k, i in zip(slots, sorted((ids[k] for k in slots), key=places.__getitem__), strict=True):
        ordered[k] = i
    return ordered


@runtime_checkable
class FoldingStore(Store, Protocol):
    """A store that may hold the folded state itself: `rows` is None when it leaves that to the engine."""

    rows: FoldedRows | None


@runtime_checkable
class UnfoldedAppendStore(FoldingStore, Protocol):
    """A `FoldingStore` that can take events without folding them into its rows: a copy into it numbers them as
    its own check's fold did, and that fold builds the rows (`lamar.state.copied.save_copied`)."""

    def append_unfolded(self, events: Sequence[Event]) -> list[Event]:
        """Append `events` as a store that leaves folding to the engine would: numbered after the log's last seq,
        the rows marked for a build. Raises as `append` does."""
        ...


def folded_rows(store: object) -> FoldedRows | None:
    """The folded state `store` holds itself (`FoldingStore.rows`), or None when the engine folds the
    log. Every caller asks here, so the engine's mode and what a caller assumes of it never differ.

    >>> from lamar.store.memory import MemoryStore
    >>> folded_rows(MemoryStore()) is None
    True
    """
    return store.rows if isinstance(store, FoldingStore) else None


@runtime_checkable
class RewritableStore(Store, Protocol):
    """A store whose log can shrink: the engine's `checkpoint` (and compaction) use this."""

    def rewrite(self, through: int, snapshot: Event) -> bool:
        """Atomically replace every event with seq <= `through` by `snapshot`, stored at seq `through`.

        Later events keep their seqs and new ones continue after them. `read(after)` with
        after < through returns the snapshot first, so a reader that was behind folds it and
        then the rest. The keys of replaced events are no longer held: the snapshot's folder
        (the engine) refuses what they refused; except that `append` goes on refusing the
        `proposal:<id>` key of each proposal the log's first event, a snapshot, lists as applied
        (`lamar.store.held`), atomically with the write, as it refused the replaced event's key.

        Returns:
            False, changing nothing, when the log already starts with a snapshot at or after
            `through` (another process checkpointed as far), or an `erase` event is stored after
            `through` (the snapshot, folded before it, may hold the text it took out); True otherwise.

        Raises:
            ValueError: `through` is past the last event.
            StoreError: the write failed (the previous log is intact).
        """
        ...


@runtime_checkable
class ErasableStore(Store, Protocol):
    """A store whose events' data can be replaced in place: `Lamar.erase` uses this to take a
    lesson's text (and its episodes' contexts) out of every copy of the log the store keeps."""

    def scrub(self, events: Sequence[Event]) -> int:
        """Replace the data of stored events, all or none, and drop the saved state.

        Each of `events` names a stored event by its seq (its kind, key and time as stored) and
        carries the data to store in its place; seqs, keys and the order of the log stay. Once it
        returns, no stored event holds the old data, nor the engine's saved state (dropped: the
        next engine folds the log again), nor folded rows (dropped too, where the store keeps them:
        they are built again from the log); and the backend has done what it can to make its files
        drop the old bytes, saying in its own `scrub` what it cannot (a server's free space and
        write-ahead log, a file system's freed blocks).

        Returns:
            How many events were replaced.

        Raises:
            ValueError: an event's seq is not stored, or the stored event has another kind, key
                or time (a checkpoint replaced it meanwhile); nothing is changed.
            StoreError: the write failed (the previous log is intact).
        """
        ...


def scrubbed_log(log: Sequence[Event], events: Sequence[Event], where: str) -> list[Event]:
    """A new list: `log` with each of `events` in place of the stored event it names (same seq,
    kind, key and time), for a backend that scrubs a log it holds whole (`ErasableStore.scrub`).

    Raises:
        ValueError: an event is not stored as named (`where` says in which store); nothing changed.
    """
    at = {e.seq: i for i, e in enumerate(log)}
    for event in events:
        i = at.get(event.seq)
        old = log[i] if i is not None else None
        if old is None or (old.kind, old.key, old.time) != (event.kind, event.key, event.time):
            raise ValueError(f"event {event.seq} ({event.kind}) is not stored in {where} as named; nothing was changed")
    replaced = list(log)
    for event in events:
        replaced[at[event.seq]] = Event(event.kind, event.data, event.key, event.seq, event.time)
    return replaced
