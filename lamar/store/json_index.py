"""The JSON store's key and line index: a cache beside the file (`<file>.index`), never the truth."""

from __future__ import annotations

import dataclasses
import json
import os
import zlib
from array import array
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, BinaryIO

from lamar._errors import CorruptStore
from lamar.store.files import create_like, open_regular

if TYPE_CHECKING:
    from pathlib import Path

FORMAT = "lamar-index"
VERSION = 1
STEP = 64  # an offset is kept for every STEP-th event line: read(after) parses at most STEP lines too many
_SHIFT = 40  # an entry is (24-bit hash of the key) << 40 | the line's byte offset (files under 1 TiB)


def key_hash(key: str) -> int:
    """24 bits of a key's CRC-32: entries stay one 64-bit integer each; a hash shared by two keys
    costs one extra line read (the key on the line is compared)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) & 0xFFFFFF


# With it, opening a JSON store reads only the lines past what the index covers, `read(after)`
# seeks to the line it needs, and `lookup(keys)` reads only the lines holding those keys. It is
# trusted only while it provably describes the file: its own checksum (torn or edited), its
# format version, the file's header line (a rewrite swaps in a new generation), the file's
# length (at least what it covers; exactly, with the same modification time, when nothing was
# appended since), and its last covered line, read back from the file (checksum and seq).
# Anything else, or no index at all, and the store parses the whole file; deleting the index
# loses nothing. Only writers save it, under the writers' lock, so a reader needs no write
# access. An index of the file's own generation that indexed more events than the file holds
# means the file lost events: that is refused (`load`). Not noticed by the index: an edit inside
# the covered lines that keeps their total length and the last of them, made after lines were
# appended past the index (each line's own checksum is what catches that).


@dataclasses.dataclass
class Index:
    """Where the covered event lines are: `lines` of them, in the bytes before `covered`."""

    covered: int  # bytes of the file (header included) that the index covers: whole lines
    lines: int = 0  # event lines covered (seq of line i = the first seq + i)
    entries: array[int] = dataclasses.field(default_factory=lambda: array("Q"))  # sorted
    marks: array[int] = dataclasses.field(default_factory=lambda: array("Q"))  # offset of line i * STEP
    last: int = 0  # offset of the last covered line

    def candidates(self, key: str) -> list[int]:
        """Offsets of the covered lines whose key may be `key` (the line itself says)."""
        h = key_hash(key)
        i = bisect_left(self.entries, h << _SHIFT)
        found = []
        while i < len(self.entries) and self.entries[i] >> _SHIFT == h:
            found.append(self.entries[i] & ((1 << _SHIFT) - 1))
            i += 1
        return found

    def extended(self, keyed: list[tuple[str, int]], offsets: list[int], end: int) -> Index:
        """This index and the lines after it: `offsets` of every new line, `keyed` (key, offset)
        of those with a key; `end` the byte after the last new line."""
        entries = self.entries.tolist()
        entries.extend(key_hash(key) << _SHIFT | offset for key, offset in keyed)
        entries.sort()  # two sorted runs: timsort merges them in one pass
        marks = array("Q", self.marks)
        marks.extend(offsets[(-self.lines) % STEP::STEP])
        return Index(covered=end, lines=self.lines + len(offsets), entries=array("Q", entries), marks=marks,
                     last=offsets[-1] if offsets else self.last)


def index_path(path: Path) -> Path:
    return path.with_name(path.name + ".index")


def save(path: Path, index: Index, header: bytes, first: int, st: os.stat_result) -> None:
    """Write the index of `path` (whose header line is `header`, first seq `first`, stat `st`).

    Raises OSError; the caller keeps going without it (a cache). Not fsynced: a torn index
    fails its checksum and the file is parsed instead.
    """
    with open(path, "rb") as fh:
        fh.seek(index.last)
        last_line = fh.read(index.covered - index.last)
    body = index.entries.tobytes() + index.marks.tobytes()
    meta = {"format": FORMAT, "version": VERSION, "header": _crc(header), "covered": index.covered,
            "lines": index.lines, "first": first, "last": index.last, "last_crc": _crc(last_line),
            "size": st.st_size, "mtime": st.st_mtime_ns, "entries": len(index.entries),
            "marks": len(index.marks), "body": _crc(body)}
    target = index_path(path)
    tmp = target.with_name(f".{path.name}.index.{os.getpid()}.tmp")  # removed by the next writer if we die
    try:
        with os.fdopen(create_like(tmp, path), "wb") as out:
            out.write(json.dumps(meta).encode("ascii") + b"\n" + body)
        os.replace(tmp, target)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def load(path: Path, fh: BinaryIO, header: bytes, st: os.stat_result) -> tuple[Index, int] | None:
    """The index of `path` and the first seq, if it still describes the file open as `fh`; else None."""
    try:
        with open_regular(index_path(path)) as src:
            raw = src.read()
    except OSError:
        return None
    first_line, newline, body = raw.partition(b"\n")
    try:
        meta = json.loads(first_line) if newline else None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") != VERSION:
            return None
        covered, last, lines, first = (int(meta[name]) for name in ("covered", "last", "lines", "first"))
        n_entries, n_marks = int(meta["entries"]), int(meta["marks"])
        if len(body) != 8 * (n_entries + n_marks) or meta["body"] != _crc(body) or meta["header"] != _crc(header):
            return None
        # An index of this very file (its generation, intact) saved when the file was longer. Asked
        # of the open file, not `st`: a writer may have appended since, and saved this index.
        size = os.fstat(fh.fileno()).st_size
        if size < int(meta["size"]):
            held = _lines_held(fh, body[8 * n_entries:], first, size)
            if held is not None and held < lines:
                raise CorruptStore(
                    f"{path} holds {held} of the {lines} events {index_path(path).name} beside it indexed: it was "
                    "cut short (a copy, a restore, a full disk) and lost events; it was left untouched. Restore "
                    f"it from a backup; if you shortened it on purpose, delete {index_path(path).name} and "
                    f"{path.name}.state beside it")
        if (not len(header) <= last < covered <= st.st_size
                or (st.st_size == meta["size"] and st.st_mtime_ns != meta["mtime"]) or st.st_size < meta["size"]):
            return None
        fh.seek(last)
        last_line = fh.read(covered - last)
        if _crc(last_line) != meta["last_crc"] or not last_line.endswith(b"\n") \
                or json.loads(last_line).get("seq") != first + lines - 1:
            return None
    except CorruptStore:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, OSError):
        return None
    entries, marks = array("Q"), array("Q")
    entries.frombytes(body[:8 * n_entries])
    marks.frombytes(body[8 * n_entries:])
    if len(marks) != (lines + STEP - 1) // STEP:
        return None
    return Index(covered=covered, lines=lines, entries=entries, marks=marks, last=last), first


def _lines_held(fh: BinaryIO, marks_raw: bytes, first: int, size: int) -> int | None:
    """How many event lines the file still holds, where it is a prefix of what the index describes
    (the last mark before its end still starts the line the index says); None where it is not
    (edited by hand inside the indexed lines, which moved them: the index is not used)."""
    marks = array("Q")
    marks.frombytes(marks_raw)
    i = bisect_right(marks, size - 1) - 1
    if i < 0:
        return 0
    fh.seek(marks[i] - 1)
    tail = fh.read(size - marks[i] + 1)
    line = tail[1:tail.find(b"\n", 1) + 1]
    try:
        if tail[:1] != b"\n" or json.loads(line).get("seq") != first + i * STEP:
            return None
    except (ValueError, AttributeError):
        return None
    return i * STEP + tail.count(b"\n") - 1


def _crc(data: bytes) -> str:
    return f"{zlib.crc32(data):08x}{len(data):x}"


__all__ = ["STEP", "Index", "index_path", "key_hash", "load", "save"]
