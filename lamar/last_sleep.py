"""The last sleep's time and figures, kept beside the store by every sleep (`Lamar.sleep`, `lamar sleep`, `lamar ui`'s
Run sleep), so that `lamar stats` says whether a night's mining worked (`record_sleep`, `keep_sleep`, `last_sleep`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from lamar.sleep.proposals import SleepReport

FORMAT = "lamar-last-sleep"
_POSTGRES = ("postgresql://", "postgres://")
# Set while a caller that saves the report (`lamar sleep`, lamar ui's Run sleep) runs a sleep: it records the run
# itself, once, naming the report, so the sleep's own record would be a second write (and a second warning).
_CALLER_RECORDS: ContextVar[bool] = ContextVar("lamar_last_sleep_caller_records", default=False)
_NOTE = "last-sleep"


@runtime_checkable
class NotedStore(Protocol):
    """A store that keeps small notes in itself, for everyone who opens it (PostgreSQL's `lamar_notes`): the
    last sleep of a database a team shares is kept there, not in the home folder of whoever ran it."""

    def save_note(self, name: str, text: str) -> None: ...

    def load_note(self, name: str) -> str | None: ...


def last_sleep_path(location: str) -> Path | None:
    """Where the last sleep of the store at `location` is kept: beside a file store (`STORE.last-sleep.json`);
    in ~/.lamar for a database, named after its URL (as `lamar ui` names its report); None for `:memory:`,
    which no later command can open."""
    if location == ":memory:":
        return None
    if location.startswith(_POSTGRES):
        from lamar.atomic import lamar_home

        digest = hashlib.sha256(location.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        try:
            return lamar_home() / f"last-sleep-{digest}.json"
        except RuntimeError:  # no home folder known (as some MCP clients start a server): nowhere to keep it
            return None
    path = Path(location).expanduser()
    return path.with_name(path.name + ".last-sleep.json")


def record_sleep(location: str, report: SleepReport, *, saved_to: str | None = None, store: object = None) -> None:
    """Keep `report`'s time, proposal count and mining figures as the last sleep of the store at `location`
    (`saved_to`: where the report was saved, which `lamar stats` names). A database keeps them in itself, through
    `store` when it is that database's open store, else through one opened here, so every user's `lamar stats`
    reads the same.

    Raises:
        OSError: the file could not be written (the one kept before stays whole).
        StoreError: the database could not keep them.
    """
    mining, rejected = report.summary.get("mining"), report.summary.get("rejected")
    data = {"format": FORMAT, "created": report.created, "made_at": report.made_at,
            "proposals": len(report.proposals), "rejected": len(rejected) if isinstance(rejected, list) else 0,
            "mining": dict(mining) if isinstance(mining, Mapping) else {},
            "report": saved_to}
    _keep(location, json.dumps(data, ensure_ascii=False, default=str) + "\n", store)


def carry_sleep(source: str, target: str) -> None:
    """Give the store at `target`, a copy of the one at `source` (`lamar export`, `import`), the source's last sleep
    when it keeps none of its own, so that a team that moved its store still sees when sleep last ran. Best effort:
    a failure costs the copy nothing but a logged warning."""
    from lamar._errors import LamarError

    try:
        kept = _read(source)
        if kept is not None and _read(target) is None:
            _keep(target, json.dumps(kept, ensure_ascii=False, default=str) + "\n", None)
    except (OSError, RuntimeError, LamarError) as exc:
        import logging

        logging.getLogger(__name__).warning("the last sleep's figures were not copied to %s: %s", target, exc)


def _read(location: str) -> dict[str, Any] | None:
    if not location.startswith(_POSTGRES):
        return last_sleep(location)
    with _noted(location, None) as noted:
        return last_sleep(location, noted)


def _keep(location: str, text: str, store: object) -> None:
    if location.startswith(_POSTGRES):
        with _noted(location, store) as noted:
            noted.save_note(_NOTE, text)
        return
    path = last_sleep_path(location)
    if path is None:
        return
    from lamar.atomic import own_folder, replace_file

    if path.parent.name == ".lamar":  # Lamar's own folder, made private (the figures quote trace ids)
        own_folder(path.parent)
    replace_file(path, text.encode("utf-8"))


@contextlib.contextmanager
def recorded_by_caller() -> Iterator[None]:
    """Within: a sleep leaves its record to the caller, which calls `record_sleep` once its report is saved."""
    token = _CALLER_RECORDS.set(True)
    try:
        yield
    finally:
        _CALLER_RECORDS.reset(token)


@contextlib.contextmanager
def _noted(location: str, store: object) -> Iterator[NotedStore]:
    """`store` when it keeps notes, else the store at `location` opened for the call and closed after it."""
    if isinstance(store, NotedStore):
        yield store
        return
    from lamar.store import open_store

    opened = open_store(location)
    close = opened.close
    try:
        if not isinstance(opened, NotedStore):  # a database store always keeps notes
            raise TypeError(f"{type(opened).__name__} keeps no notes")
        yield opened
    finally:
        close()


def keep_sleep(location: str, report: SleepReport, store: object = None) -> None:
    """`record_sleep` as every sleep calls it, before a report is saved anywhere: a file that cannot be
    written costs the sleep nothing but a logged warning. A store whose location is neither a database URL
    nor a file that exists (a third-party store's name) has no place beside it that `lamar stats` reads.
    Nothing within `recorded_by_caller`."""
    if _CALLER_RECORDS.get():
        return
    if not location.startswith(_POSTGRES) and not Path(location).expanduser().is_file():
        return
    from lamar._errors import StoreError

    try:
        record_sleep(location, report, store=store)
    except (OSError, RuntimeError, StoreError) as exc:  # RuntimeError: no home folder for ~/.lamar
        import logging

        logging.getLogger(__name__).warning("the last sleep's figures for `lamar stats` were not kept: %s", exc)


def last_sleep(location: str, store: object = None) -> dict[str, Any] | None:
    """The last sleep `record_sleep` kept for the store at `location` (a database's read through `store`, its open
    store), or None when none was (or it is unreadable)."""
    path = last_sleep_path(location)
    try:
        text = store.load_note(_NOTE) if isinstance(store, NotedStore) else None
        if text is None and path is not None:  # a database's sleeps kept before it kept them: in a home folder
            text = path.read_text(encoding="utf-8")
        data = json.loads(text) if text is not None else None
    except (OSError, ValueError, RecursionError):  # unreadable, or edited into something else: none to show
        return None
    created = data.get("created") if isinstance(data, dict) else None
    # A hand edit's NaN or 1e300 is no time to print.
    ok = data.get("format") == FORMAT and isinstance(created, (int, float)) and 0 <= created < 1e11 \
        if isinstance(data, dict) else False
    return data if ok else None


__all__ = ["FORMAT", "NotedStore", "carry_sleep", "keep_sleep", "last_sleep", "last_sleep_path", "record_sleep",
           "recorded_by_caller"]
