"""Where the command's store is, opening it (without creating it for read-only commands)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from lamar._errors import StoreError, UnknownExperience, echoed
from lamar.engine import Lamar
from lamar.store import _SQLITE_SUFFIXES, Store, location_refusal, open_store

DEFAULT_STORE = "~/.lamar/experience.json"
STORE_ENV = "LAMAR_STORE"


class UsageError(Exception):
    """The command line asked for something impossible; the message says what to do (exit 1)."""


class NoStore(StoreError):
    """No file store at `path`: the CLI's handler may name a store the user more likely meant."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


def store_location(args: argparse.Namespace) -> str:
    """--store, else $LAMAR_STORE, else ~/.lamar/experience.json; a --store given empty is refused."""
    named = getattr(args, "store", None)
    if named is not None and not named.strip():
        # An empty `--store "$UNSET_VARIABLE"` is a mistake; taken as "not given" it would quietly
        # read and write the default store, another store than the one meant.
        raise UsageError(f"--store is empty: name a store (--store PATH), or leave the flag out to use "
                         f"${STORE_ENV}, else {DEFAULT_STORE}")
    return named or os.environ.get(STORE_ENV) or DEFAULT_STORE


def is_file_location(location: str) -> bool:
    return location != ":memory:" and not location.startswith(("postgresql://", "postgres://"))


def require_existing(location: str, fix: str | None = None) -> None:
    """Raise StoreError when a file store is absent, so a read never creates one (nor a typo a new store)."""
    refusal = location_refusal(location)  # a location no backend takes: say so, not "no store at" it
    if refusal is not None:
        raise StoreError(refusal)
    path = Path(location).expanduser()
    if is_file_location(location) and path.suffix.lower() in _SQLITE_SUFFIXES and _empty(path):
        # SQLite takes an empty file for an empty database: a read would make it a store.
        raise StoreError(f"{path} is an empty file, not a store yet: " + (fix or (
            "`lamar add --create` or `lamar import` makes it one")))
    if is_file_location(location) and not path.exists():
        beside = store_beside(path)
        # A path the user named is more likely a typo than a wish for another store: "pass --store"
        # would be advice they already followed.
        where = (f"pass --store PATH or set {STORE_ENV}" if location == DEFAULT_STORE
                 else f"check --store and ${STORE_ENV} for a typo")
        raise NoStore(path, f"no store at {Path(location).expanduser()}: " + (fix or (
            f"{where} (a new store is created by `lamar add --create` or `lamar import`)"))
            + (f"; there is one at {beside}: pass --store {beside}, or export "
               f"{STORE_ENV}={beside} for every command" if beside else ""))
    if location.startswith(("postgresql://", "postgres://")):
        from lamar.store.postgres.store import namespace_exists
        from lamar.store.postgres.url import parse_url

        if not namespace_exists(location):
            _, namespace, shown, _ = parse_url(location, None)
            raise StoreError(f"no store at {shown}: namespace {namespace!r} holds no events there; " + (fix or (
                "check lamar_namespace for a typo (a new store is created by `lamar add --create` or "
                "`lamar import`)")))


def store_beside(path: Path) -> Path | None:
    """The same name with another store's suffix, when one exists: the docs' `--store ~/.lamar/experience.db`
    beside the default `~/.lamar/experience.json`, given once to `install` and then left out."""
    for suffix in (*_SQLITE_SUFFIXES, ".json"):
        other = path.with_suffix(suffix)
        if other != path and other.is_file() and not _empty(other):
            return other
    return None


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def open_raw(location: str, *, create: bool, busy: str = "run the command again once that writer is done") -> Store:
    """The store at `location`; unless `create`, a missing file store is an error. A SQLite file
    another process keeps locked past the wait says `busy`: what a user of this command can do."""
    if is_file_location(location) and Path(location).expanduser().is_dir():
        path = Path(location).expanduser()
        # Name the store the folder holds, if it holds one of the default names: a guess at another
        # one would cost the user a second error.
        held = [path / name for name in ("experience.db", "experience.json") if (path / name).is_file()]
        raise StoreError(f"{path} is a folder, not a store: name the store file in it (e.g. --store "
                         f"{(held or [path / 'experience.db'])[0]})")
    if not create:
        require_existing(location)
    try:
        return open_store(location)
    except StoreError as exc:
        from lamar.store.sqlite_checks import BUSY_ADVICE

        text = str(exc)
        if not text.endswith(BUSY_ADVICE):
            raise
        # No command takes a timeout: the store's advice to pass a longer one cannot be followed here.
        raise StoreError(text.removesuffix(BUSY_ADVICE) + busy) from exc


def open_engine(args: argparse.Namespace, *, create: bool = False) -> Lamar:
    """The engine over the command's store (see `open_raw`)."""
    return Lamar(open_raw(store_location(args), create=create))


def store_bytes(location: str) -> int | None:
    """Bytes on disk of a file store (with SQLite's WAL), None for other backends."""
    if not is_file_location(location):
        return None
    path = Path(location).expanduser()
    total = 0
    for candidate in (path, path.with_name(path.name + "-wal")):
        try:
            total += candidate.stat().st_size
        except OSError:
            pass
    return total


def backend_name(location: str) -> str:
    if location == ":memory:":
        return "memory"
    if not is_file_location(location):
        return "postgres"
    return "json" if Path(location).suffix.lower() == ".json" else "sqlite"


def resolve_id(ids: Sequence[str], text: str, location: str) -> str:
    """The lesson id `text` names among `ids`: the id itself or a prefix only one id starts with."""
    if text in ids:
        return text
    matches = [i for i in ids if text and i.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:3]) + (", ..." if len(matches) > 3 else "")
        raise UsageError(f"{echoed(text)} is the start of {len(matches)} lesson ids ({shown}): give more of the id")
    raise UnknownExperience(f"no lesson {echoed(text)} in store {location}; `lamar ls` lists the ids")
