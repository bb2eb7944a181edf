"""The episodes folded from a store's log, by columns, and their cache under the user's cache
folder, so that `lamar whatif` reads only the events logged since; when the event the cache ends
at is gone or different, the whole log is folded again."""

from __future__ import annotations

import array
import base64
import contextlib
import hashlib
import json
import math
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from lamar.state.saved import fingerprint
from lamar.store.base import Event, FoldingStore, Store, StoredText, TextStore
from lamar.store.decode import Repeats, no_cycle_collection
from lamar.store.episode_rows import EPISODE_FIELDS, EpisodeRows, EpisodeTableStore, outcome_values
from lamar.whatif.slate import Slate

FORMAT = 2
SAVE_AFTER = 1000  # events folded past the cached fold before it is written again
SEEN_LIMIT = 4096  # slates remembered as read; past it (contexts that never repeat) each is sorted
SUCCESS_SIGNALS = frozenset({"shipped", "accepted"})
KEPT_FILES = 4  # cache files whose fold a process keeps as read or written (`lamar ui` reads one again and again)


class Folded:
    """Every logged episode, reported or not, by columns; slates and contexts stored once each."""

    def __init__(self) -> None:
        self.seq = 0
        self.last = ""  # fingerprint of the event at `seq`
        self.ids: list[str] = []
        self.times: list[float] = []
        self.context: list[int] = []
        self.slate: list[int] = []
        self.reward: list[float | None] = []
        self.signal: list[str | None] = []
        self.sealed: list[bool] = []  # folded into a checkpoint: its outcome cannot be replaced
        self.alive: list[bool] = []  # False once compacted
        self.contexts: list[dict[str, str]] = []
        self.slates: list[Slate] = []
        self.randomized: list[bool] = []  # per slate: at least one coin
        self._position: dict[str, int] | None = {}  # id -> column; None until an outcome needs it
        self._context_index: dict[tuple[tuple[str, str], ...], int] = {}
        self._slate_index: dict[tuple[object, ...], int] = {}
        self._seen: dict[tuple[tuple[Any, ...], ...], tuple[int, int]] = {}  # as read -> (context, slate)

    def successes(self) -> list[bool]:
        """Per episode: a shipped or accepted signal, or a reported number above 0."""
        return [signal in SUCCESS_SIGNALS if signal is not None else reward is not None and reward > 0.0
                for signal, reward in zip(self.signal, self.reward, strict=True)]

    def context_ok(self, wanted: Mapping[str, str]) -> list[bool]:
        """Per episode: whether its context has every key=value of `wanted`."""
        fits = [all(ctx.get(k) == v for k, v in wanted.items()) for ctx in self.contexts]
        return [fits[c] for c in self.context]

    # -- folding ---------------------------------------------------------------------------------

    def fold(self, event: Event) -> None:
        kind, data = event.kind, event.data
        if kind == "episode":
            self._add(data["id"], event.time, data["context"], data["p"], data["injected"], data["held_out"],
                      None, None, False)
        elif kind == "outcome":
            self._outcome(data["episode"], outcome_values(data))
        elif kind == "compact":
            positions = self.positions()
            for episode_id in data["episodes"]:
                j = positions.pop(episode_id, None)
                if j is not None:
                    self.alive[j] = False
        elif kind == "snapshot":
            for j in range(len(self.alive)):
                self.alive[j] = False
            self._position = {}
            for values in data["episodes"]:
                row = dict(zip(EPISODE_FIELDS, values, strict=True))
                self._add(row["id"], row["time"], row["context"], row["p"], row["injected"], row["held_out"],
                          row["reward"], row["signal"], True)
        self.seq = event.seq

    def fold_texts(self, store: TextStore, rows: Sequence[StoredText]) -> None:
        """Fold stored texts as `fold` folds their events. An episode or an outcome whose text,
        its id aside, was met before is filed as that one was, without being decoded; the first
        of each is decoded and checked as every read checks it."""
        repeats = Repeats()
        for row in rows:
            met = repeats.seen(row.kind, row.data)
            if met is not None:
                value, known = met
                if row.kind == "episode":
                    self._append(value, row.time, known[0], known[1], None, None, False)
                else:
                    self._outcome(value, known)
                self.seq = row.seq
                continue
            event = store.decoded(row)
            self.fold(event)
            if repeats.waiting:
                repeats.keep(self._memo(event))

    def _memo(self, event: Event) -> tuple[Any, ...]:
        """What filing `event` again takes, its id aside: an episode's columns, an outcome's values."""
        if event.kind == "episode":
            return self.context[-1], self.slate[-1]
        return outcome_values(event.data)

    def _outcome(self, episode_id: str, values: tuple[Any, ...]) -> None:
        replace, expired, reward, signal = values
        j = self.positions().get(episode_id)
        if j is None or not self.alive[j] or (self.sealed[j] and replace):
            return  # a compacted episode, or a replacement of an outcome a checkpoint sealed
        if expired:
            self.reward[j] = self.signal[j] = None
        else:
            self.reward[j], self.signal[j] = float(reward), signal

    def _add(self, episode_id: str, when: float, context: Mapping[str, str], p: Mapping[str, float],
             injected: list[str], held_out: list[str], reward: float | None, signal: str | None,
             sealed: bool) -> None:
        # Episodes logged alike read back alike, in the same order: the key as read finds their
        # columns without sorting anything; a new one is filed under its sorted key.
        seen = (tuple(context.items()), tuple(p.items()), tuple(injected), tuple(held_out))
        known = self._seen.get(seen)
        if known is None:
            known = self._file(context, p, injected, held_out)
            if len(self._seen) < SEEN_LIMIT:
                self._seen[seen] = known
        self._append(episode_id, when, known[0], known[1], reward, signal, sealed)

    def _append(self, episode_id: str, when: float, c: int, s: int, reward: float | None, signal: str | None,
                sealed: bool) -> None:
        self.positions()[episode_id] = len(self.ids)
        self.ids.append(episode_id)
        self.times.append(float(when))
        self.context.append(c)
        self.slate.append(s)
        self.reward.append(None if reward is None else float(reward))
        self.signal.append(signal)
        self.sealed.append(sealed)
        self.alive.append(True)

    def _file(self, context: Mapping[str, str], p: Mapping[str, float], injected: list[str],
              held_out: list[str]) -> tuple[int, int]:
        """The columns of a context and a slate: (context, slate)."""
        context_key = tuple(sorted(context.items()))
        c = self._context_index.get(context_key)
        if c is None:
            c = self._context_index[context_key] = len(self.contexts)
            self.contexts.append(dict(context))
        slate = Slate({str(i): float(v) for i, v in p.items()}, frozenset(injected), frozenset(held_out))
        s = self._slate_index.get(slate.key)
        if s is None:
            s = self._slate_index[slate.key] = len(self.slates)
            self.slates.append(slate)
            self.randomized.append(any(0.0 < v < 1.0 for v in slate.p.values()))
        return c, s

    def positions(self) -> dict[str, int]:
        """Each live episode's column, by id (built on first use: a cached fold whose tail holds
        no outcome never needs it)."""
        if self._position is None:
            self._position = {episode_id: j for j, episode_id in enumerate(self.ids) if self.alive[j]}
        return self._position

    @classmethod
    def of_table(cls, table: EpisodeRows) -> Folded:
        """The fold a store's episode table holds (`EpisodeTableStore`): its live episodes, in
        fold order, with each slate filed as the fold files it."""
        out = cls()
        filed = {number: out._file(*body) for number, body in table.slates.items()}
        ids, times, slates, out.reward, out.signal, sealed = table.columns
        out.ids, out.times = ids, times
        out.context = [filed[s][0] for s in slates]
        out.slate = [filed[s][1] for s in slates]
        out.sealed = [bool(x) for x in sealed]
        out.alive = [True] * len(ids)
        out._position = None
        return out

    def copy(self) -> Folded:
        """A fold that folding more into leaves this one as it was (the slates and contexts, never
        changed once filed, are shared)."""
        out = Folded()
        out.seq, out.last = self.seq, self.last
        out.ids, out.times, out.context, out.slate = self.ids[:], self.times[:], self.context[:], self.slate[:]
        out.reward, out.signal, out.sealed, out.alive = self.reward[:], self.signal[:], self.sealed[:], self.alive[:]
        out.contexts, out.slates, out.randomized = self.contexts[:], self.slates[:], self.randomized[:]
        out._position = None if self._position is None else dict(self._position)
        out._context_index, out._slate_index = dict(self._context_index), dict(self._slate_index)
        out._seen = dict(self._seen)
        return out

    # -- the cache file ----------------------------------------------------------------------------

    def to_json(self, location: str) -> str:
        return json.dumps({
            "format": FORMAT, "store": location, "seq": self.seq, "last": self.last, "ids": self.ids,
            "times": _packed(self.times), "context": self.context, "slate": self.slate, "reward": self.reward,
            "signal": self.signal, "sealed": self.sealed, "alive": self.alive, "contexts": self.contexts,
            "slates": [[s.p, sorted(s.injected), sorted(s.held_out)] for s in self.slates],
        }, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str, location: str) -> Folded | None:
        """The fold a cache file holds, or None when it is another format or another store's."""
        data: dict[str, Any] = json.loads(text)
        if data.get("format") != FORMAT or data.get("store") != location:
            return None
        out = cls()
        out.seq, out.last = int(data["seq"]), str(data["last"])
        out.ids, out.times = data["ids"], _unpacked(data["times"])
        out.context, out.slate = data["context"], data["slate"]
        out.reward, out.signal, out.sealed, out.alive = data["reward"], data["signal"], data["sealed"], data["alive"]
        out.contexts = data["contexts"]
        for p, injected, held_out in data["slates"]:
            slate = Slate(p, frozenset(injected), frozenset(held_out))
            out._slate_index[slate.key] = len(out.slates)
            out.slates.append(slate)
            out.randomized.append(any(0.0 < v < 1.0 for v in p.values()))
        out._context_index = {tuple(sorted(ctx.items())): c for c, ctx in enumerate(out.contexts)}
        out._position = None
        columns = (out.times, out.context, out.slate, out.reward, out.signal, out.sealed, out.alive)
        if any(len(column) != len(out.ids) for column in columns):
            return None
        return out


