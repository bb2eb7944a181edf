"""The episode table a SQLite store keeps beside its log for `lamar whatif`: each live episode's
slate and outcome, folded by the what-if fold's rules in batches (when an engine saves its state),
so that a first read of a long log's episodes is one query instead of decoding every event."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

from lamar._errors import CorruptStore
from lamar.store import episode_sums as sums
from lamar.store.base import Event, Store, StoredText, event_of
from lamar.store.decode import EventDecoder, Repeats
from lamar.store.episode_sums import ROWS, SLATES, Damaged, set_through

# The fields of a snapshot's episode rows, in order (the log's format: `lamar.state.snapshot`
# writes them, the what-if fold and this table read them).
EPISODE_FIELDS = ("id", "context", "eligible", "injected", "held_out", "p", "time", "reward", "signal",
                  "reports", "number", "outcome_seq")

# Keyed by the episode event's seq, so a write appends at the table's end; an outcome finds its
# episode's seq through the log's own key index. Episodes a snapshot carries (no event of their
# own) take the seqs just below the snapshot's, whose events it replaced, and an index of their ids.
SCHEMA = """
CREATE TABLE IF NOT EXISTS episode_slates (slate INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS episode_rows (
    seq    INTEGER PRIMARY KEY,
    id     TEXT NOT NULL,
    time   REAL NOT NULL,
    slate  INTEGER NOT NULL,
    reward REAL,
    signal TEXT,
    sealed INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS episode_rows_sealed ON episode_rows (id) WHERE sealed;
"""
# In `meta`: the seq through which the table folds the log, or "stale" when it cannot describe
# it (readers then fold the log, which names what is wrong with it).
THROUGH = "episode_rows_through"
BEHIND = 5000  # events past the table that a reader, where it can write, folds into it first
_KINDS = frozenset({"episode", "outcome", "compact", "snapshot"})


class EpisodeRows(NamedTuple):
    """The table as one read saw it: the live episodes in fold order by columns (id, time, slate,
    reward, signal, sealed), each slate's [context, p, injected, held_out] by its number, the event
    at the seq it folds through (None before any), and the events logged after it, for the reader
    to fold (all read in one transaction)."""

    columns: tuple[list[str], list[float], list[int], list[float | None], list[str | None], list[int]]
    slates: dict[int, list[Any]]
    last: StoredText | None
    tail: list[StoredText]

    @property
    def rows(self) -> list[tuple[str, float, int, float | None, str | None, int]]:
        """Each live episode as (id, time, slate, reward, signal, sealed)."""
        return list(zip(*self.columns))


class EpisodeCounts(NamedTuple):
    """The table as `EpisodeRows`, each live episode only as (time, lessons injected, lessons held
    out): what the injection chart draws, counted without decoding a slate."""

    rows: list[tuple[float, int, int]]
    last: StoredText | None
    tail: list[StoredText]


@runtime_checkable
class EpisodeTableStore(Store, Protocol):
    """A store that keeps its live episodes folded beside its log (SQLite does)."""

    def episodes(self) -> EpisodeRows | None:
        """The episodes as of one consistent read; None when the table does not describe the log."""
        ...

    def episode_counts(self) -> EpisodeCounts | None:
        """`episodes`, each episode as its time and its slate's counts; None as for `episodes`."""
        ...


def outcome_values(data: Mapping[str, Any]) -> tuple[bool, bool, Any, Any]:
    """An outcome's values as the fold files them: (replace, expired, reward, signal)."""
    expired = bool(data.get("expired"))
    return bool(data.get("replace")), expired, None if expired else data["reward"], data.get("signal")


def create(db: sqlite3.Connection) -> None:
    """The tables, empty, folding nothing yet (inside the caller's transaction)."""
    for statement in filter(str.strip, SCHEMA.split(";")):
        db.execute(statement)
    set_through(db, THROUGH, "0")


def through(db: sqlite3.Connection) -> int | None:
    """The seq through which the table folds the log; None when it is stale or missing."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (THROUGH,)).fetchone()
    except sqlite3.Error:
        return None
    return int(row[0]) if row is not None and row[0].isdigit() else None


def behind(db: sqlite3.Connection) -> bool:
    """Whether a reader should bring the table up to date before reading it: more events past it
    than a fold of the tail takes in the blink of an eye (the table of a file no engine has written
    to since it got the table, or after a long import)."""
    done = through(db)
    top = db.execute("SELECT max(seq) FROM events").fetchone()[0] or 0
    return done is not None and top - done > BEHIND


def catch_up(db: sqlite3.Connection, crc: Callable[[str, str | None, float, str], int], refill: bool = True) -> None:
    """Fold the events logged since the seq the table folds through, in the caller's write
    transaction; `crc` is the store's checksum of an event's row. A row that fails it, or that
    no read would accept, leaves the table stale; a table that fails its sums is repaired (`refill`)."""
    done = through(db)
    if done is None:
        return
    try:
        sums.check_through(db, str(done))
        _fold(db, crc, done, _Folder(db))
    except Damaged:  # moved by an older Lamar, or a span changed since it was summed
        if refill:
            repair(db, crc)
        else:
            set_through(db, THROUGH, "stale")


def _fold(db: sqlite3.Connection, crc: Callable[[str, str | None, float, str], int], done: int,
          folder: _Folder) -> None:
    """Fold the events after seq `done` with `folder`; Damaged when a span it changes fails its sum."""
    decode = EventDecoder()
    repeats = Repeats()  # an episode's text, its id aside, repeats for every episode of its slate
    try:
        for seq, kind, key, at, text, stored_crc in db.execute(
                "SELECT seq, kind, key, time, data, crc FROM events WHERE seq > ? ORDER BY seq", (done,)):
            if stored_crc is not None and stored_crc != crc(kind, key, at, text):
                raise ValueError(seq)
            done = seq
            if kind not in _KINDS:
                continue
            met = repeats.seen(kind, text)
            if met is not None:
                folder.again(kind, seq, key, at, *met)
                continue
            repeats.keep(folder.fold(event_of(StoredText(seq, kind, key, at, text), decode)))
        folder.spans.save()
    except (CorruptStore, sqlite3.IntegrityError, KeyError, TypeError, ValueError, AttributeError, UnicodeError):
        set_through(db, THROUGH, "stale")
        return
    set_through(db, THROUGH, str(done))


def repair(db: sqlite3.Connection, crc: Callable[[str, str | None, float, str], int]) -> None:
    """Bring a table that fails its sums back to the fold of the log, in the caller's write
    transaction. A Lamar from before the sums changes only the rows that the events logged since
    the table was last summed name: the table is folded again from the first span of those, once
    every span before it has passed its sums; otherwise it is refilled whole."""
    mark = sums.summed(db)  # (seq, last slate number) as of the last write that summed the table
    start = None if mark is None else _first_changed(db, mark[0])
    if mark is not None and start is not None:
        try:
            folder = _Folder(db, start)
            folder.slates.update(_keep_before(db, start, mark[1]))
            _fold(db, crc, max(start - 1, 0), folder)  # seq 0: the table folds nothing yet
            return
        except (Damaged, sqlite3.DatabaseError):
            pass  # a span before it fails its sums (damage, not a write): refilled whole
    try:
        rebuild(db, crc)
    except sqlite3.DatabaseError:  # a page of the table SQLite cannot read: the log is read instead
        set_through(db, THROUGH, "stale")


def _first_changed(db: sqlite3.Connection, summed: int) -> int | None:
    """The first seq of the first span of rows that an event logged after seq `summed` can have
    changed: an episode's own, or the row an outcome or a compaction names. None when an event
    since replaced or scrubbed the rows (a rewrite, an erasure)."""
    first = summed + 1
    try:
        for kind, text in db.execute("SELECT kind, data FROM events WHERE seq > ? AND kind IN "
                                     "('outcome', 'compact', 'snapshot', 'erase')", (summed,)):
            if kind in ("snapshot", "erase"):
                return None
            data = json.loads(text)
            for episode_id in [data["episode"]] if kind == "outcome" else data["episodes"]:
                for (seq,) in db.execute("SELECT seq FROM events WHERE key = ? UNION ALL SELECT seq FROM "
                                         "episode_rows WHERE id = ? AND sealed",
                                         (f"episode:{episode_id}", episode_id)):
                    first = min(first, seq)
        start = first // sums.SPAN * sums.SPAN
        if db.execute("SELECT 1 FROM events WHERE seq >= ? AND kind = 'snapshot'", (start,)).fetchone():
            return None  # its rows take seqs below it: the fold from `start` would meet them
    except (sqlite3.Error, KeyError, TypeError, ValueError, UnicodeError):
        return None  # the refill names what is wrong, or marks the table stale
    return start


def _keep_before(db: sqlite3.Connection, start: int, top: int) -> dict[str, int]:
    """Empty the table from seq `start` and past slate number `top`, then check all that stays
    against its sums (Damaged if any fails); the slates kept, by body (so that the refold finds
    them as checked, not through their index, whose pages no sum covers)."""
    db.execute("DELETE FROM episode_rows WHERE seq >= ?", (start,))
    db.execute("DELETE FROM episode_slates WHERE slate > ?", (top,))
    db.execute("DELETE FROM episode_sums WHERE (part = ? AND span >= ?) OR (part = ? AND span > ?)",
               (ROWS, start // sums.SPAN, SLATES, top // sums.SPAN))
    if db.execute(_MISFILED).fetchone() is not None:
        raise Damaged(ROWS)
    found = db.execute("SELECT slate, body FROM episode_slates ORDER BY slate").fetchall()
    sums.check(db, SLATES, [list(column) for column in zip(*found)] if found else [[], []], sums.slates_crc)
    rows = db.execute(f"SELECT {sums.ROW_COLUMNS} FROM episode_rows ORDER BY seq").fetchall()
    sums.check(db, ROWS, [list(column) for column in zip(*rows)] if rows else [[] for _ in range(7)], sums.rows_crc)
    return {body: number for number, body in found}


def rebuild(db: sqlite3.Connection, crc: Callable[[str, str | None, float, str], int]) -> None:
    """Refill the table from the whole log, in the caller's write transaction (after a rewrite or
    an erasure: no episode compacted or erased away stays in it)."""
    db.execute("DELETE FROM episode_rows")
    db.execute("DELETE FROM episode_slates")
    db.execute("DELETE FROM episode_sums WHERE part != 'through'")
    set_through(db, THROUGH, "0")
    catch_up(db, crc, refill=False)


def read(db: sqlite3.Connection, events: Callable[[int], list[StoredText]]) -> EpisodeRows | None:
    """Every live episode in fold order, the slates they use, and from `events(after)` (the stored
    events after a seq) the one the table folds through and those after it (all in the caller's
    read transaction). Damaged when a row, a slate or the seq it folds through fails its sum."""
    done = through(db)
    if done is None:
        return None
    columns, slates = _table(db, done)
    ids, times, slate_of, rewards, signals, sealed = columns[1:]
    return EpisodeRows((ids, times, slate_of, rewards, signals, sealed), slates, *_since(events, done))


def _table(db: sqlite3.Connection, done: int) -> tuple[list[list[Any]], dict[int, list[Any]]]:
    """The rows by columns (their seqs first) and the slates by number, each checked by its sums."""
    columns, found = _checked(db, done)
    slates = {}
    for number, body in found:
        try:
            slate = json.loads(body)
        except ValueError as exc:
            raise Damaged(SLATES) from exc
        if not (isinstance(slate, list) and len(slate) == 4 and isinstance(slate[0], dict)
                and isinstance(slate[1], dict) and isinstance(slate[2], list) and isinstance(slate[3], list)):
            raise Damaged(SLATES)
        slates[number] = slate
    return columns, slates


def _checked(db: sqlite3.Connection, done: int) -> tuple[list[list[Any]], list[tuple[int, str]]]:
    """The rows by columns (their seqs first) and the slates' (number, body), as stored, once every
    span of both passed its sum (else Damaged, as for a page SQLite cannot read or a text that is
    not UTF-8)."""
    try:
        return _summed(db, done)
    except sqlite3.DatabaseError as exc:
        raise Damaged(exc) from exc


def _summed(db: sqlite3.Connection, done: int) -> tuple[list[list[Any]], list[tuple[int, str]]]:
    sums.check_through(db, str(done))
    # A row or slate that no write of the table could have filed (a damaged page, an edit) fails
    # its sum, or could not be summed: both are Damaged, and the log is folded instead.
    if db.execute(_MISFILED).fetchone() is not None:
        raise Damaged(ROWS)
    found = db.execute("SELECT slate, body FROM episode_slates ORDER BY slate").fetchall()
    sums.check(db, SLATES, [list(column) for column in zip(*found)] if found else [[], []], sums.slates_crc)
    rows = db.execute(f"SELECT {sums.ROW_COLUMNS} FROM episode_rows ORDER BY seq").fetchall()
    columns = [list(column) for column in zip(*rows)] if rows else [[] for _ in range(7)]
    sums.check(db, ROWS, columns, sums.rows_crc)
    return columns, found


def counts(db: sqlite3.Connection, events: Callable[[int], list[StoredText]]) -> EpisodeCounts | None:
    """`read`, each episode as (time, lessons injected, lessons held out), counted by SQLite's JSON
    functions: a slate's body, most of it its propensities, is never decoded in Python (only
    summed). Damaged as `read` is."""
    done = through(db)
    if done is None:
        return None
    columns, _ = _checked(db, done)
    try:  # a body that is not JSON, or a SQLite built without JSON functions: the reader folds the log
        slates = {number: (injected, held) for number, shaped, injected, held in db.execute(_SLATE_COUNTS)
                  if shaped == 1}
        rows = [(at, *slates[slate]) for at, slate in zip(columns[2], columns[3], strict=True)]
    except (sqlite3.OperationalError, KeyError):  # KeyError: a slate `read` would refuse
        return None
    return EpisodeCounts(rows, *_since(events, done))


def _since(events: Callable[[int], list[StoredText]], done: int) -> tuple[StoredText | None, list[StoredText]]:
    """The event the table folds through (None when the log no longer holds it) and those after it."""
    tail = events(max(done - 1, 0))
    last = tail[0] if tail and tail[0].seq == done else None
    return last, tail[1:] if last is not None else tail


# Each slate's lessons injected and held out, and whether it has the shape `read` checks: [object,
# object, array, array], read in one pass over the slates.
_SLATE_COUNTS = """SELECT slate, json_type(body) = 'array' AND json_array_length(body) = 4
    AND json_type(body, '$[0]') = 'object' AND json_type(body, '$[1]') = 'object'
    AND json_type(body, '$[2]') = 'array' AND json_type(body, '$[3]') = 'array',
    json_array_length(body, '$[2]'), json_array_length(body, '$[3]') FROM episode_slates"""


# A row no write of the table files: each write gives a text id, a real time, a filed slate, a
# reward in [-1, 1] or none, a text signal or none, and a 0/1 flag.
_MISFILED = """SELECT 1 FROM episode_rows WHERE typeof(id) != 'text' OR typeof(time) != 'real'
    OR slate NOT IN (SELECT slate FROM episode_slates) OR sealed NOT IN (0, 1)
    OR (reward IS NOT NULL AND (typeof(reward) != 'real' OR reward < -1 OR reward > 1))
    OR (signal IS NOT NULL AND typeof(signal) != 'text') LIMIT 1"""


class _Folder:
    """Files events into the table within one write transaction, remembering the slates and the
    episodes it met (so that most writes need one statement, not a lookup of the log's key first).
    A `floor` leaves every row below that seq as it is: the rows a repair keeps already hold what
    the events from the floor on did to them (the events since it was summed did nothing to them)."""

    def __init__(self, db: sqlite3.Connection, floor: int = 0) -> None:
        self.db = db
        self.floor = floor
        self.slates: dict[str, int] = {}  # body -> number
        self.seqs: dict[str, int] = {}  # id -> seq of the unsealed row filed by this folder
        self.spans = sums.Spans(db)

    def fold(self, event: Event) -> Any:
        """File `event`; for an episode or an outcome, what filing another one of the same text,
        its id aside, takes (`again`): the episode's slate, the outcome's values."""
        data = event.data
        if event.kind == "episode":
            slate = self._slate([data["context"], data["p"], data["injected"], data["held_out"]])
            self.again("episode", event.seq, event.key, event.time, data["id"], slate)
            return slate
        if event.kind == "outcome":
            replace, expired, reward, signal = outcome_values(data)
            known = (replace, (None, None) if expired else (float(reward), signal))
            self.again("outcome", event.seq, event.key, event.time, data["episode"], known)
            return known
        if event.kind == "compact":
            for episode_id in data["episodes"]:
                if not self._at_episode("DELETE FROM episode_rows", (), episode_id):
                    self._sealed("DELETE FROM episode_rows", (), episode_id)
                self.seqs.pop(episode_id, None)
        elif event.kind == "snapshot":  # it replaces every episode before it with the ones it kept
            self.spans.forget_rows()  # every row is before it
            self.db.execute("DELETE FROM episode_rows WHERE seq <= ?", (event.seq,))
            self.seqs.clear()
            kept = data["episodes"]
            for n, values in enumerate(kept):
                row = dict(zip(EPISODE_FIELDS, values, strict=True))
                reward = None if row["reward"] is None else float(row["reward"])
                slate = self._slate([row["context"], row["p"], row["injected"], row["held_out"]])
                self._row(event.seq - len(kept) + 1 + n, row["id"], float(row["time"]), slate, reward,
                          row["signal"], True)
        return None

    def _at_episode(self, statement: str, values: tuple[Any, ...], episode_id: str) -> bool:
        """Run `statement` on the unsealed row of the episode `episode_id`; False when none."""
        seq = self.seqs.get(episode_id)
        if seq is None:  # logged before this catch-up: found through the log's key index
            row = self.db.execute("SELECT seq FROM episode_rows WHERE seq = (SELECT seq FROM events WHERE key = ?) "
                                  "AND id = ? AND NOT sealed AND seq >= ?",
                                  (f"episode:{episode_id}", episode_id, self.floor)).fetchone()
            if row is None:
                return False
            seq = row[0]
        self.spans.touch(ROWS, seq)
        return self.db.execute(f"{statement} WHERE seq = ?", (*values, seq)).rowcount > 0

    def _sealed(self, statement: str, values: tuple[Any, ...], episode_id: str) -> None:
        """Run `statement` on the sealed row of the episode `episode_id`, if any."""
        for (seq,) in self.db.execute("SELECT seq FROM episode_rows WHERE id = ? AND sealed AND seq >= ?",
                                      (episode_id, self.floor)).fetchall():
            self.spans.touch(ROWS, seq)
            self.db.execute(f"{statement} WHERE seq = ?", (*values, seq))

    def again(self, kind: str, seq: int, key: str | None, when: float, varying: str, known: Any) -> None:
        """File an episode (`known`: its slate) or an outcome (`known`: (replace, its values)) whose
        id, or episode, is `varying`."""
        if kind == "episode":
            if key != f"episode:{varying}":
                raise ValueError(varying)  # an outcome could not find it by its key
            self._row(seq, varying, when, known, None, None, False)
            self.seqs[varying] = seq
            return
        replace, values = known
        if not self._at_episode("UPDATE episode_rows SET reward = ?, signal = ?", values, varying) and not replace:
            self._sealed("UPDATE episode_rows SET reward = ?, signal = ?", values, varying)

    def _slate(self, body_of: list[Any]) -> int:
        """The number of a slate (`[context, p, injected, held_out]`), filed if new."""
        body = json.dumps(body_of, separators=(",", ":"), sort_keys=True)
        slate = self.slates.get(body)
        if slate is None:
            found = self.db.execute("SELECT slate FROM episode_slates WHERE body = ?", (body,)).fetchone()
            if found is None:
                slate = (self.db.execute("SELECT max(slate) FROM episode_slates").fetchone()[0] or 0) + 1
                self.spans.touch(SLATES, slate)
                self.db.execute("INSERT INTO episode_slates (slate, body) VALUES (?, ?)", (slate, body))
            else:
                slate = found[0]
            self.slates[body] = slate
        return int(slate)

    def _row(self, seq: int, episode_id: str, when: float, slate: int, reward: float | None, signal: str | None,
             sealed: bool) -> None:
        self.spans.touch(ROWS, seq)
        added = self.db.execute("INSERT INTO episode_rows SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
                                "(SELECT 1 FROM episode_rows WHERE id = ? AND sealed)",
                                (seq, episode_id, float(when), slate, reward, signal, sealed, episode_id))
        if added.rowcount != 1:
            raise ValueError(episode_id)  # a snapshot carries an episode of this id: the fold keeps both
