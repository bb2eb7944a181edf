"""The hooks' last failure for one store, kept in ~/.lamar: each session's start tells the user that
nothing is learned until an event uses the store again, and `lamar claude-code status` shows it."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import time
from pathlib import Path
from typing import Any

from lamar.program import program_name
from lamar_claude_code.state import write_atomically

OFF = "Lamar is off, so no lessons are recalled and nothing is learned"  # as the plugin's launcher says it


def failure_path(store: str) -> Path:
    """Where the hooks keep their last failure for `store`: the home folder's, not the store's folder,
    which may be the very thing that takes no file."""
    import hashlib

    location = store if "://" in store or store == ":memory:" else os.path.abspath(os.path.expanduser(store))
    digest = hashlib.sha256(location.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return Path("~/.lamar").expanduser() / f"claude-code.failed-{digest}.json"


def starts_session(payload: Any) -> bool:
    """Whether the event starts a session the user sees; a compaction starts none, so the notice is
    said once a session, and never on a prompt, where it would repeat at every turn."""
    return (isinstance(payload, dict) and payload.get("hook_event_name") == "SessionStart"
            and payload.get("source") != "compact")


def record_failure(store: str, event: str, error: BaseException, text: str, *, plugin: bool) -> dict[str, Any]:
    """Keep `text` (the scrubbed error) as the hooks' last failure for `store`, and return the record.

    Never raises: a home folder that takes no file leaves the failure in the log only.
    """
    from lamar.safety import scrub

    # A PostgreSQL URL's password belongs to the settings that hold it, not to a second file.
    record = {"store": scrub(store)[0], "time": time.time(), "event": event, "error": text, "plugin": plugin,
              "store_error": isinstance(error, OSError)}  # StoreError is an OSError too
    path = failure_path(store)
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Not fsynced: a note for the next session, which a power cut may lose at no cost but a missed notice.
        write_atomically(path, json.dumps(record, ensure_ascii=False).encode("utf-8"), durable=False)
    return record


def clear_failure(store: str) -> None:
    """An event used the store again: the failure is over. Never raises."""
    with contextlib.suppress(OSError):
        failure_path(store).unlink()


def last_failure(store: str) -> dict[str, Any] | None:
    """The failure no event has ended since, or None (also for a record of another shape: a hand edit)."""
    try:
        record = json.loads(failure_path(store).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    stamp = record.get("time")
    if not isinstance(stamp, (int, float)) or isinstance(stamp, bool):
        return None
    try:
        when(record)  # a time no clock shows (nan, 1e300) would fail the status command and the notice
    except (OverflowError, ValueError, OSError):
        return None
    if not all(isinstance(record.get(key), str) for key in ("event", "error")):
        return None
    return record


def when(record: dict[str, Any]) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(record["time"])))


def off_message(record: dict[str, Any], store: str, log: Path) -> str:
    """The systemMessage a session's start shows: what failed, the fix, and where to read more."""
    plugin = bool(record.get("plugin"))
    if record.get("store_error"):
        other = ("set the plugin's store option (/plugin configure lamar@lamar inside Claude Code)" if plugin
                 else f"run `{program_name()} claude-code install --store PATH`")
        fix = f"To use another store, {other}. "
    else:
        fix = ""
    from lamar.safety import scrub

    # Claude Code keeps the message in the session's transcript: a URL's password is shown redacted.
    shown = shlex.quote(scrub(store)[0])
    status = "/lamar:status" if plugin else f"`{program_name()} claude-code status --store {shown}`"
    return (f"{OFF}: its {record['event']} hook failed at {when(record)} ({record['error'].rstrip('.')}). {fix}"
            f"{status} shows the hooks' log ({log}); this is said at each session's start until a hook uses the "
            "store again.")


def status_line(store: str) -> str | None:
    """What `lamar claude-code status` says of the hooks' last failure, or None when there is none."""
    record = last_failure(store)
    if record is None:
        return None
    return (f"hooks failing since {when(record)} ({record['event']}: {record['error']}): nothing is learned until "
            "a hook uses the store again, and each session's start says so")
