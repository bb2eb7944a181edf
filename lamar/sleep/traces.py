"""The trace format sleep reads: one JSON object per agent session, one session per line."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from lamar._errors import InvalidTrace, StoreError, advised
from lamar.signals import Signal
from lamar.sleep.trace_limits import MAX_FIELD_CHARS, MAX_LINE_BYTES, check_limits, scrubbed_line
from lamar.storable import finite_number, storable_problem
from lamar.store import base

try:  # POSIX; elsewhere appends rely on O_APPEND alone
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_FIELDS = ("id", "time", "context", "input", "attempted", "tool_errors", "output", "outcome",
           "episode_id", "metadata")
_SIGNALS = tuple(s.value for s in Signal)
TIMEOUT = 30.0  # seconds a write waits for another writer's lock: a JSON store's default


@dataclasses.dataclass(frozen=True)
class Trace:
    """What happened in one agent session, as sleep reads it.

    Attributes:
        id: unique trace id.
        context: the session's context (project, language, task, ...), strings only.
        time: when the session happened, unix seconds.
        input: what the user asked.
        attempted: the actions and tool calls tried, in order.
        tool_errors: the errors tools returned.
        output: the final answer ("" when there was none).
        outcome: the Signal value observed afterwards ("reverted", ...), or None if unknown.
        episode_id: the Lamar episode of the session's recall, if there was one.
        metadata: anything else (JSON-serializable); not shown to the model.

    >>> t = Trace("t1", {"project": "trace"}, attempted=["swift build"], outcome="reverted")
    >>> Trace.from_dict(t.to_dict()) == t
    True
    """

    id: str
    context: Mapping[str, str]
    time: float = dataclasses.field(default_factory=time.time)
    input: str = ""
    attempted: Sequence[str] = ()
    tool_errors: Sequence[str] = ()
    output: str = ""
    outcome: str | None = None
    episode_id: str | None = None
    metadata: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        problem = _problem(self)
        if problem:
            raise InvalidTrace(f"invalid trace: {problem}")
        # Freeze the containers so a Trace is a value that cannot change under a reader.
        object.__setattr__(self, "context", dict(self.context))
        object.__setattr__(self, "attempted", tuple(self.attempted))
        object.__setattr__(self, "tool_errors", tuple(self.tool_errors))
        object.__setattr__(self, "metadata", dict(self.metadata))
        object.__setattr__(self, "time", float(self.time))
        if isinstance(self.outcome, Signal):
            object.__setattr__(self, "outcome", self.outcome.value)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this trace, keys in the documented order."""
        return {
            "id": self.id,
            "time": self.time,
            "context": dict(self.context),
            "input": self.input,
            "attempted": list(self.attempted),
            "tool_errors": list(self.tool_errors),
            "output": self.output,
            "outcome": self.outcome,
            "episode_id": self.episode_id,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Trace:
        """Parse one trace object.

        Raises:
            InvalidTrace: a key is missing, unknown or of the wrong type.
        """
        if not isinstance(data, Mapping):
            raise InvalidTrace(f"invalid trace: expected a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise InvalidTrace(f"invalid trace: unknown keys {unknown}; put extra data under 'metadata'")
        missing = [name for name in ("id", "context") if name not in data]
        if missing:
            raise InvalidTrace(f"invalid trace: missing required keys {missing}")
        values = {name: data[name] for name in _FIELDS if name in data}
        if values.get("metadata") is None:
            values.pop("metadata", None)  # an explicit null means "none"
        return cls(**values)


def _problem(trace: Trace) -> str:
    """What is wrong with the trace's fields, or "" when nothing is."""
    if not isinstance(trace.id, str) or not trace.id.strip():
        return f"'id' must be a non-empty string; got {trace.id!r}"
    if not isinstance(trace.context, Mapping):
        return f"'context' must be an object of strings; got {type(trace.context).__name__}"
    for key, value in trace.context.items():
        if not isinstance(key, str) or not key or not isinstance(value, str):
            return f"'context' must map non-empty strings to strings; got {key!r}: {value!r}"
    if not finite_number(trace.time):
        return f"'time' must be unix seconds (a finite number); got {trace.time!r}"
    for name in ("input", "output"):
        if not isinstance(getattr(trace, name), str):
            return f"{name!r} must be a string; got {type(getattr(trace, name)).__name__}"
    for name in ("attempted", "tool_errors"):
        items = getattr(trace, name)
        if isinstance(items, (str, bytes)) or not isinstance(items, (list, tuple)):
            return f"{name!r} must be a list of strings; got {type(items).__name__}"
        bad = next((item for item in items if not isinstance(item, str)), None)
        if bad is not None:
            return f"{name!r} must be a list of strings; it holds {bad!r}"
    if trace.outcome is not None and trace.outcome not in _SIGNALS:
        return f"'outcome' must be one of {list(_SIGNALS)} or null; got {trace.outcome!r}"
    if trace.episode_id is not None and not isinstance(trace.episode_id, str):
        return f"'episode_id' must be a string or null; got {trace.episode_id!r}"
    if not isinstance(trace.metadata, Mapping):
        return f"'metadata' must be an object; got {type(trace.metadata).__name__}"
    # A lone surrogate cannot be written as UTF-8 (a trace file is); a NUL in a log is harmless.
    for name in ("id", "context", "input", "output", "attempted", "tool_errors", "metadata"):
        problem = storable_problem(getattr(trace, name))
        if problem and not problem.startswith("holds a NUL"):
            return f"{name!r} {problem}"
    return ""


TraceSource = str | os.PathLike[str] | Iterable[Trace | Mapping[str, Any] | str | bytes]


def load_traces(source: TraceSource) -> list[Trace]:
    """Read and validate traces.

    Integrations write traces with `TraceWriter`; this validates them strictly and names the line
    of the first bad record, so a broken writer is caught at the next sleep.

    Args:
        source: a JSON Lines file path, or an iterable of `Trace`s, dicts, or JSON lines
            (an open file works, in text or binary mode: `gzip.open(path)` too). Blank lines
            are skipped.

    Returns:
        The traces in order.

    Raises:
        InvalidTrace: a record does not parse or breaks the format; the message names the file
            and line (or the item number). A repeated id is skipped with a logged warning.
        StoreError: the file cannot be read.

    >>> [t.id for t in load_traces([{"id": "a", "context": {}}, '{"id": "b", "context": {}}'])]
    ['a', 'b']
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source).expanduser()
        try:
            with path.open("rb") as handle:
                return _parse(_text_lines(handle, path, _size_between_writes(handle.fileno(), path)),
                              where=f"{path}, line")
        except StoreError:
            raise
        except OSError as exc:
            raise StoreError(f"cannot read traces from {path}: {exc.strerror or exc}") from exc
    if isinstance(source, (Mapping, Trace)):
        raise InvalidTrace("load_traces takes a path or an iterable of traces; wrap one trace in a list")
    return _parse(source, where="item")


def _size_between_writes(fd: int, path: Path) -> int:
    """The file's size while no writer holds its lock: a write holds it while it appends one whole
    line, so the bytes up to there are whole lines, and a line appended later is left for the next read."""
    if fcntl is None:  # pragma: no cover - Windows
        return os.fstat(fd).st_size
    from lamar.store.file_lock import shared

    try:
        locked = shared(fd, TIMEOUT)
    except OSError:  # a file system without locks: read what is there
        return os.fstat(fd).st_size
    if locked is None:
        raise advised(StoreError, f"cannot read traces from {path}: a writer holds its lock past the {TIMEOUT:g} s "
                      "wait; ", base.WRITER_AGAIN)
    try:
        return os.fstat(fd).st_size
    finally:
        fcntl.flock(locked, fcntl.LOCK_UN)
        os.close(locked)


def _torn(raw: bytes) -> bool:
    """Whether a last line with no newline is a record cut off, as a writer stopped mid-line leaves it."""
    try:
        json.loads(raw.decode("utf-8"))
    except ValueError:
        return bool(raw.strip())
    except RecursionError:
        return False
    return False


def _text_lines(handle: Iterable[bytes], path: Path, size: int) -> Iterable[str]:
    """The file's lines in its first `size` bytes, as text; a line that is not UTF-8 is an InvalidTrace
    naming it, a byte order mark (Windows editors write one) is not part of the first record, and a
    last line cut off is skipped with a warning."""
    for number, raw in enumerate(handle, start=1):
        if size <= 0:
            return
        raw = raw[:size]
        size -= len(raw)
        if not raw.endswith(b"\n") and _torn(raw):
            logging.getLogger(__name__).warning(
                "%s, line %d: the last line is cut off with no newline, as a writer stopped mid-line (killed, or "
                "the disk full) leaves it; skipped, the lines before it are read", path, number)
            return
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidTrace(f"{path}, line {number}: not UTF-8 text (byte {exc.start + 1} of the line); "
                               "write traces as UTF-8") from None
        yield line.removeprefix("\ufeff") if number == 1 else line


def _not_json(record: str, exc: json.JSONDecodeError) -> str:
    """What a record that does not parse is: bad JSON, or a file's name in a list of them (as `lamar sleep
    --traces A B` takes them), which Python reads as JSON lines."""
    name = record.strip()
    if len(name) < 4096 and "\n" not in name and (name.endswith((".jsonl", ".json", ".ndjson", ".gz"))
                                                   or os.path.isfile(name)):
        return (f"a file name, not a trace: {name!r}; pass one file as the path itself, or several as "
                "[trace for path in paths for trace in load_traces(path)] (from lamar.sleep.traces)")
    return f"not valid JSON ({exc.msg} at column {exc.colno})"


_REPEATS_SAID = 5  # repeated trace ids named one by one in the log; the rest are counted in one line


def _parse(records: Iterable[Trace | Mapping[str, Any] | str | bytes], *, where: str) -> list[Trace]:
    traces: list[Trace] = []
    first_seen: dict[str, int] = {}
    repeats = 0
    for number, record in enumerate(records, start=1):
        try:
            if isinstance(record, (bytes, bytearray)):  # a file opened in binary mode, gzip.open(...)
                try:
                    record = bytes(record).decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidTrace(f"not UTF-8 text (byte {exc.start + 1} of the line); "
                                       "write traces as UTF-8") from None
            if isinstance(record, str) and number == 1:
                record = record.removeprefix("\ufeff")  # a byte order mark is not part of the record
            if isinstance(record, Trace):
                trace = record
            elif isinstance(record, str):
                if not record.strip():
                    continue
                try:
                    parsed = json.loads(record)
                except json.JSONDecodeError as exc:
                    raise InvalidTrace(_not_json(record, exc)) from None
                except RecursionError:
                    raise InvalidTrace("JSON nested too deep to parse; a trace is a flat record") from None
                trace = Trace.from_dict(parsed)
            else:
                trace = Trace.from_dict(record)
        except InvalidTrace as exc:
            message = str(exc).removeprefix("invalid trace: ")
            raise InvalidTrace(f"{where} {number}: {message}") from None
        if trace.id in first_seen:
            # A writer that was stopped after appending and before it recorded so appends the same
            # traces again: the first copy stands, and one bad append must not cost the whole file.
            from lamar.safety import scrub  # an id can hold a credential, and this line goes to stderr

            repeats += 1
            if repeats <= _REPEATS_SAID:
                logging.getLogger(__name__).warning("%s %d: trace id %r repeats %s %d; skipped", where, number,
                                                    scrub(trace.id)[0], where, first_seen[trace.id])
            continue
        first_seen[trace.id] = number
        traces.append(trace)
    if repeats > _REPEATS_SAID:  # a whole file appended twice repeats every id: one line for the rest, not one each
        source = where.removesuffix(", line") if where.endswith(", line") else "traces"
        logging.getLogger(__name__).warning("%s: %d more repeated trace ids skipped (%d in all; the first copy of "
                                            "each is read)", source, repeats - _REPEATS_SAID, repeats)
    return traces


def _names(path: Path, fd: int) -> bool:
    """Whether `path` still names the file open as `fd`."""
    try:
        return os.path.samestat(os.stat(path), os.fstat(fd))
    except FileNotFoundError:
        return False


def _mend_tail(handle: BinaryIO, path: Path, *, locked: bool) -> bytes:
    """What to write before a line so it starts a line of its own. A writer stopped mid-line leaves a
    record cut off with no newline; under the lock no write is under way, so it is cut away: a newline
    after it would make it a bad line in the middle, which readers refuse."""
    end = handle.seek(0, os.SEEK_END)
    if end == 0 or (handle.seek(-1, os.SEEK_END) >= 0 and handle.read(1) == b"\n"):
        return b""
    start = end
    while start > 0:  # back to the start of the last line
        step = min(start, 1 << 16)
        start -= step
        handle.seek(start)
        cut = handle.read(step).rfind(b"\n")
        if cut >= 0:
            start += cut + 1
            break
    handle.seek(start)
    if not locked or not _torn(handle.read(end - start)):
        return b"\n"  # a whole record that lacks only its newline, or no lock to tell a write under way
    os.ftruncate(handle.fileno(), start)
    logging.getLogger(__name__).warning("%s: cut away a record cut off at the end of the file (%d bytes with no "
                                        "newline), as a writer stopped mid-line leaves it", path, end - start)
    return b""


def _append(fd: int, data: bytes, *, locked: bool) -> None:
    """Write all of `data` at the end of the file. A write that fails part way (the disk full) is cut back
    off under the lock, so a reader never meets its fragment; written straight to the descriptor, so no
    rest of it is left in a buffer for closing the file to write after the cut."""
    start = os.lseek(fd, 0, os.SEEK_END)
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except BaseException:
        if locked:  # without the lock, the bytes after `start` may be another writer's
            with contextlib.suppress(OSError):  # then the fragment stays, and the next write cuts it away
                os.ftruncate(fd, start)
        raise


class TraceWriter:
    """Append traces to a JSON Lines file; safe with several writing processes.

    Each `write` opens the file in append mode and holds an exclusive `flock` while it
    writes one whole line, so lines from different processes never interleave; it waits at most
    `timeout` seconds for another writer's lock, so a stuck or stopped writer fails it, never hangs it. A write
    that waited while the file was moved aside appends to the file the path names then. A trace is a
    record for a model to read, not an archive: long texts are clipped (`lamar.sleep.trace_limits`).

    Args:
        path: the .jsonl file (created with its folder when missing).
        max_field_chars: characters kept of each text (context value, input, output, action, tool
            error, metadata string); a longer one is cut and ends in " [...clipped]".
        max_line_bytes: bytes of one line; past it the last actions and tool errors are dropped,
            one "[...N more clipped]" item saying how many.
        timeout: seconds to wait for another process's lock on the file, as a JSON store waits
            for its writers' lock.

    Raises:
        InvalidArgument: `timeout` is not a finite number >= 0 (or a limit is out of range).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "traces.jsonl")
    >>> _ = TraceWriter(path).write(Trace("t1", {"project": "trace"}, outcome="shipped"))
    >>> [t.outcome for t in load_traces(path)]
    ['shipped']
    """

    def __init__(self, path: str | os.PathLike[str], *, max_field_chars: int = MAX_FIELD_CHARS,
                 max_line_bytes: int = MAX_LINE_BYTES, timeout: float = TIMEOUT) -> None:
        check_limits(max_field_chars, max_line_bytes)
        from lamar.store.file_lock import checked_timeout

        self.path = Path(path).expanduser()
        # A link named here is followed once, now; the file is then never opened through a link, so one planted
        # at its name later (in a folder others may write) never has traces appended into another file.
        self._file = self.path
        with contextlib.suppress(OSError):  # a path no file can have: the write says so
            if self.path.is_symlink():
                self._file = Path(os.path.realpath(self.path))
        self.max_field_chars = max_field_chars
        self.max_line_bytes = max_line_bytes
        self.timeout = checked_timeout(timeout)

    def write(self, trace: Trace | Mapping[str, Any]) -> Trace:
        """Validate, clip, scrub of secrets, and append one trace; returns it as written.

        Raises:
            InvalidTrace: the trace breaks the format, or is over `max_line_bytes` with no action
                or tool error kept (nothing is written).
            StoreError: the file cannot be written, or another process held its lock past `timeout`
                seconds (nothing is written: a line the disk took only part of is cut back off).
        """
        record = trace if isinstance(trace, Trace) else Trace.from_dict(trace)
        # Credentials never reach the disk: the file is the store of tomorrow's sleep. Texts are
        # clipped before they are scrubbed, so a write costs what it keeps, not what it was given.
        data, line = scrubbed_line(record.to_dict(), self.max_field_chars, self.max_line_bytes)
        if data != record.to_dict():
            record = Trace.from_dict(data)
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            with self._locked() as handle:
                try:
                    prefix = _mend_tail(handle, self.path, locked=fcntl is not None)
                    _append(handle.fileno(), prefix + line.encode("utf-8") + b"\n", locked=fcntl is not None)
                finally:
                    if fcntl is not None:
                        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        except StoreError:
            raise
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(self._file):  # O_NOFOLLOW's refusal
                raise StoreError(f"cannot append a trace to {self._file}: it is a symbolic link, put there after "
                                 "this writer was made, which it never writes through; nothing was written: remove "
                                 "it, or make a writer for the path the link names") from exc
            from lamar.store.files import refusal_advice

            raise StoreError(f"cannot append a trace to {self.path}: {exc.strerror or exc}; nothing was written"
                             f"{refusal_advice(self.path, exc)}") from exc
        return record

    def _locked(self) -> BinaryIO:
        """The file open for appending, holding its exclusive lock where there is `flock`."""
        if fcntl is None:  # pragma: no cover - Windows
            return self._file.open("a+b")
        from lamar.store.file_lock import NOFOLLOW, exclusive

        deadline = time.monotonic() + self.timeout
        while True:
            fd = exclusive(self._file, max(0.0, deadline - time.monotonic()), flags=os.O_APPEND | NOFOLLOW,
                           mode=0o666)  # as open("a") creates it
            if fd is None:
                raise advised(StoreError, f"cannot append a trace to {self.path}: another process holds its lock past "
                              f"the {self.timeout:g} s wait; nothing was written: ", base.WRITER_AGAIN)
            # A nightly job moves the file aside to mine it: a write that opened it before the move and
            # got the lock after it would land in the file being mined, after it was read.
            try:
                if _names(self._file, fd):
                    return os.fdopen(fd, "a+b")
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)

    def __repr__(self) -> str:
        limits = "" if (self.max_field_chars, self.max_line_bytes) == (MAX_FIELD_CHARS, MAX_LINE_BYTES) else \
            f", max_field_chars={self.max_field_chars}, max_line_bytes={self.max_line_bytes}"
        wait = "" if self.timeout == TIMEOUT else f", timeout={self.timeout:g}"
        return f"TraceWriter({str(self.path)!r}{limits}{wait})"


__all__ = ["Trace", "TraceSource", "TraceWriter", "load_traces"]
