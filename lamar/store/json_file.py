"""A human-readable JSON file: a header line, then one event per line, appended.

Durability, step by step: a write appends whole lines with one `write` on a descriptor
opened for appending and fsyncs it before returning, so an acknowledged event is on disk;
before it appends, a writer notes in the lock file where its lines start, and clears the
note once they are on disk: a last line without its newline at that noted place is a write
in progress or a killed writer's (readers ignore it, the next writer cuts it off); anywhere
else it is a torn file (truncated, power cut) and opening it is a `CorruptStore` error. An exclusive
`flock` on a sidecar `.lock` file serializes writers across processes; readers take no
lock. Rewrites (a checkpoint, the migration of a version-1 file) go through a temp file in
the same folder, fsynced, swapped in with `os.replace` (atomic on POSIX), the folder
fsynced; temp files left by killed writers are removed by the next writer.
"""

from __future__ import annotations

import _thread
import dataclasses
import fcntl
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from lamar._errors import CorruptStore, EventConflict, StoreError
from lamar.store.base import Event, check_appendable

if TYPE_CHECKING:
    from pathlib import Path

FORMAT = "lamar"
VERSION = 2
_NOTE = 20  # bytes of the lock file that note where a write in progress starts


class JsonStore:
    """Events in a JSON Lines file that a person can read, diff and edit.

    A write appends one line per event (its cost does not grow with the file); opening
    parses the whole file, so SQLite suits stores of many thousands of episodes better.
    Version-1 files (one JSON document) are read as they are and rewritten as lines by
    the first write.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        from pathlib import Path  # on first open, not with `import lamar`

        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._state_path = self.path.with_name(self.path.name + ".state")
        self._thread_lock = _thread.allocate_lock()  # threading's Lock, without importing threading
        self._events: list[Event] = []
        self._keys: dict[str, Event] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._offset = 0  # bytes of whole lines parsed so far
        self._line_count = 0
        self._lock_fd = -1
        self._header = b""
        self._version = VERSION
        if not self.path.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        with self._thread_lock:
            self._refresh()

    # -- reading ---------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Parse what other writers appended since we last looked (or the whole file if it was replaced)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._stamp is not None:
                raise StoreError(f"{self.path} was deleted while open") from None
            return
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from exc
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp == self._stamp:
            return
        grown = (self._stamp is not None and self._version == VERSION and st.st_ino == self._stamp[0]
                 and st.st_size > self._offset and self._offset > 0)
        try:
            with open(self.path, "rb") as fh:
                # The header names the file's generation: a rewrite swaps in a new file, whose
                # inode number may be the old one's, reused.
                if grown and fh.read(len(self._header)) == self._header:
                    fh.seek(self._offset)
                else:
                    grown = False
                    fh.seek(0)
                raw = fh.read()
        except OSError as exc:
            raise CorruptStore(f"cannot read {self.path}: {exc}; the file was left untouched") from exc
        if grown:
            events, used = _parse_lines(raw, self.path, self._events[-1].seq + 1 if self._events else 1,
                                        first_line=self._line_count)
            start = self._offset
        else:
            version, events, used = _parse(raw, self.path)
            self._header = raw[:raw.find(b"\n") + 1] if version == VERSION else b""
            start = 0
        if used < len(raw) and self._pending() != start + used:
            raise CorruptStore(
                f"{self.path}: its last line is incomplete (the file was cut short: a copy, a power cut); "
                f"it was left untouched. Restore it from a backup, or delete that line to keep the rest."
            )
        if grown:
            self._add(events)
        else:
            self._events, self._keys, self._version = [], {}, version
            self._add(events)
        self._offset = start + used
        self._line_count = (self._line_count if grown else 0) + raw.count(b"\n", 0, used)
        self._stamp = stamp

    def _pending(self) -> int | None:
        """Where the lines of a write in progress (or of a killed writer) start, as noted in the lock file."""
        try:
            with open(self._lock_path, "rb") as fh:
                note = fh.read(_NOTE)
            return int(note) if note.strip() else None
        except (OSError, ValueError):
            return None

    def _add(self, events: list[Event]) -> None:
        for event in events:
            if event.key is not None:
                if event.key in self._keys:
                    raise CorruptStore(f"{self.path}: event {event.seq} repeats the key {event.key!r}; "
                                       "the file was left untouched (was it edited by hand?)")
                self._keys[event.key] = event
        self._events.extend(events)

    def read(self, after: int = 0) -> list[Event]:
        with self._thread_lock:
            self._refresh()
            start = self._events[0].seq - 1 if self._events else 0  # > 0 after a rewrite
            return self._events[max(0, after - start):]

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        with self._thread_lock:
            self._refresh()
            found = [self._keys.get(key) for key in keys]
        return sorted((e for e in found if e is not None), key=lambda e: e.seq)

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        with self._thread_lock:
            try:
                fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise StoreError(f"cannot lock {self.path} (via {self._lock_path}): {exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                self._lock_fd = fd
                self._remove_stale_temps()
                yield
            finally:
                self._lock_fd = -1
                os.close(fd)  # closing releases the flock

    def _remove_stale_temps(self) -> None:
        """Temp files of writers killed mid-rewrite: only the lock holder writes one, and that is us."""
        prefix = f".{self.path.name}."
        try:
            names = os.listdir(self.path.parent)
        except OSError:
            return
        for name in names:
            if name.startswith(prefix) and name.endswith(".tmp"):
                try:
                    os.unlink(self.path.parent / name)
                except OSError:
                    pass

    def append(self, events: Sequence[Event]) -> list[Event]:
        check_appendable(events)  # before any lock or transaction: a refusal leaves nothing behind
        with self._exclusive():
            self._refresh()
            keys = [e.key for e in events if e.key is not None]
            clash = next((k for k in keys if k in self._keys), None)
            if clash is not None or len(set(keys)) != len(keys):
                raise EventConflict(f"event key {clash!r} is already in {self.path}")
            base = self._events[-1].seq if self._events else 0
            stored = [dataclasses.replace(e, seq=base + i + 1) for i, e in enumerate(events)]
            if self._version != VERSION or self._stamp is None:
                # A new file, or a version-1 file: write it whole, as lines, once.
                self._write([*self._events, *stored])
            else:
                self._append_lines(stored)
            self._add(stored)
            return stored

    def _append_lines(self, stored: list[Event]) -> None:
        body = _encode("".join(_line(e) + "\n" for e in stored), self.path)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise StoreError(f"could not write {self.path}: {exc.strerror or exc}; its previous contents are intact") from exc
        try:
            size = os.fstat(fd).st_size
            if size != self._offset:
                os.truncate(self.path, self._offset)  # a killed writer's line (_refresh checked the note)
            try:
                os.pwrite(self._lock_fd, f"{self._offset:>{_NOTE}}".encode(), 0)  # a write starts here
                written = os.write(fd, body)
                if written != len(body):
                    raise OSError(28, "No space left on device (short write)")
                os.fsync(fd)  # the OS -> the disk, before the write is acknowledged
                os.pwrite(self._lock_fd, b" " * _NOTE, 0)  # done: no write in progress
            except OSError as exc:
                try:
                    os.truncate(self.path, self._offset)  # take the partial line back
                except OSError:
                    pass  # if even that fails, readers ignore a line without its newline
                raise StoreError(
                    f"could not write {self.path}: {exc.strerror or exc}; its previous contents are intact"
                ) from exc
        finally:
            os.close(fd)
        self._offset += len(body)
        self._line_count += len(stored)
        st = os.stat(self.path)
        self._stamp = (st.st_ino, st.st_size, st.st_mtime_ns)

    def rewrite(self, through: int, snapshot: Event) -> bool:
        with self._exclusive():
            self._refresh()
            events = self._events
            last = events[-1].seq if events else 0
            if through > last or through < 1:
                raise ValueError(f"cannot rewrite {self.path} through seq {through}: it holds seqs 1..{last}")
            if events[0].kind == "snapshot" and events[0].seq >= through:
                return False
            cut = through - (events[0].seq - 1)
            head = dataclasses.replace(snapshot, seq=through, key=None)
            kept = [head, *events[cut:]]
            self._write(kept)
            self._events, self._keys = [], {}
            self._add(kept)
            return True

    def _write(self, events: list[Event]) -> None:
        """Replace the whole file (atomically) by these events, as lines."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        header = json.dumps({"format": FORMAT, "version": VERSION, "generation": os.urandom(6).hex()}) + "\n"
        body = _encode(header + "".join(_line(e) + "\n" for e in events), self.path)
        try:
            with open(tmp, "wb") as fh:
                fh.write(body)
                fh.flush()  # Python's buffer -> the OS
                os.fsync(fh.fileno())  # the OS -> the disk, before the rename makes it visible
            os.replace(tmp, self.path)  # atomic: readers see the old file or the new one
            _fsync_folder(self.path.parent)  # make the rename itself durable
        except OSError as exc:
            try:
                tmp.unlink()
            except OSError:
                pass
            raise StoreError(
                f"could not write {self.path}: {exc.strerror or exc}; its previous contents are intact"
            ) from exc
        st = os.stat(self.path)
        self._stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        self._offset = len(body)
        self._line_count = len(events) + 1
        self._version = VERSION
        self._header = body[:body.find(b"\n") + 1]

    # -- the engine's saved state (a cache beside the file: see Lamar._resume) ---------------

    def load_state(self) -> str | None:
        try:
            return self._state_path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            return None

    def save_state(self, seq: int, text: str) -> None:
        tmp = self._state_path.with_name(f".{self.path.name}.state.{os.getpid()}.tmp")
        with self._thread_lock:
            try:
                fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise StoreError(f"could not save the engine's state beside {self.path}: {exc}") from exc
            try:
                # Under the writers' lock (the next writer removes temp files it does not own),
                # but never waiting for it: the state is a cache, a later write saves it.
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                with open(tmp, "w", encoding="ascii") as fh:
                    fh.write(text)  # not fsynced: a torn state fails its checksum and the log is replayed
                os.replace(tmp, self._state_path)
            except (OSError, UnicodeEncodeError) as exc:
                try:
                    tmp.unlink()
                except OSError:
                    pass
                raise StoreError(f"could not save the engine's state beside {self.path}: {exc}") from exc
            finally:
                os.close(fd)

    def close(self) -> None:
        pass


