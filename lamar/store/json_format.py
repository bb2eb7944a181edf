"""The JSON store's file format: a header line, then one event per line, each ending in its
checksum; version-1 files are one document. Encoding and parsing only (`json_file` writes)."""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lamar._errors import CorruptStore, StoreError
from lamar.store.base import EVENT_KINDS, NESTED, Event, UnknownKind, stored_problem
from lamar.store.decode import SPACED, EventDecoder, no_cycle_collection
from lamar.store.files import head_kind

if TYPE_CHECKING:
    from pathlib import Path

FORMAT = "lamar"
VERSION = 2
# A line ends in `, "crc": "<8 hex digits>"}`: the CRC-32 of its bytes before that field. A line
# without one (written before checksums, or edited by hand, its checksum deleted) is read as it is.
_CRC_FIELD = b', "crc": "'
_CRC_TAIL = len(_CRC_FIELD) + 10  # the field, 8 hex digits, '"}'
_HEX = frozenset(b"0123456789abcdef")


def encode(text: str, path: Path) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(f"cannot write to {path}: the text holds a character UTF-8 cannot store ({exc.reason}); "
                         "nothing was written") from exc


def _line(event: Event, path: Path) -> bytes:
    """An event's line, its checksum last, with its newline."""
    head = encode(json.dumps(event.to_dict(), ensure_ascii=False, sort_keys=False), path)[:-1]
    return b'%s%s%08x"}\n' % (head, _CRC_FIELD, zlib.crc32(head))


def checked(line: bytes) -> bool | None:
    """Whether a line's checksum matches its bytes; None when it carries none."""
    if len(line) <= _CRC_TAIL or line[-_CRC_TAIL:-10] != _CRC_FIELD or line[-2:] != b'"}' \
            or not _HEX.issuperset(line[-10:-2]):
        return None
    return zlib.crc32(line[:-_CRC_TAIL]) == int(line[-10:-2], 16)


# A line as `_line` writes it, up to its data: seq, kind, time (JSON's number grammar, which
# float() reads as json does) and a key with nothing escaped in it.
_HEAD = re.compile(r'\{"seq": (0|[1-9][0-9]*), "kind": "([a-z]+)", '
                   r'"time": (-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)'
                   r'(?:, "key": "([^"\\\x00-\x1f]*)")?, "data": ')


class LineDecoder:
    """`event_of` for the lines of one read: a line spelt as `_line` writes it has its data
    decoded by an `EventDecoder` (once per distinct text, its id aside) and its other members
    read off the line; any other line is decoded whole. Either way the event is the one
    `json.loads` of the line gives."""

    def __init__(self) -> None:
        self._data = EventDecoder(SPACED)

    def __call__(self, line: bytes) -> Event:
        """Raises:
            ValueError, KeyError, TypeError: saying what is wrong."""
        try:
            return self._decoded(line)
        except RecursionError:  # the decoder's, or a check's that walks the data: a line crafted or damaged
            raise ValueError(NESTED) from None

    def _decoded(self, line: bytes) -> Event:
        verdict = checked(line)
        if verdict is False:
            raise ValueError('it fails its checksum: it was changed since it was written (a damaged file, or edited '
                             'by hand: after a deliberate edit, delete the line\'s "crc" field)')
        text = line.decode("utf-8")
        head = _HEAD.match(text)
        if head is not None and head[2] not in EVENT_KINDS:
            raise UnknownKind(head[2])
        event = None
        if head is not None and head[2] in EVENT_KINDS and text.endswith("}"):
            # Between the head and the line's tail (the checksum field, or the closing brace)
            # lies the data: when that parses as one value, the line is exactly the object read
            # off it; when not, decoding the line whole says what is wrong with it.
            end = len(text) - (_CRC_TAIL if verdict else 1)
            try:
                data = self._data(head[2], text[head.end():end])
            except ValueError:
                data = None
            if isinstance(data, dict):
                event = Event.stored(int(head[1]), head[2], head[4], float(head[3]), data)
        if event is None:
            event = Event.from_dict(json.loads(text))
        problem = stored_problem(event)
        if problem is not None:
            raise ValueError(f"it {problem}")
        return event


def event_of(line: bytes) -> Event:
    """The event on a line, checked: its checksum, its form, and what it holds.

    Raises:
        ValueError, KeyError, TypeError: saying what is wrong.
    """
    return LineDecoder()(line)


def event_at(line: bytes, place: str, advice: str) -> Event:
    """The event on a line (`event_of`), refused as `CorruptStore` naming `place`, with `advice`
    unless a newer Lamar wrote it (then the advice is to upgrade)."""
    try:
        return event_of(line)
    except UnknownKind as exc:
        raise exc.at(place) from None
    except (KeyError, TypeError, ValueError) as exc:
        raise CorruptStore(f"{place} is not a valid event ({exc}); {advice}") from exc


def lines_of(events: Sequence[Event], at: int, path: Path) -> tuple[bytes, list[int]]:
    """The events as lines, written from byte `at` of the file, and where each line starts."""
    lines = [_line(e, path) for e in events]
    offsets = []
    for line in lines:
        offsets.append(at)
        at += len(line)
    return b"".join(lines), offsets


def not_begun(path: Path) -> bool:
    """Whether `path` is an empty file that no sidecar says held events: no store yet, as an empty SQLite file
    is (`tempfile.NamedTemporaryFile` leaves one). Beside its `.index` or `.state` it is a store cut short."""
    try:
        if path.stat().st_size:
            return False
    except OSError:
        return False
    return not any(path.with_name(path.name + sidecar).exists() for sidecar in (".index", ".state"))


