"""Bookkeeping between hook processes: one JSON file beside the store, locked and replaced atomically.
The log beside it holds one line per failure or settlement; `lamar claude-code status` shows it."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:  # POSIX; elsewhere the state is still replaced atomically, only unlocked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

STATE_VERSION = 1
_LOG_LIMIT = 512 * 1024  # bytes; the older half is dropped past this
# Seconds to wait for the state's lock without a hook's budget (`settle`, the Agent SDK's session
# ends): a hook holds it no longer than Claude Code lets a hook run.
STATE_WAIT = 10.0
LOG_WAIT = 1.0  # seconds a log line waits for the log's lock: a trim holds it for one short rewrite


def sidecar(store: str, suffix: str) -> Path:
    """A file beside a file store (`experience.db` -> `experience.db.claude-code.<suffix>`).

    Stores that are not files (PostgreSQL) keep their sidecars in ~/.lamar/.
    """
    if store == ":memory:" or store.startswith(("postgresql://", "postgres://")):
        return Path("~/.lamar").expanduser() / f"claude-code.{suffix}"
    path = Path(store).expanduser()
    return path.with_name(f"{path.name}.claude-code.{suffix}")


def empty_state() -> dict[str, Any]:
    return {"version": STATE_VERSION, "sessions": {}, "episodes": {}, "repos": {}, "last": {}}


_NUMBER = (int, float)
_TEXT_OR_NONE = (str, type(None))
# The fields the hooks compute with and the types they need there; a field that is absent is fine.
_EPISODE_FIELDS: dict[str, Any] = {
    "session": str, "repo": _TEXT_OR_NONE, "time": _NUMBER, "files": list, "signal": _TEXT_OR_NONE,
    "commit": _TEXT_OR_NONE, "base": _TEXT_OR_NONE, "audit": list, "context": dict, "injected": list,
    "delivered": bool, "by_end": bool, "prompt_key": str, "trace": str, "turn": str,
}
_SESSION_FIELDS: dict[str, Any] = {
    "episode": str, "words": list, "repo": _TEXT_OR_NONE, "time": _NUMBER, "count": int, "traced": int,
    "edited": str, "transcript": dict,
}


def read_state(path: Path, log: Path | None = None) -> dict[str, Any]:
    """The state as last written (an empty one when absent or unreadable: it is only a cache of intent).

    A record of the wrong shape (a hand edit, a bad merge, another version's format) is dropped,
    with a line in `log`: kept, it would fail every event and be written back by each.
    """
    try:
        data = json.loads(read_file(path))
    except (OSError, ValueError):
        return empty_state()
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return empty_state()
    for key, value in empty_state().items():
        if not isinstance(data.get(key), type(value)):
            data[key] = value
    dropped = []
    for section, kind in (("episodes", "episode"), ("sessions", "session"), ("repos", "repository entry")):
        records = data[section]
        for name in list(records):
            if not _well_formed(section, name, records[name]):
                del records[name]
                dropped.append(f"{kind} {name!r}")
    if not _is_number(data["last"].get("time", 0)):
        data["last"] = {}
        dropped.append("the last event")
    if dropped and log is not None:
        log_line(log, f"state: dropped {', '.join(dropped)}: not of the shape the hooks write")
    for record in (*data["sessions"].values(), *data["episodes"].values()):
        # the state keeps no prompt text: any found is dropped at the next write
        record.pop("prompt", None)
        record.pop("prompt_head", None)
    return data


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def _well_formed(section: str, name: str, record: Any) -> bool:
    if section == "repos":  # git's fingerprint of a repository, or a folder's language
        return isinstance(record, list) if name.startswith("git:") else (
            isinstance(record, dict) and _is_number(record.get("time", 0)))
    if not isinstance(record, dict):
        return False
    fields = _EPISODE_FIELDS if section == "episodes" else _SESSION_FIELDS
    for field, kind in fields.items():
        if field not in record:
            continue
        value = record[field]
        if not isinstance(value, kind) or (kind in (int, _NUMBER) and isinstance(value, bool)):
            return False
    strings = [*record.get("files", []), *record.get("words", []), *record.get("injected", [])]
    audit_ok = all(isinstance(entry, list) and len(entry) == 3 for entry in record.get("audit", []))
    return audit_ok and all(isinstance(item, str) for item in strings)


@contextlib.contextmanager
def locked_state(path: Path, log: Path | None = None, *, wait: float | None = None) -> Iterator[dict[str, Any]]:
    """Hold the state's lock, yield the state, and write it back, even when the block fails.

    Each hook is a fresh process and several run at once (parallel tool calls), so every change is
    read-modify-write under an exclusive lock on a sidecar lock file, written to a temporary file,
    fsynced and renamed over the old one: a reader sees the old state or the new, never half.

    The block may have reported outcomes to the store before it failed; the state must remember
    them, or the next event would report them again. Records of the wrong shape are dropped and
    logged in `log` (`read_state`).

    Raises:
        StoreError: another process held the lock past `wait` seconds (default STATE_WAIT); the
            state was neither read nor written.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    name = path.with_name(path.name + ".lock")
    with os.fdopen(_open_private(name, os.O_RDWR | os.O_APPEND), "a+b") as lock:
        if fcntl is not None:
            wait = STATE_WAIT if wait is None else max(0.0, wait)
            if not held(lock.fileno(), fcntl.LOCK_EX, wait):  # released when the file closes
                from lamar import StoreError

                raise StoreError(f"the hooks' state stayed locked by another process past the {wait:.2g} s wait, "
                                 f"so this was skipped and nothing changed; if that keeps happening, `lsof {name}` "
                                 "names the stopped or stuck process that holds it")
            _sweep(path)
        state = read_state(path, log)
        try:
            yield state
        finally:
            try:
                write_atomically(path, json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
            except OSError as exc:  # a full disk, a folder made read-only: named, with what to do, not a bare errno
                from lamar import StoreError
                from lamar.store.files import refusal_advice

                raise StoreError(f"could not save the hooks' state {path} ({exc}); it keeps what it held before "
                                 f"this event{refusal_advice(path, exc)}") from exc
            if "recalling" not in state:
                # Only once the state that tracks the recall's episode is on disk, and under the lock:
                # another hook's note is never taken for this one's.
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(recall_note(path))


def held(fd: int, how: int, seconds: float) -> bool:
    """Whether `fd` got its `flock` (`how`: LOCK_SH or LOCK_EX) within `seconds`.

    A hook runs inside the user's turn: a stopped or stuck holder must cost it its wait, never the
    turn. Polled rather than waited for in a thread (as the JSON store's lock is), so a wait given
    up leaves no thread or descriptor behind in a warm daemon or an Agent SDK program.
    """
    deadline = time.monotonic() + seconds
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(pause, left))
            pause = min(2 * pause, 0.02)  # a hook's lock is held for milliseconds: look again soon


def recall_note(path: Path) -> Path:
    """Where a prompt hook notes the recall it is about to make, beside the state at `path`."""
    return path.with_name(path.name + ".recalling")


def note_episode(path: Path, episode_id: str) -> None:
    """Add the episode its recall stored to the note beside the state at `path`; never raises (a note
    that could not take it names no episode, as when the hook dies first)."""
    # Appended rather than the note replaced: a rename over an existing file makes ext4 flush it
    # first, which the prompt would wait for. A torn line is read as no episode.
    with contextlib.suppress(OSError):
        fd = os.open(recall_note(path), os.O_WRONLY | os.O_APPEND | _NONBLOCK)
        try:
            os.write(fd, b"\n" + json.dumps({"episode": episode_id}).encode("utf-8"))
        finally:
            os.close(fd)


def read_note(path: Path) -> Any:
    """The note beside the state at `path`: the recall's time and context, and its episode once added.

    Raises:
        OSError: the note cannot be read (FileNotFoundError: there is none).
        ValueError: its first line is not JSON.
    """
    first, _, rest = read_file(recall_note(path)).partition(b"\n")
    intent = json.loads(first)
    try:
        added = json.loads(rest) if rest else None
    except ValueError:
        added = None  # the hook died while it added the episode
    if isinstance(intent, dict) and isinstance(added, dict) and "episode" in added:
        intent["episode"] = added["episode"]
    return intent


def _sweep(path: Path) -> None:
    """Remove the temporary copies of the state that killed writers left (called under the lock).

    Every writer of the state holds the lock, so a copy found while holding it is no live writer's:
    each holds the prompts' context, and a hook killed mid-write (SIGKILL) would leave one for good.
    """
    prefix = f".{path.name}."
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            pid = entry.name[len(prefix):-len(".tmp")].removeprefix("recalling.")  # the note's copies too
            if entry.name.startswith(prefix) and entry.name.endswith(".tmp") and pid.isdigit():
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def write_atomically(path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace `path` by `data`; the file is its owner's only unless `mode` says otherwise.

    `durable=False` skips the fsync: for a note that must outlive a killed process, which the page
    cache already survives, and not a power cut."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # a copy this process id left, or a link planted there: made new below, or not at all
    try:
        with os.fdopen(_open_private(tmp, os.O_WRONLY | os.O_EXCL), "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())  # the bytes are on disk before the name points at them
        if mode is not None:
            os.chmod(tmp, mode)  # before the rename: no moment where the file has the wrong mode
        os.replace(tmp, path)  # atomic on POSIX and Windows
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def log_line(path: Path, message: str, *, now: float | None = None) -> None:
    """Append one line to the hook log; never raises (the log is the last resort of a failing hook).

    A log that cannot be written (the store's folder read-only, full or not a folder) gets the
    line in `fallback_log()` instead, naming it: a hook that fails there would otherwise say nothing.
    """
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() if now is None else now))
    try:
        _append(path, f"{stamp} {' '.join(message.split())[:500]}\n")
    except OSError as exc:
        fallback = fallback_log()
        if fallback != path:
            with contextlib.suppress(OSError):
                _append(fallback, f"{stamp} {path} {UNWRITABLE} ({exc.strerror or exc}): "
                        f"{' '.join(message.split())[:500]}\n")


UNWRITABLE = "could not be written"


def fallback_log() -> Path:
    """Where a log line goes when the log beside the store cannot take it."""
    return Path("~/.lamar").expanduser() / "claude-code.log"


def _append(path: Path, text: str) -> None:
    line = text.encode("utf-8", "replace")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Appends share the log's lock, a trim holds it alone: a line appended while another hook
    # trims would land in the file the trim is replacing, and be lost.
    with os.fdopen(_open_private(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_APPEND), "a+b") as lock:
        if fcntl is not None and not held(lock.fileno(), fcntl.LOCK_SH, LOG_WAIT):
            # Appended anyway, the line could land in the file a stopped trim later replaces: it
            # goes to the fallback log instead, which `status` shows.
            raise TimeoutError(f"another process held its lock past {LOG_WAIT:g} s")
        with os.fdopen(_open_private(path, os.O_WRONLY | os.O_APPEND), "ab") as handle:
            handle.write(line)  # one write of a short line under O_APPEND: lines never interleave
        with contextlib.suppress(OSError):  # the line is written: a trim that fails is tried by the next one
            # No append in between: a trim leaves no hole. One not let in within LOG_WAIT is the next line's.
            if path.stat().st_size > _LOG_LIMIT and (fcntl is None or held(lock.fileno(), fcntl.LOCK_EX, LOG_WAIT)) \
                    and path.stat().st_size > _LOG_LIMIT:  # again: another hook may have trimmed it meanwhile
                _shrink(path)


def _open_private(path: Path, flags: int) -> int:
    """A descriptor on `path`, created readable by its owner only: the files hold prompts' context.

    Never through a link: beside a store in a folder others may write, one planted at a log's or a temporary
    copy's name (it carries the process id, which any user sees) would have the text written into another file.
    """
    try:
        fd = os.open(path, flags | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | _NONBLOCK, 0o600)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # what a pipe with no reader answers a write-only open that does not wait
            raise OSError(errno.EINVAL, f"{path} is a pipe, not a file: move it away") from None
        raise
    _only_a_file(fd, path)
    return fd


# A pipe planted at one of these names would hold a plain open or read until some process came to its other end:
# past the hook's budget, at every event. Opened without waiting, it is refused as what it is.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _only_a_file(fd: int, path: Path) -> None:
    """Close `fd` and raise OSError, naming `path` and what to do, unless it is a file."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a pipe" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else "a device or a socket"
        raise OSError(errno.EINVAL, f"{path} is {what}, not a file: move it away")


def read_file(path: Path) -> bytes:
    """The bytes of the file at `path`. Raises OSError when it cannot be read or is no file."""
    fd = os.open(path, os.O_RDONLY | _NONBLOCK)
    _only_a_file(fd, path)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def create_private(location: str) -> None:
    """Create a missing file store readable by its owner only (its folder too); other stores are left alone."""
    if location == ":memory:" or "://" in location:
        return
    path = Path(location).expanduser()
    if path.exists():
        return
    from lamar.store import open_store

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    previous = os.umask(0o077)  # the store (and SQLite's -wal and -shm, which copy its mode) get 0600
    try:
        store = open_store(str(path))
        try:
            store.append([])  # a JSON store writes its file on the first append: an empty one makes it exist
        finally:
            store.close()
    finally:
        os.umask(previous)


def _shrink(path: Path) -> None:
    data = read_file(path)
    cut = data.find(b"\n", len(data) // 2)
    write_atomically(path, data[cut + 1 :])


def tail(path: Path, lines: int = 5) -> list[str]:
    """The last lines of the log ([] when there is none)."""
    try:
        data = read_file(path).decode("utf-8", errors="replace")
    except OSError:
        return []
    return data.splitlines()[-lines:]
