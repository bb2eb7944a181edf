"""A human-readable JSON file: one event per line, rewritten atomically on every write.

Durability, step by step: the new contents go to a temp file in the same folder, which is
flushed and fsync'ed before `os.replace` swaps it in (atomic on POSIX), and the folder is
fsync'ed so the rename itself survives a crash. An exclusive `flock` on a sidecar
`.lock` file serializes read-modify-write across processes. Readers take no lock: they
only ever see a whole old file or a whole new one.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from lamar._errors import CorruptStore, EventConflict, StoreError
from lamar.store.base import Event, check_appendable

FORMAT = "lamar"
VERSION = 1


class JsonStore:
    """Events in a JSON file that a person can read and diff.

    Best for small stores (a rewrite costs O(file size)); use SQLite past ~10 000 episodes.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._thread_lock = threading.Lock()
        self._events: list[Event] = []
        self._lines: list[str] = []
        self._keys: set[str] = set()
        self._stamp: tuple[int, int, int] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder for {self.path}: {exc}") from exc
        with self._thread_lock:
            self._refresh()

    # -- reading ---------------------------------------------------------------------------

    def _refresh(self) -> None:
        """Reload the file if another writer replaced it since we last looked."""
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
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CorruptStore(f"cannot read {self.path}: {exc}; the file was left untouched") from exc
        events = _parse(text, self.path)
        self._events = events
        self._lines = [_line(e) for e in events]
        self._keys = {e.key for e in events if e.key is not None}
        self._stamp = stamp

    def read(self, after: int = 0) -> list[Event]:
        with self._thread_lock:
            self._refresh()
            start = self._events[0].seq - 1 if self._events else 0  # > 0 after a rewrite
            return self._events[max(0, after - start):]

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
                yield
            finally:
                os.close(fd)  # closing releases the flock

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
            lines = self._lines + [_line(e) for e in stored]
            self._write(lines)
            self._events.extend(stored)
            self._lines = lines
            self._keys.update(keys)
            return stored

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
            lines = [_line(head)] + self._lines[cut:]
            self._write(lines)
            self._events = [head] + events[cut:]
            self._lines = lines
            self._keys = {e.key for e in self._events if e.key is not None}
            return True

    def _write(self, lines: list[str]) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        body = '{"format": "lamar", "version": 1, "events": [\n' + ",\n".join(lines) + "\n]}\n"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(body)
                fh.flush()  # Python's buffer -> the OS
                os.fsync(fh.fileno())  # the OS -> the disk, before the rename makes it visible
            os.replace(tmp, self.path)  # atomic: readers see the old file or the new one
            dir_fd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)  # make the rename itself durable
            finally:
                os.close(dir_fd)
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

    def close(self) -> None:
        pass


def _line(event: Event) -> str:
    return json.dumps(event.to_dict(), ensure_ascii=False, sort_keys=False)


def _parse(text: str, path: Path) -> list[Event]:
    if not text.strip():
        raise CorruptStore(f"{path} is empty, not a Lamar store; it was left untouched (move it away to start afresh)")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptStore(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}); it was left untouched. "
            "Restore it from a backup or move it away to start a new store."
        ) from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT or not isinstance(raw.get("events"), list):
        raise CorruptStore(f"{path} is JSON but not a Lamar store (no 'format': 'lamar' with 'events'); left untouched")
    if raw.get("version") != VERSION:
        raise CorruptStore(f"{path} has store version {raw.get('version')!r}; this Lamar reads version {VERSION}")
    events: list[Event] = []
    for i, item in enumerate(raw["events"]):
        try:
            event = Event.from_dict(item)
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptStore(f"{path}: event #{i + 1} is malformed ({exc}); the file was left untouched") from exc
        # seqs count up from 1, or from a snapshot that replaced the events before it
        first = events[0].seq if events else (event.seq if event.kind == "snapshot" else 1)
        if event.seq != first + i:
            raise CorruptStore(f"{path}: event #{i + 1} has seq {event.seq}; the file was left untouched")
        events.append(event)
    return events