def parse(raw: bytes, path: Path) -> tuple[int, list[Event], list[int], int]:
    """(version, events, their offsets, bytes used) of a whole file, of either version."""
    if not raw.strip():
        raise CorruptStore(f"{path} is empty, not a Lamar store; it was left untouched (move it away to start afresh)")
    first, newline, _ = raw.partition(b"\n")
    try:
        header = json.loads(first) if newline else None
    except ValueError:
        header = None
    if isinstance(header, dict) and header.get("format") == FORMAT and "events" not in header:
        if header.get("version") != VERSION:
            raise CorruptStore(f"{path} has store version {header.get('version')!r}; this Lamar reads "
                               f"versions 1 and {VERSION}: upgrade lamar")
        start = len(first) + 1
        events, offsets, used = parse_lines(raw[start:], path, None, first_line=1, at=start)
        return VERSION, events, offsets, start + used
    events = _parse_v1(raw, path)
    return 1, events, [0] * len(events), len(raw)


def parse_lines(raw: bytes, path: Path, expect: int | None, *, first_line: int,
                 at: int) -> tuple[list[Event], list[int], int]:
    """Events of whole lines, their offsets (`raw` starts at byte `at` of the file), bytes used.

    A last line without its newline is a write in progress or torn: left out. `first_line`
    is how many lines of the file come before `raw` (for messages).
    """
    end = raw.rfind(b"\n") + 1
    events: list[Event] = []
    offsets: list[int] = []
    pos = at
    event_of = LineDecoder()
    with no_cycle_collection():
        for number, line in enumerate(raw[:end].split(b"\n")[:-1], start=first_line + 1):
            try:
                event = event_of(line)
            except UnknownKind as exc:
                raise exc.at(f"{path}: line {number}") from None
            except (KeyError, TypeError, ValueError) as exc:
                raise _not_utf8(line, path, at=pos, line=number) or CorruptStore(
                    f"{path}: line {number} is not a valid event ({exc}); the file was left untouched. "
                    "Fix that line, or restore the file from a backup.") from exc
            if expect is None:  # seqs count up from 1, or from a snapshot that replaced the events before it
                expect = event.seq if event.kind == "snapshot" else 1
            if event.seq != expect:
                raise CorruptStore(f"{path}: line {number} has seq {event.seq}, expected {expect}; "
                                   "the file was left untouched")
            expect += 1
            events.append(event)
            offsets.append(pos)
            pos += len(line) + 1
    return events, offsets, end


def _parse_v1(raw: bytes, path: Path) -> list[Event]:
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        if head_kind(raw) == "sqlite":  # a .db store copied or renamed to .json
            raise CorruptStore(
                f"{path} is an SQLite database, not JSON; it was left untouched: if it is a Lamar store, open it "
                "by a .db path (rename it), or copy it into JSON with `lamar export`") from exc
        if isinstance(exc, UnicodeDecodeError) and (wrong := _not_utf8(raw, path)):
            raise wrong from exc
        if _json_lines(raw):  # another JSON Lines file (sleep traces, a log): nothing to restore
            raise CorruptStore(
                f"{path} holds JSON lines but is not a Lamar store: its first line is not the header "
                f"{{\"format\": \"lamar\", \"version\": {VERSION}}}; it was left untouched. Is it a trace "
                "file? Give the store another path.") from exc
        where = f" ({exc.msg} at line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise CorruptStore(
            f"{path} is not valid JSON{where}; it was left untouched. "
            "Restore it from a backup or move it away to start a new store."
        ) from exc
    if isinstance(doc, dict) and doc.get("format") == "lamar-sleep-report":  # `--store report.json`, a slip
        raise CorruptStore(f"{path} is a sleep report, not a store; left untouched: review and apply it with "
                           f"`lamar review {path}` and `lamar apply {path}`, and name the store the report was made "
                           "from with --store (or LAMAR_STORE)")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("events"), list):
        raise CorruptStore(f"{path} is JSON but not a Lamar store (no 'format': 'lamar' with 'events'); left untouched")
    if doc.get("version") != 1:
        raise CorruptStore(f"{path} has store version {doc.get('version')!r}; "
                           f"this Lamar reads versions 1 and {VERSION}")
    events: list[Event] = []
    for i, item in enumerate(doc["events"]):
        try:
            event = Event.from_dict(item)
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptStore(f"{path}: event #{i + 1} is malformed ({exc}); the file was left untouched") from exc
        first = events[0].seq if events else (event.seq if event.kind == "snapshot" else 1)
        if event.seq != first + i:
            raise CorruptStore(f"{path}: event #{i + 1} has seq {event.seq}; the file was left untouched")
        events.append(event)
    return events


def _not_utf8(raw: bytes, path: Path, *, at: int = 0, line: int = 1) -> CorruptStore | None:
    """The error for bytes of the file that are not UTF-8, or None when they are. `raw` starts at
    byte `at` of the file, on its line `line`."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line += raw.count(b"\n", 0, exc.start)
        return CorruptStore(
            f"{path} is not UTF-8 text: byte {at + exc.start} (line {line}) is 0x{raw[exc.start]:02x}; it was left "
            "untouched. A store is UTF-8: if the file was saved in another encoding (latin-1, cp1252), open it "
            "in that encoding and save it again as UTF-8; else restore it from a backup.")
    return None


def _json_lines(raw: bytes) -> bool:
    """Whether the file's first two lines are each a JSON object (a JSON Lines file)."""
    lines = raw.split(b"\n", 2)[:2]
    try:
        return len(lines) == 2 and all(isinstance(json.loads(line), dict) for line in lines)
    except ValueError:  # UnicodeDecodeError included
        return False


__all__ = ["FORMAT", "VERSION", "LineDecoder", "checked", "encode", "event_at", "event_of", "lines_of", "parse",
           "parse_lines"]
