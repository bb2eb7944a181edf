"""The episode table's write path as a Lamar from before its sums wrote it (commit afacd17's
`lamar/store/episode_rows.py`, its SQL unchanged): it folds events into the table and moves the
seq it folds through, and sums nothing. Tests swap it in to act as that older writer."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any

from lamar._errors import CorruptStore
from lamar.store.base import Event, StoredText, event_of
from lamar.store.decode import EventDecoder, Repeats
from lamar.store.episode_rows import EPISODE_FIELDS, THROUGH, outcome_values, through

_KINDS = frozenset({"episode", "outcome", "compact", "snapshot"})


def catch_up(db: sqlite3.Connection, crc: Callable[[str, str | None, float, str], int]) -> None:
    """Fold the events logged since the seq the table folds through, in the caller's write
    transaction; `crc` is the store's checksum of an event's row. A row that fails it, or that
    no read would accept, leaves the table stale."""
    done = through(db)
    if done is None:
        return
    decode = EventDecoder()
    folder = _Folder(db)
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
    except (CorruptStore, sqlite3.IntegrityError, KeyError, TypeError, ValueError, AttributeError, UnicodeError):
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, 'stale')", (THROUGH,))
        return
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (THROUGH, str(done)))


def rebuild(db: sqlite3.Connection, crc: Callable[[str, str | None, float, str], int]) -> None:
    """Refill the table from the whole log, in the caller's write transaction (after a rewrite or
    an erasure: no episode compacted or erased away stays in it)."""
    db.execute("DELETE FROM episode_rows")
    db.execute("DELETE FROM episode_slates")
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, '0')", (THROUGH,))
    catch_up(db, crc)


class _Folder:
    """Files events into the table within one write transaction, remembering the slates and the
    episodes it met (so that most writes need one statement, not a lookup of the log's key first)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.slates: dict[str, int] = {}  # body -> number
        self.seqs: dict[str, int] = {}  # id -> seq of the unsealed row filed by this folder

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
                    self.db.execute("DELETE FROM episode_rows WHERE id = ? AND sealed", (episode_id,))
                self.seqs.pop(episode_id, None)
        elif event.kind == "snapshot":  # it replaces every episode before it with the ones it kept
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
        if seq is not None:
            cur = self.db.execute(f"{statement} WHERE seq = ?", (*values, seq))
        else:  # logged before this catch-up: found through the log's key index
            cur = self.db.execute(f"{statement} WHERE seq = (SELECT seq FROM events WHERE key = ?) AND id = ? "
                                  "AND NOT sealed", (*values, f"episode:{episode_id}", episode_id))
        return cur.rowcount > 0

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
            self.db.execute("UPDATE episode_rows SET reward = ?, signal = ? WHERE id = ? AND sealed",
                            (*values, varying))

    def _slate(self, body_of: list[Any]) -> int:
        """The number of a slate (`[context, p, injected, held_out]`), filed if new."""
        body = json.dumps(body_of, separators=(",", ":"), sort_keys=True)
        slate = self.slates.get(body)
        if slate is None:
            self.db.execute("INSERT OR IGNORE INTO episode_slates (body) VALUES (?)", (body,))
            (slate,) = self.db.execute("SELECT slate FROM episode_slates WHERE body = ?", (body,)).fetchone()
            self.slates[body] = slate
        return int(slate)

    def _row(self, seq: int, episode_id: str, when: float, slate: int, reward: float | None, signal: str | None,
             sealed: bool) -> None:
        added = self.db.execute("INSERT INTO episode_rows SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS "
                                "(SELECT 1 FROM episode_rows WHERE id = ? AND sealed)",
                                (seq, episode_id, float(when), slate, reward, signal, sealed, episode_id))
        if added.rowcount != 1:
            raise ValueError(episode_id)  # a snapshot carries an episode of this id: the fold keeps both
