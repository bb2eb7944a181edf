"""The episode table's checksums (`episode_rows`): a CRC-32 of each span of its rows' seqs, of its
slates' numbers, of the seq it folds through and of where it was last summed. A writer checks a
span's sum before it changes the span and sums it again after; a reader checks every span it reads."""

from __future__ import annotations

import array
import bisect
import math
import sqlite3
import zlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

SPAN = 1024  # seqs (or slate numbers) per sum: a writer sums again only the spans it changed
SCHEMA = """CREATE TABLE IF NOT EXISTS episode_sums (
    part TEXT NOT NULL, span INTEGER NOT NULL, crc INTEGER NOT NULL, PRIMARY KEY (part, span))"""
ROWS, SLATES, THROUGH, SUMMED = "rows", "slates", "through", "summed"
# In `meta`: the seq and the last slate number as of the last write that summed the table. A Lamar
# from before the sums folds events into the table and moves the seq it folds through, never this.
SUMMED_KEY = "episode_rows_summed"
ROW_COLUMNS = "seq, id, time, slate, reward, signal, sealed"


class Damaged(Exception):
    """The episode table fails its sums (a damaged page, an edit, or a table an older Lamar wrote):
    it does not describe the log until it is refilled from it."""


def rows_crc(columns: Sequence[Sequence[Any]]) -> int:
    """The CRC-32 of rows given by columns (seq, id, time, slate, reward, signal, sealed), each
    column packed whole: no number is formatted as text. Native byte order: a file moved to a
    machine of the other order fails its sums and is refilled."""
    seqs, ids, times, slates, rewards, signals, sealed = columns
    crc = zlib.crc32(array.array("q", seqs).tobytes())
    crc = zlib.crc32(_texts(ids), crc)
    crc = zlib.crc32(array.array("d", times).tobytes(), crc)
    crc = zlib.crc32(array.array("q", slates).tobytes(), crc)
    crc = zlib.crc32(array.array("d", [math.nan if r is None else r for r in rewards]).tobytes(), crc)
    crc = zlib.crc32(_texts(signals), crc)
    return zlib.crc32(bytes(sealed), crc)


def slates_crc(columns: Sequence[Sequence[Any]]) -> int:
    """The CRC-32 of slates given by columns (number, body)."""
    numbers, bodies = columns
    return zlib.crc32(_texts(bodies), zlib.crc32(array.array("q", numbers).tobytes()))


def _texts(values: Sequence[str | None]) -> bytes:
    return "\x00".join(["\x01" if v is None else v for v in values]).encode("utf-8", "surrogatepass")


def _spans(keys: Sequence[int]) -> Iterator[tuple[int, int, int]]:
    """(span, start, end) of each span the sorted `keys` fall in."""
    start = 0
    while start < len(keys):
        span = keys[start] // SPAN
        end = bisect.bisect_left(keys, (span + 1) * SPAN, start)
        yield span, start, end
        start = end


def check(db: sqlite3.Connection, part: str, columns: Sequence[list[Any]],
          crc: Callable[[Sequence[Sequence[Any]]], int]) -> None:
    """Raise Damaged unless every span of `columns` (the whole part, sorted by its first column)
    matches its sum, and no sum is left without rows."""
    try:
        sums = dict(db.execute("SELECT span, crc FROM episode_sums WHERE part = ?", (part,)).fetchall())
        for span, start, end in _spans(columns[0]):
            if sums.pop(span, None) != crc([column[start:end] for column in columns]):
                raise Damaged(part, span)
    except (sqlite3.OperationalError, TypeError, ValueError, OverflowError, UnicodeError) as exc:
        raise Damaged(part) from exc  # no sums table (an older Lamar's), or a value of another type
    if sums:
        raise Damaged(part, sorted(sums))  # a span whose rows are gone