def _encode(text: str, path: Path) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise StoreError(f"cannot write to {path}: the text holds a character UTF-8 cannot store ({exc.reason}); "
                         "nothing was written") from exc


def _fsync_folder(folder: Path) -> None:
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _line(event: Event) -> str:
    return json.dumps(event.to_dict(), ensure_ascii=False, sort_keys=False)


def _parse(raw: bytes, path: Path) -> tuple[int, list[Event], int]:
    """(version, events, bytes used) of a whole file, of either version."""
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
        events, used = _parse_lines(raw[len(first) + 1:], path, None, first_line=1)
        return VERSION, events, len(first) + 1 + used
    return 1, _parse_v1(raw, path), len(raw)


def _parse_lines(raw: bytes, path: Path, expect: int | None, *, first_line: int) -> tuple[list[Event], int]:
    """Events of whole lines (a last line without its newline is a write in progress or torn: left out)."""
    end = raw.rfind(b"\n") + 1
    events: list[Event] = []
    for number, line in enumerate(raw[:end].splitlines(), start=first_line + 1):
        try:
            event = Event.from_dict(json.loads(line))
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptStore(f"{path}: line {number} is not a valid event ({exc}); the file was left untouched. "
                               "Fix or delete that line, or restore the file from a backup.") from exc
        if expect is None:  # seqs count up from 1, or from a snapshot that replaced the events before it
            expect = event.seq if event.kind == "snapshot" else 1
        if event.seq != expect:
            raise CorruptStore(f"{path}: line {number} has seq {event.seq}, expected {expect}; "
                               "the file was left untouched")
        expect += 1
        events.append(event)
    return events, end


def _parse_v1(raw: bytes, path: Path) -> list[Event]:
    try:
        doc = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f" ({exc.msg} at line {exc.lineno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise CorruptStore(
            f"{path} is not valid JSON{where}; it was left untouched. "
            "Restore it from a backup or move it away to start a new store."
        ) from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("events"), list):
        raise CorruptStore(f"{path} is JSON but not a Lamar store (no 'format': 'lamar' with 'events'); left untouched")
    if doc.get("version") != 1:
        raise CorruptStore(f"{path} has store version {doc.get('version')!r}; this Lamar reads versions 1 and {VERSION}")
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


def _register() -> None:
    from lamar.store import ExperienceStore

    ExperienceStore.register(JsonStore)


_register()
