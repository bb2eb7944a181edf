"""The JSON store: a human-readable file of one event per line, appended, locked for writers and
indexed beside it; every step of a write says what makes it durable."""

from __future__ import annotations

import _thread
import dataclasses
import errno
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, BinaryIO

from lamar._errors import CorruptStore, EventConflict, StoreError
from lamar.store.appendable import check_appendable
from lamar.store.base import Event, closed_store, scrubbed_log
from lamar.store.file_lock import NOFOLLOW, checked_timeout, fcntl, lock_writers, needs_posix_locks
from lamar.store.files import JSON_BESIDE, create_like, gone, open_regular, prepare, write_failed
from lamar.store.held import held_conflict, held_in, proposal_ids
from lamar.store.json_format import FORMAT, VERSION, encode, event_at, lines_of, not_begun, parse, parse_lines
from lamar.store.json_index import STEP, Index
from lamar.store.json_index import load as load_index
from lamar.store.json_index import save as save_index

if TYPE_CHECKING:
    from pathlib import Path

_NOTE = 20  # bytes of the lock file that note where a write in progress starts
_STATE_SEQ = re.compile(r'\n\{"version":\d+,"seq":(\d+),')  # a saved state's seq (lamar/state/saved.py)
_INDEX_EVERY = 1024  # event lines past the index before a writer saves a new one (an open parses them)