def _packed(times: list[float]) -> str:
    """Times as the base64 of their little-endian doubles: exact, and no shortest-decimal
    formatting of each one (most of the cost of writing the cache as JSON numbers)."""
    doubles = array.array("d", times)
    if sys.byteorder == "big":
        doubles.byteswap()
    return base64.b64encode(doubles.tobytes()).decode("ascii")


def _unpacked(text: str) -> list[float]:
    doubles = array.array("d")
    doubles.frombytes(base64.b64decode(text, validate=True))  # a torn cache raises ValueError: refolded
    if sys.byteorder == "big":
        doubles.byteswap()
    return doubles.tolist()


def cache_path(location: str) -> Path | None:
    """Where a store's fold is cached; None for the memory store, which holds its events parsed
    already, and where no cache folder can be found."""
    if location == ":memory:":
        return None
    try:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except RuntimeError:  # no HOME and no entry in the password database (a container's bare user)
        return None  # no cache: each fold reads the store, as for a store that has none yet
    digest = hashlib.sha256(_named(location).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return root / "lamar" / "whatif" / f"{digest}.json"


def _named(location: str) -> str:
    """A store's location as its cache names it: a file by its absolute path, a database by its
    URL (which never holds a password)."""
    if location == ":memory:" or location.startswith(("postgresql://", "postgres://")):
        return location
    # Links resolved: an erase through one path removes the cache a fold through another wrote.
    return os.path.realpath(location)


def _settled(store: Store) -> float:
    """The seq through which no event can still commit, asked before the log is read: a fold
    through it can be cached. Seq order is commit order in the file stores and in PostgreSQL's
    log mode (everything read is settled); in its fold mode a write may commit after one that
    took a later seq, and -1 (cache nothing) when a write in flight did not end in time."""
    rows = store.rows if isinstance(store, FoldingStore) else None
    if rows is None:
        return math.inf
    through = rows.settled()
    return -1 if through is None else through


def fold_store(store: Store, *, cache: bool = True) -> Folded:
    """The store's episodes folded through its last event: from the cache plus the events since,
    or from the whole log when there is no cache or it no longer describes the log. The cache
    keeps the fold through the settled part of the log only."""
    with no_cycle_collection():
        # The log's events die with `_fold_store`'s frame, before the collector resumes: it
        # would walk each of them once more.
        return _fold_store(store, cache)


def _fold_store(store: Store, cache: bool) -> Folded:
    location = _named(store.location)
    path = cache_path(store.location) if cache else None
    settled = _settled(store) if path is not None else -1
    folded = _load(path, location) if path is not None else None
    log = _Log(store)
    rows: Sequence[StoredText | Event] = []
    if folded is not None and not folded.seq:
        folded = None
    if folded is not None:
        rows = log.read(folded.seq - 1)
        if not rows or rows[0].seq != folded.seq or fingerprint(log.event(rows[0])) != folded.last:
            folded = None  # rewritten, rolled back, or another log at this place
        else:
            rows = rows[1:]
    if folded is not None and any(row.kind == "erase" for row in rows):
        folded = None  # the log before an erasure was scrubbed: what the cache holds of it may not be
    whole = folded is None  # no cache, or one that does not describe the log: replaced when saved
    if folded is None and cache:
        folded, rows = kept_fold(store)
    if folded is None:
        folded = Folded()
        rows = log.read(0)
    cut = next((n for n, row in enumerate(rows) if row.seq > settled), len(rows))
    log.fold(folded, rows[:cut])
    if cut:
        folded.last = fingerprint(log.event(rows[cut - 1]))
    if path is not None and (cut >= SAVE_AFTER or (whole and folded.seq)) and not _scrubbing(log, rows[:cut]):
        _save(path, folded, location)
    log.fold(folded, rows[cut:])  # after the settled part: folded for this answer, never cached
    return folded


def kept_fold(store: Store) -> tuple[Folded | None, list[StoredText]]:
    """The fold a store keeps itself (`EpisodeTableStore`), as of the event it is folded through,
    and the events after it, still to fold; (None, []) when it keeps none that describes its log."""
    if not (isinstance(store, EpisodeTableStore) and isinstance(store, TextStore)):
        return None, []
    table = store.episodes()
    if table is None:
        return None, []
    folded = Folded.of_table(table)
    if table.last is not None:  # what a cache of this fold is checked by, as one of the log's fold is
        folded.seq, folded.last = table.last.seq, fingerprint(store.decoded(table.last))
    return folded, table.tail


class _Log:
    """A store's log as the fold reads it: its texts undecoded where the store hands them over so."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.texts = store if isinstance(store, TextStore) else None

    def read(self, after: int) -> Sequence[StoredText | Event]:
        return self.store.read(after) if self.texts is None else self.texts.read_texts(after)

    def event(self, row: StoredText | Event) -> Event:
        return row if isinstance(row, Event) else self._texts().decoded(row)

    def fold(self, folded: Folded, rows: Sequence[StoredText | Event]) -> None:
        if self.texts is None:
            for row in rows:
                folded.fold(self.event(row))
        else:
            folded.fold_texts(self.texts, cast("Sequence[StoredText]", rows))  # what read_texts returned

    def _texts(self) -> TextStore:
        assert self.texts is not None, "only a TextStore hands over texts"
        return self.texts


def _scrubbing(log: _Log, rows: Sequence[StoredText | Event]) -> bool:
    """Whether an erase among `rows` has yet to scrub the log: its eraser removes the cache once it
    has, and a cache written from this read after that, ending at a later event the scrub leaves
    as it is, would keep the text it blanks."""
    return any(row.kind == "erase" and log.event(row).data.get("pending") for row in rows)


def _load(path: Path, location: str) -> Folded | None:
    try:
        with open(path, encoding="utf-8") as file:
            identity = _identity(file.fileno())
            kept = _kept(path, identity, location)
            if kept is not None:  # this very file, read or written by this process before: not parsed again
                return kept
            folded = Folded.from_json(file.read(), location)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None  # no cache, or a torn, foreign or crafted one: fold the log
    if folded is not None:
        _keep(path, identity, location, folded)
    return folded


def _save(path: Path, folded: Folded, location: str) -> None:
    """Write the cache whole or not at all (a temporary file, then a rename); failing loses nothing."""
    text = folded.to_json(location)
    try:
        from lamar.atomic import own_folder

        own_folder(path.parent)  # Lamar's own: the fold names lessons and episodes
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".whatif-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            identity = _identity(out.fileno())  # the rename keeps the file's inode and time
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
        return
    _keep(path, identity, location, folded)


# The fold each recent cache file holds, by the file's identity (device, inode, size, time of the
# last write): a file another process replaced or changed is another file, read again. What a
# fold read from here describes is checked against the log as a fold parsed from the file is.
_files: OrderedDict[Path, tuple[tuple[int, ...], str, Folded]] = OrderedDict()
_files_lock = threading.Lock()


def forget(location: str) -> None:
    """Remove the fold cached for this store, file and kept copy (an erase: it may hold the blanked
    contexts); failing to remove the file loses nothing, since the erase event after it refuses it."""
    path = cache_path(location)
    if path is None:
        return
    with _files_lock:
        _files.pop(path, None)
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)


def _identity(descriptor: int) -> tuple[int, ...]:
    stat = os.fstat(descriptor)
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _kept(path: Path, identity: tuple[int, ...], location: str) -> Folded | None:
    with _files_lock:
        entry = _files.get(path)
        if entry is None or entry[0] != identity or entry[1] != location:
            return None
        _files.move_to_end(path)
    return entry[2].copy()  # the caller folds more into its own


def _keep(path: Path, identity: tuple[int, ...], location: str, folded: Folded) -> None:
    kept = folded.copy()  # as the file holds it: the caller may fold more into `folded`
    with _files_lock:
        _files[path] = (identity, location, kept)
        _files.move_to_end(path)
        while len(_files) > KEPT_FILES:
            _files.popitem(last=False)