def check_through(db: sqlite3.Connection, value: str, part: str = THROUGH) -> None:
    try:
        row = db.execute("SELECT crc FROM episode_sums WHERE part = ? AND span = 0", (part,)).fetchone()
    except sqlite3.OperationalError as exc:
        raise Damaged(part) from exc
    if row is None or row[0] != zlib.crc32(value.encode("utf-8", "surrogatepass")):
        raise Damaged(part)


def set_through(db: sqlite3.Connection, meta_key: str, value: str) -> None:
    """Write the seq the table folds through (or "stale") and its sum, in the caller's transaction;
    for a seq, also where the table was summed (`summed`): there, and its last slate."""
    db.execute(SCHEMA)
    marks = [(meta_key, THROUGH, value)]
    if value.isdigit():
        top = db.execute("SELECT max(slate) FROM episode_slates").fetchone()[0] or 0
        marks.append((SUMMED_KEY, SUMMED, f"{value} {top}"))
    else:
        db.execute("DELETE FROM meta WHERE key = ?", (SUMMED_KEY,))
        db.execute("DELETE FROM episode_sums WHERE part = ?", (SUMMED,))
    for key, part, text in marks:
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, text))
        db.execute("INSERT OR REPLACE INTO episode_sums VALUES (?, 0, ?)",
                   (part, zlib.crc32(text.encode("utf-8", "surrogatepass"))))


def summed(db: sqlite3.Connection) -> tuple[int, int] | None:
    """(seq, last slate number) as of the last write that summed the table, when its sum holds."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (SUMMED_KEY,)).fetchone()
        check_through(db, row[0], SUMMED)
        seq, top = row[0].split(" ")
        return int(seq), int(top)
    except (sqlite3.Error, Damaged, TypeError, ValueError, AttributeError, UnicodeError):
        return None  # no mark (a table summed before it was kept), or one that fails its sum


class Spans:
    """The spans one write transaction changes: each checked against its sum before its first
    change (so a damaged span is never summed again as if whole), all summed again at the end."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.changed: dict[str, set[int]] = {ROWS: set(), SLATES: set()}

    def touch(self, part: str, key: int) -> None:
        span = key // SPAN
        if span not in self.changed[part]:
            if self._stored(part, span) != self._summed(part, span):
                raise Damaged(part, span)
            self.changed[part].add(span)

    def forget_rows(self) -> None:
        """Every row is being deleted (a snapshot): their spans are summed again, unchecked."""
        self.changed[ROWS].update(span for (span,) in self.db.execute(
            "SELECT span FROM episode_sums WHERE part = ?", (ROWS,)))

    def save(self) -> None:
        for part, spans in self.changed.items():
            for span in spans:
                crc = self._summed(part, span)
                if crc is None:
                    self.db.execute("DELETE FROM episode_sums WHERE part = ? AND span = ?", (part, span))
                else:
                    self.db.execute("INSERT OR REPLACE INTO episode_sums VALUES (?, ?, ?)", (part, span, crc))
            spans.clear()

    def _stored(self, part: str, span: int) -> object:
        row = self.db.execute("SELECT crc FROM episode_sums WHERE part = ? AND span = ?", (part, span)).fetchone()
        return None if row is None else row[0]  # as stored: a sum that is not a number fails `touch`

    def _summed(self, part: str, span: int) -> int | None:
        if part == ROWS:
            query, crc = f"SELECT {ROW_COLUMNS} FROM episode_rows WHERE seq >= ? AND seq < ? ORDER BY seq", rows_crc
        else:
            query = "SELECT slate, body FROM episode_slates WHERE slate >= ? AND slate < ? ORDER BY slate"
            crc = slates_crc
        try:
            rows = self.db.execute(query, (span * SPAN, (span + 1) * SPAN)).fetchall()
            return crc([list(column) for column in zip(*rows)]) if rows else None
        except (sqlite3.DatabaseError, TypeError, ValueError, OverflowError, UnicodeError) as exc:  # a text not UTF-8
            raise Damaged(part, span) from exc