class JsonStore:
    """Events in a JSON Lines file that a person can read, diff and edit.

    A write appends one line per event (its cost does not grow with the file). Opening
    reads only the lines past what the index beside the file covers (`json_index`), and a
    lookup by key only the lines it needs; without a valid index the whole file is parsed
    (the next write saves a new one). Version-1 files (one JSON document) are read as they
    are and rewritten as lines by the first write.

    Durability, step by step: a write appends whole lines with one `write` on a descriptor
    opened for appending and fsyncs it before returning, so an acknowledged event is on disk;
    before it appends, a writer notes in the lock file where its lines start, and clears the
    note once they are on disk: a last line without its newline at that noted place is a write
    in progress or a killed writer's (readers ignore it, the next writer cuts it off); anywhere
    else it is a torn file (truncated, power cut) and opening it is a `CorruptStore` error. An
    exclusive `flock` on a sidecar `.lock` file serializes writers across processes (a writer
    waits at most `timeout` seconds for it, `file_lock`); readers take no lock. Rewrites (a
    checkpoint, the migration of a version-1 file) go through a temp file in the same folder,
    fsynced, swapped in with `os.replace` (atomic on POSIX), the folder fsynced; temp files left
    by killed writers are removed by the next writer. Writers save the index every `_INDEX_EVERY` lines.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        from pathlib import Path  # on first open, not with `import lamar`

        needs_posix_locks(f"the JSON store {os.fspath(path)!r}")  # its writers share the file through flock
        self._timeout = checked_timeout(timeout)
        self.path = Path(path).expanduser()
        self.location = str(self.path)
        self.path = self.path.absolute()  # the same file after the process changes its working folder
        with suppress(OSError):  # a path no file can have: `prepare` says so
            if self.path.is_symlink():  # a rewrite swaps a file in at the target, not over the link,
                self.path = Path(os.path.realpath(self.path))  # and every path shares one writers' lock
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        self._state_path = self.path.with_name(self.path.name + ".state")
        self.writes_on_read = True  # False: the engine's state is never saved beside it (`lamar mcp --read-only`)
        self._thread_lock = _thread.allocate_lock()  # threading's Lock, without importing threading
        # The lines before self._index.covered are found through the index; the ones after it
        # (up to self._offset) are held here, parsed.
        self._index = Index(covered=0)
        self._first = 1  # seq of the first event line (a snapshot's after a rewrite)
        self._tail: list[Event] = []
        self._tail_offsets: list[int] = []
        self._tail_keys: dict[str, Event] = {}
        self._stamp: tuple[int, int, int] | None = None
        self._offset = 0  # bytes of whole lines parsed or indexed so far
        self._lock_fd = -1
        self._closed = False
        self._header = b""
        self._version = VERSION
        prepare(self.path, beside=JSON_BESIDE)
        # The saved state is read before the file: a state saved since describes lines this read sees.
        self._state: tuple[tuple[int, int, int], str] | None = self._read_state()
        with self._thread_lock:
            self._refresh()
        self._check_state()

    # -- reading ---------------------------------------------------------------------------

    def _clear_tail(self) -> None:
        self._tail, self._tail_offsets, self._tail_keys = [], [], {}

    def _count(self) -> int:
        return self._index.lines + len(self._tail)

    def _refresh(self) -> None:
        """Parse what other writers appended since we last looked (or load the file afresh if it was replaced)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._stamp is not None:
                raise StoreError(gone(self.path, self._stamp[0])) from None
            return
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc}") from exc
        if not stat.S_ISREG(st.st_mode):  # put in its place since it was opened: a pipe's open would wait for ever
            prepare(self.path)  # raises, naming it
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp == self._stamp or (self._stamp is None and not st.st_size and not_begun(self.path)):
            return  # unchanged, or an empty file never loaded: no store yet (the first write replaces it)
        grown = (self._stamp is not None and self._version == VERSION and st.st_ino == self._stamp[0]
                 and st.st_size > self._offset and self._offset > 0)
        try:
            with open(self.path, "rb") as fh:
                # The header names the file's generation: a rewrite swaps in a new file, whose
                # inode number may be the old one's, reused.
                if grown and fh.read(len(self._header)) == self._header:
                    fh.seek(self._offset)
                    start, raw = self._offset, fh.read()
                else:
                    self._stamp = None  # until the file is loaded whole: a failure here leaves nothing half-read
                    start, raw = self._load(fh, st)
        except CorruptStore:
            raise
        except OSError as exc:
            raise CorruptStore(f"cannot read {self.path}: {exc}; the file was left untouched") from exc
        if start == 0:  # no index: the whole file, of either version
            version, events, offsets, used = parse(raw, self.path)
            self._header = raw[:raw.find(b"\n") + 1] if version == VERSION else b""
            self._version, self._index = version, Index(covered=len(self._header))
            self._first = (events[0].seq if events else 1)
            self._clear_tail()
        else:
            events, offsets, used = parse_lines(raw, self.path, self._first + self._count(),
                                                 first_line=self._count() + 1, at=start)
        if used < len(raw) and self._pending() != start + used and not self._finished(start + used):
            raise CorruptStore(f"{self.path}: its last line is incomplete (the file was cut short: a copy, a "
                               "power cut); it was left untouched. Restore it from a backup, or delete that line "
                               "to keep the rest.")
        self._add(events, offsets)
        self._offset = start + used
        self._stamp = stamp

    def _load(self, fh: BinaryIO, st: os.stat_result) -> tuple[int, bytes]:
        """Start afresh on the file open as `fh`: from its index if that is valid, else from byte 0.

        Returns (where the returned bytes start, the bytes to parse).
        """
        header = fh.readline()
        loaded = load_index(self.path, fh, header, st) if header.endswith(b"\n") else None
        if loaded is None:
            fh.seek(0)
            return 0, fh.read()
        self._index, self._first = loaded
        self._header, self._version = header, VERSION
        self._clear_tail()
        fh.seek(self._index.covered)
        return self._index.covered, fh.read()

    def _finished(self, at: int) -> bool:
        """Whether the line at byte `at`, seen without its newline, has one now: a write that ended
        (and cleared its note) between our read of the file and our read of the note."""
        try:
            with open(self.path, "rb") as fh:
                fh.seek(at)
                return b"\n" in fh.read()
        except OSError:
            return False

    def _pending(self) -> int | None:
        """Where the lines of a write in progress (or of a killed writer) start, as noted in the lock file."""
        try:
            with open_regular(self._lock_path) as fh:
                note = fh.read(_NOTE)
            return int(note) if note.strip() else None
        except (OSError, ValueError):
            return None

    def _add(self, events: list[Event], offsets: list[int]) -> None:
        for event in events:
            if event.key is not None:
                if event.key in self._tail_keys or self._indexed([event.key]):
                    raise CorruptStore(f"{self.path}: event {event.seq} repeats the key {event.key!r}; "
                                       "the file was left untouched (was it edited by hand?)")
                self._tail_keys[event.key] = event
        self._tail.extend(events)
        self._tail_offsets.extend(offsets)

    def _indexed(self, keys: Sequence[str]) -> list[Event]:
        """The events holding these keys among the lines the index covers (read from the file)."""
        if not any(self._index.candidates(key) for key in keys):
            return []  # the usual answer for a new key: no line to read
        found = []
        with self._same_file() as fh:
            wanted = {offset: key for key in keys for offset in self._index.candidates(key)}
            for offset in sorted(wanted):
                fh.seek(offset)
                event = self._event_at(fh.readline(), offset)
                if event.key == wanted[offset]:
                    found.append(event)
        return found

    @contextmanager
    def _same_file(self) -> Iterator[BinaryIO]:
        """The file, open, of the generation our index and offsets describe (a checkpoint by another
        process may have swapped in a new one since we looked: then it is loaded first)."""
        for _ in range(3):
            try:
                fh = open(self.path, "rb")  # noqa: SIM115 (closed below, after the checks)
            except OSError as exc:
                raise StoreError(f"cannot read {self.path}: {exc}") from exc
            with fh:
                if fh.read(len(self._header)) == self._header:
                    yield fh
                    return
            self._refresh()
        raise StoreError(f"{self.path} keeps being replaced while read; try again")

    def _event_at(self, line: bytes, offset: int) -> Event:
        return event_at(line.rstrip(b"\n"), f"{self.path}: the line at byte {offset}",
                        "the file was left untouched (was it edited by hand?)")

    def _head(self) -> Event | None:
        """The log's first event (None in an empty log), read where the index says it is."""
        if not self._index.lines:
            return next(iter(self._tail), None)
        with self._same_file() as fh:
            fh.seek(self._index.marks[0])
            return self._event_at(fh.readline(), self._index.marks[0])

    def read(self, after: int = 0) -> list[Event]:
        with self._thread_lock:
            self._check_open()
            self._refresh()
            return self._read(after)

    def _read(self, after: int) -> list[Event]:
        line = max(0, after + 1 - self._first)  # the first line wanted (seqs are consecutive)
        if line >= self._index.lines:
            return self._tail[line - self._index.lines:]
        with self._same_file() as fh:
            line = max(0, after + 1 - self._first)  # again: the file may have been loaded afresh
            if line >= self._index.lines:
                return self._tail[line - self._index.lines:]
            fh.seek(self._index.marks[line // STEP])
            raw = fh.read(self._index.covered - fh.tell())
        events, _, _ = parse_lines(raw, self.path, self._first + line - line % STEP,
                                    first_line=line - line % STEP + 1, at=0)
        return events[line % STEP:] + self._tail

    def lookup(self, keys: Sequence[str]) -> list[Event]:
        with self._thread_lock:
            self._check_open()
            self._refresh()
            found = [e for e in (self._tail_keys.get(key) for key in keys) if e is not None]
            found += self._indexed([key for key in keys if key not in self._tail_keys])
        return sorted(found, key=lambda e: e.seq)

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        with self._thread_lock:
            self._check_open()  # every write and rewrite passes here
            fd = lock_writers(self.path, self._lock_path, self._timeout)
            try:
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
                with suppress(OSError):
                    os.unlink(self.path.parent / name)

    def append(self, events: Sequence[Event]) -> list[Event]:
        check_appendable(events)  # before any lock or transaction: a refusal leaves nothing behind
        with self._exclusive():
            self._refresh()
            keys = [e.key for e in events if e.key is not None]
            held = [k for k in keys if k in self._tail_keys] or [str(e.key) for e in self._indexed(keys)]
            if held or len(set(keys)) != len(keys):
                raise EventConflict(f"event key {held[0] if held else keys[0]!r} is already in {self.path}")
            if proposal_ids(events) and (taken := held_in(self._head(), events)):  # its line is gone, not its claim
                raise EventConflict(held_conflict(taken, str(self.path)))
            base = self._first + self._count() - 1
            stored = [e.numbered(base + i + 1) for i, e in enumerate(events)]
            if self._version != VERSION or self._stamp is None:
                # A new file, or a version-1 file: write it whole, as lines, once.
                if self._stamp is None:  # a state left beside a deleted file describes another log
                    self._state_path.unlink(missing_ok=True)
                self._write([*self._tail, *stored])
            else:
                self._add(stored, self._append_lines(stored))
            if len(self._tail) >= _INDEX_EVERY:
                self._save_index()
            return stored

    def _append_lines(self, stored: list[Event]) -> list[int]:
        """Append the events' lines; returns where each starts."""
        body, offsets = lines_of(stored, self._offset, self.path)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise StoreError(write_failed(self.path, exc)) from exc
        try:
            size = os.fstat(fd).st_size
            if size != self._offset:
                os.truncate(self.path, self._offset)  # a killed writer's line (_refresh checked the note)
            try:
                os.pwrite(self._lock_fd, f"{self._offset:>{_NOTE}}".encode(), 0)  # a write starts here
                # A write cut short reports no cause; the next one raises it (a full disk,
                # the file size limit), which is what the error must name.
                rest = memoryview(body)
                while rest:
                    written = os.write(fd, rest)
                    if not written:
                        raise OSError(errno.ENOSPC, "No space left on device (nothing written)")
                    rest = rest[written:]
                os.fsync(fd)  # the OS -> the disk, before the write is acknowledged
                os.pwrite(self._lock_fd, b" " * _NOTE, 0)  # done: no write in progress
            except OSError as exc:
                try:
                    os.truncate(self.path, self._offset)  # take the partial line back
                except OSError:
                    pass  # if even that fails, readers ignore a line without its newline
                raise StoreError(write_failed(self.path, exc)) from exc
        finally:
            os.close(fd)
        self._offset += len(body)
        st = os.stat(self.path)
        self._stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        return offsets

    def _save_index(self) -> None:
        """Fold the parsed tail into the index and save it beside the file (holding the writers' lock)."""
        keyed = [(e.key, o) for e, o in zip(self._tail, self._tail_offsets, strict=True) if e.key is not None]
        index = self._index.extended(keyed, self._tail_offsets, self._offset)
        try:
            save_index(self.path, index, self._header, self._first, os.stat(self.path))
        except OSError:
            return  # a cache: the next writer tries again, and readers parse the tail meanwhile
        self._index = index
        self._clear_tail()

    def rewrite(self, through: int, snapshot: Event) -> bool:
        with self._exclusive():
            self._refresh()
            last = self._first + self._count() - 1
            if through > last or through < 1:
                raise ValueError(f"cannot rewrite {self.path} through seq {through}: it holds seqs 1..{last}")
            first = self._head()
            kept = self._read(through)
            if first is not None and first.kind == "snapshot" and first.seq >= through or any(
                    e.kind == "erase" for e in kept):  # a snapshot folded before an erase may hold the text
                return False
            head = dataclasses.replace(snapshot, seq=through, key=None)
            self._write([head, *kept])
            return True

    def scrub(self, events: Sequence[Event]) -> int:
        """Replace events' data (`ErasableStore.scrub`): the whole file is written anew, if any (through a
        temp file, fsynced, swapped in: the same steps as a rewrite), every line with its checksum,
        and the saved state beside it is removed. The old file is unlinked, not overwritten: the
        file system may keep its blocks until it reuses them."""
        with self._exclusive():
            self._refresh()
            log = scrubbed_log(self._read(0), events, str(self.path)) if events else None
            self._state = None
            try:
                # first: a state that outlived the scrub would hold the old text
                self._state_path.unlink(missing_ok=True)
            except OSError as exc:
                raise StoreError(f"could not remove {self._state_path}: {exc}; the log is unchanged") from exc
            if log is not None:  # with no event to replace, dropping the state is all a scrub does
                self._write(log)
            return len(events)

    def _write(self, events: list[Event]) -> None:
        """Replace the whole file (atomically) by these events, as lines, and index it."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        header = encode(json.dumps({"format": FORMAT, "version": VERSION, "generation": os.urandom(6).hex()})
                         + "\n", self.path)
        lines, offsets = lines_of(events, len(header), self.path)
        body = header + lines
        try:
            with os.fdopen(create_like(tmp, self.path), "wb") as fh:
                fh.write(body)
                fh.flush()  # Python's buffer -> the OS
                os.fsync(fh.fileno())  # the OS -> the disk, before the rename makes it visible
            os.replace(tmp, self.path)  # atomic: readers see the old file or the new one
            _fsync_folder(self.path.parent)  # make the rename itself durable
        except OSError as exc:
            with suppress(OSError):
                tmp.unlink()
            raise StoreError(write_failed(self.path, exc)) from exc
        st = os.stat(self.path)
        self._stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        self._offset = len(body)
        self._version = VERSION
        self._header = header
        self._index = Index(covered=len(header))
        self._first = events[0].seq if events else 1
        self._clear_tail()
        self._add(events, offsets)
        self._save_index()

    # -- the engine's saved state (a cache beside the file: see Lamar._resume) ---------------

    def load_state(self) -> str | None:
        self._check_open()
        kept, self._state = self._state, None
        fresh = self._read_state(kept)
        return None if fresh is None else fresh[1]

    def _read_state(self, kept: tuple[tuple[int, int, int], str] | None = None
                    ) -> tuple[tuple[int, int, int], str] | None:
        """The state file's text with its stamp; `kept` again if the file has not changed since."""
        try:
            with open_regular(self._state_path) as fh:
                st = os.fstat(fh.fileno())
                stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
                if kept is not None and kept[0] == stamp:
                    return kept
                return stamp, fh.read().decode("ascii")
        except (OSError, UnicodeDecodeError):
            return None

    def _check_state(self) -> None:
        """Refuse a log that ends before the seq its saved state was folded through: the engine
        saves a state only of events already written, so the log lost events since. (The seq is
        the first one named on the state's second line: see lamar/state/saved.py `state_text`.)"""
        if self._state is None or self._stamp is None:
            return
        found = _STATE_SEQ.search(self._state[1], 0, 200)
        last = self._first + self._count() - 1
        if found is not None and int(found.group(1)) > last:
            raise CorruptStore(
                f"{self.path} ends at event {last}, but the state saved beside it ({self._state_path.name}) was "
                f"folded through event {found.group(1)}: the file lost events since (cut short by a copy, a "
                "restore, a full disk); it was left untouched. Restore it from a backup; if you restored or "
                f"shortened it on purpose, delete {self._state_path.name} and {self.path.name}.index beside it")

    def save_state(self, seq: int, text: str) -> None:
        if not self.writes_on_read:
            raise StoreError(f"{self.path} is open to read only; the state was not saved")
        tmp = self._state_path.with_name(f".{self.path.name}.state.{os.getpid()}.tmp")
        with self._thread_lock:
            self._check_open()
            try:
                fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o644)  # as lock_writers opens it
            except OSError as exc:
                raise StoreError(f"could not save the engine's state beside {self.path}: {exc}") from exc
            try:
                # Under the writers' lock (the next writer removes temp files it does not own),
                # but never waiting for it: the state is a cache, a later write saves it.
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._refresh()  # one folded before an erase event may hold the text erased: not kept
                if any(e.kind == "erase" for e in self._read(seq)):
                    return
                with os.fdopen(create_like(tmp, self.path), "w", encoding="ascii") as fh:
                    fh.write(text)  # not fsynced: a torn state fails its checksum and the log is replayed
                os.replace(tmp, self._state_path)
            except (OSError, UnicodeEncodeError) as exc:
                with suppress(OSError):
                    tmp.unlink()
                raise StoreError(f"could not save the engine's state beside {self.path}: {exc}") from exc
            finally:
                os.close(fd)

    def _check_open(self) -> None:
        # The file would still open, but a use after `with Lamar(...)` is a bug SQLite refuses too.
        if self._closed:
            raise closed_store(self.location)

    def close(self) -> None:
        self._closed = True


def _fsync_folder(folder: Path) -> None:
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
