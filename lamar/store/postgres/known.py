"""What one fold-mode store object knows of its lesson rows: each row's state as last read or
written, parsed once per version, and what a report can fold without reading first."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterable
from typing import Any

from lamar._errors import CorruptStore, LamarError
from lamar.experience import Experience
from lamar.policy.config import SETTLING, Policy
from lamar.policy.lesson import LessonState
from lamar.store.base import Event
from lamar.store.postgres import row_text
from lamar.store.postgres.batch import FoldInputs
from lamar.store.postgres.locks import ERASING

# A first report of an episode this store wrote folds the rows as its recall read them, when that
# read is at most _FRESH seconds old (`recalled_inputs`): see LessonRows._report for when it does.
_FRESH = 10.0
_RECALLED = 256  # episodes a store remembers for their reports


class RowsMoved(LamarError):
    """An optimistic write found a row it had read changed (or added, or the rows rebuilt)."""


class Contended(LamarError):
    """A report's read found outcomes queued for the rows: the report is queued too (`LessonRows._report`)."""


class KnownRows:
    """The rows of one namespace as this store object last saw them."""

    def __init__(self, location: str) -> None:
        self._location = location
        self._policies: dict[str, Policy | None] = {}
        self._experiences: dict[str, tuple[str, Experience]] = {}  # by id: the lesson's line in a row, parsed
        # Each row's state as last read or written here, by id, with its version: a read finds
        # most rows unchanged since (its own writes among them) and parses none of those again.
        # Only reads get these objects; a fold folds copies of them, so they never change.
        self._parsed: dict[str, tuple[int, LessonState]] = {}
        # What a report can fold without reading first (`recalled_inputs`): each row's text as
        # last read, by id, with its version; the namespace-wide inputs of the last read, with when
        # it was taken; the episodes this store wrote lately, by key.
        self._texts: dict[str, tuple[int, str]] = {}
        self._last_read: tuple[str | None, list[tuple[Any, Any, Any]], int, float] | None = None
        self._recalled: dict[str, str] = {}

    def note_read(self, tuning: str | None, shards: list[tuple[Any, Any, Any]], active: int,
                  rows: Iterable[tuple[str, str, int]]) -> None:
        """A read of rows (id, text, version) and of the namespace's counters, as of now."""
        self._last_read = (tuning, shards, active, time.monotonic())
        if tuning is None:
            # Stale rows (a scrub blanked their text, and a process killed before it built them
            # again leaves them so): nothing a report can fold, even once a later read that skips
            # these rows finds the namespace built again.
            for i, _, _ in rows:
                self._texts.pop(i, None)
            return
        self._texts.update((i, (version, raw)) for i, raw, version in rows)

    def note_written(self, states: dict[str, LessonState], versions: dict[str, int]) -> None:
        """The states a write put in the rows, each under its new version (0: a new row)."""
        for exp_id, state in states.items():
            self._parsed[exp_id] = (versions[exp_id] + 1 if exp_id in versions else 0, state)

    def forget_episode(self, key: str) -> bool:
        """Forget an episode this store wrote; whether it was remembered."""
        return self._recalled.pop(key, None) is not None

    def remember(self, written: list[Event]) -> None:
        """Keep the episodes just written, for their reports (`recalled_inputs`)."""
        for event in written:
            if event.kind == "episode" and event.key is not None:
                self._recalled[event.key] = event.data_json()
                while len(self._recalled) > _RECALLED:
                    del self._recalled[next(iter(self._recalled))]

    def recalled_inputs(self, events: list[Event]) -> FoldInputs | None:
        """What a report's fold needs, as the recall before it read it, without a read: for a first
        report (one outcome) of an episode this store wrote, when the last read is under `_FRESH`
        seconds old and holds every row the episode made eligible. The write checks the rows'
        versions as it does after a read, so a row another writer moved since is a conflict; the
        spread and the count of active lessons are the last read's (a read's are never locked
        either: each outcome records the ones its fold used). None: read first."""
        if len(events) != 1 or events[0].kind != "outcome" or events[0].data.get("replace"):
            return None
        key = f"episode:{events[0].data.get('episode')}"
        episode, last = self._recalled.pop(key, None), self._last_read
        if episode is None or last is None or time.monotonic() - last[3] > _FRESH:
            return None
        try:
            eligible = sorted(set(json.loads(episode)["eligible"]))
            texts = [(i, self._texts[i][1], self._texts[i][0]) for i in eligible]
        except (KeyError, TypeError, ValueError):
            return None
        return FoldInputs(last[0], {key: episode}, texts, last[1], last[2])

    def state(self, exp_id: str, raw: str) -> LessonState:
        """A row's state; the lesson's line is parsed once while it does not change (most of the
        cost of reading a row had been checking an Experience, and rows are read on every call).

        Raises:
            CorruptStore: the row's text does not parse (written by hand, or damaged).
        """
        try:
            return row_text.decode(raw, lambda line: self._lesson(exp_id, line))
        except (LamarError, ValueError, KeyError, TypeError, IndexError, AttributeError, struct.error) as exc:
            raise CorruptStore(f"the row of lesson {exp_id} in {self._location} does not parse ({exc}); "
                               "the log is intact: build the rows again from it with Lamar(...).rebuild()") from exc

    def _lesson(self, exp_id: str, line: str) -> Experience:
        cached = self._experiences.get(exp_id)
        if cached is None or cached[0] != line:
            cached = self._experiences[exp_id] = (line, Experience.from_dict(json.loads(line)))
        return cached[1]

    def rows_json(self, states: Iterable[LessonState]) -> str:
        """Lesson rows as the write sends them: a JSON array of {id, status, scope, state (the
        row's text, `row_text`)}, one object per row, which the server reads with one parse
        (json_to_recordset). A lesson's line is encoded once while the lesson is the same."""
        rows = []
        for s in states:
            exp = s.experience
            cached = self._experiences.get(exp.id)
            if cached is None or cached[1] is not exp:
                cached = self._experiences[exp.id] = (row_text.lesson_text(exp), exp)
            rows.append({"id": exp.id, "status": exp.status.value, "scope": dict(exp.scope),
                         "state": row_text.encode(s, cached[0])})
        return json.dumps(rows, separators=(",", ":"))

    def known(self, exp_id: str, raw: str, version: int) -> LessonState:
        """A row's state for a read: the one parsed or written here before, if the row's version
        has not moved since."""
        known = self._parsed.get(exp_id)
        if known is not None and known[0] == version:
            return known[1]
        state = self.state(exp_id, raw)
        self._parsed[exp_id] = (version, state)
        return state

    def copies(self, rows: Iterable[tuple[str, str, int]], locked: bool) -> list[LessonState]:
        """Copies of the states of rows (id, text, version) read for a fold, which changes them.

        Raises:
            RowsMoved: (not `locked`) a row does not decode. A read that holds no lock takes a
                snapshot per statement, so a scrub that blanked the rows and marked them stale
                may commit between its read of their tuning and its read of the rows; the
                locked read, which no scrub or build runs beside, tells a damaged row.
            CorruptStore: (`locked`) a row does not decode.
        """
        try:
            return [self.known(i, raw, v).copy() for i, raw, v in rows]
        except CorruptStore as exc:
            if locked:
                raise
            raise RowsMoved("a row read without the lock does not decode") from exc

    def policy(self, tuning: str) -> Policy | None:
        """The Policy the rows were folded under; None when another design of the decision core
        folded them (knobs this Policy does not have): their states are not read, and the next
        engine that reads them builds them again from the log."""
        if tuning not in self._policies:
            fields = {k: v for k, v in json.loads(tuning).items() if k not in SETTLING and k != ERASING}
            try:
                self._policies[tuning] = Policy(**fields)
            except TypeError:
                self._policies[tuning] = None
        return self._policies[tuning]


__all__ = ["Contended", "KnownRows", "RowsMoved"]
