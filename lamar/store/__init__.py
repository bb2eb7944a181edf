"""Stores: the `Store` protocol, and `ExperienceStore(location)` and `open_store(location)`,
which pick a backend from the location's form."""

from __future__ import annotations

import abc
import os
from typing import TYPE_CHECKING, Any

from lamar._errors import InvalidArgument, StoreError
from lamar.store.base import Event, KeyedStore, RewritableStore, Store

if TYPE_CHECKING:
    from lamar.store.json_file import JsonStore
    from lamar.store.memory import MemoryStore
    from lamar.store.sqlite import SqliteStore

# Each backend loads when first opened (or named) and registers itself as an ExperienceStore,
# so `import lamar` pays for none of them (tests/test_import.py).
_BACKENDS = {"JsonStore": "lamar.store.json_file", "MemoryStore": "lamar.store.memory",
             "SqliteStore": "lamar.store.sqlite"}


def __getattr__(name: str) -> Any:
    module = _BACKENDS.get(name)
    if module is None:
        raise AttributeError(f"module 'lamar.store' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)

_BUILT_IN = frozenset({*_BACKENDS.values(), "lamar.store.postgres.store"})
_SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_UNKNOWN_BACKEND = ("cannot tell the backend of {text!r}: use ':memory:', a .json file, a .db/.sqlite/.sqlite3 "
                    "file, or a postgresql:// URL")


class ExperienceStore(abc.ABC):
    """Open the store at `location`; the backend is chosen from its form.

    >>> type(ExperienceStore(":memory:")).__name__
    'MemoryStore'
    >>> isinstance(ExperienceStore(":memory:"), ExperienceStore)
    True
    """

    location: str

    @classmethod
    def __subclasshook__(cls, other: type) -> Any:
        # The built-in backends count as ExperienceStores by the module that defines them, so that
        # none of them has to import this package (and the package loads each only when used).
        if cls is ExperienceStore and any(k.__module__ in _BUILT_IN for k in other.__mro__):
            return True
        return NotImplemented

    def __new__(cls, location: str | os.PathLike[str] = ":memory:", **options: Any) -> Any:
        return open_store(location, **options)

    @abc.abstractmethod
    def append(self, events: Any) -> list[Event]: ...

    @abc.abstractmethod
    def read(self, after: int = 0) -> list[Event]: ...

    @abc.abstractmethod
    def close(self) -> None: ...


def open_store(location: str | os.PathLike[str], **options: Any) -> Store:
    """The backend for `location`:

        ":memory:"                       MemoryStore    in-process, nothing on disk
        "*.json"                         JsonStore      human-readable file
        "*.db", "*.sqlite", "*.sqlite3"  SqliteStore    WAL, many processes
        "postgresql://..."               PostgresStore  (the `postgres` extra)
    """
    if not isinstance(location, (str, os.PathLike)):
        raise StoreError(f"a store location is a path or URL string; got {type(location).__name__}")
    text = os.fspath(location)
    if text == ":memory:":
        from lamar.store.memory import MemoryStore

        _check_options(MemoryStore, options)
        return MemoryStore()
    if text.startswith(("postgresql://", "postgres://")):
        try:
            from lamar.store.postgres import PostgresStore
        except ImportError as exc:
            from lamar.extras import needs_extra

            raise ImportError(needs_extra("a PostgreSQL store needs psycopg 3", "postgres", exc)) from exc
        _check_options(PostgresStore, options)
        return PostgresStore(text, **options)
    refusal = location_refusal(text)
    if refusal is not None:
        raise StoreError(refusal)
    path = os.path.expanduser(text)  # os.path, not pathlib: `import lamar` stays cheap (tests/test_import.py)
    if path.startswith("~"):
        # As a client that starts `lamar mcp` may, with no HOME, as a user the password database lacks.
        first = path.split(os.sep)[0]
        if first != "~":  # another user's home: HOME, set or not, has no say in it
            raise StoreError(f"cannot open {text!r}: {first!r} names no folder here (no user {first[1:]!r} is known "
                             "here): give the store's full path")
        raise StoreError(f"cannot open {text!r}: {first!r} names no folder here (HOME is unset and the password "
                         "database has no home for this user): give the store's full path, or set HOME")
    if os.path.splitext(path)[1].lower() == ".json":
        from lamar.store.json_file import JsonStore

        _check_options(JsonStore, options)
        return JsonStore(path, **options)
    from lamar.store.sqlite import SqliteStore  # the one other suffix `location_refusal` lets through

    _check_options(SqliteStore, options)
    return SqliteStore(path, **options)


def location_refusal(text: str) -> str | None:
    """Why `open_store` refuses `text` by its form alone (None when it would open it): a URL
    other than PostgreSQL's, or a file that is none of the backends'. Nothing is opened."""
    if text == ":memory:" or text.startswith(("postgresql://", "postgres://")):
        return None
    refusal = _not_a_path(text) or _unnameable(text)
    if refusal is not None:
        return refusal
    if os.path.splitext(os.path.expanduser(text))[1].lower() in (".json", *_SQLITE_SUFFIXES):
        return None
    told = _UNKNOWN_BACKEND.format(text=text)
    if text.strip() != text and location_refusal(text.strip()) is None:
        # A path pasted into a client's JSON config may carry a space that its quotes hide.
        told += f" (without the blank space around it, {text.strip()!r} would be one: remove that space)"
    return told


def _unnameable(text: str) -> str | None:
    """Why no file system can hold a file named `text` (None when one can): a NUL, or a lone
    surrogate that the file system's encoding has no bytes for."""
    if "\0" in text:
        return f"the store path {text!r} cannot name a file: it holds a NUL character; remove it"
    try:
        os.fsencode(text)
    except UnicodeEncodeError as exc:
        return (f"the store path {text!r} cannot name a file: it holds {text[exc.start]!r}, which the file "
                "system's encoding cannot write; decode the name properly")
    return None


def _not_a_path(text: str) -> str | None:
    """Why a URL other than PostgreSQL's is refused (None for a path): taken as a path,
    "sqlite:///x.db" would be a store in a folder named "sqlite:", apart from the file meant."""
    scheme, colon, rest = text.partition(":")
    kind = scheme.lower()
    if colon and kind in ("sqlite", "file"):
        if kind == "sqlite":  # SQLAlchemy's form: three slashes, then the path (a fourth: absolute)
            path = rest[3:] if rest.startswith("///") else rest.removeprefix("//")
        else:
            from urllib.parse import unquote, urlsplit

            path = unquote(urlsplit(text).path)
        path = path.split("?", 1)[0]
        return (f"{text!r} is a {kind}: URL, and a store location is a file path: pass the path itself: "
                f"{path!r}")
    if colon and len(scheme) > 1 and rest.startswith("//"):  # one letter: a Windows drive
        return (f"cannot tell the backend of a {scheme}:// URL: a URL locates only a PostgreSQL store "
                "(postgresql://...); otherwise use ':memory:', a .json file or a .db/.sqlite/.sqlite3 file")
    return None


def _check_options(backend: type, options: dict[str, Any]) -> None:
    """Refuse a keyword the backend does not take, naming those it does (a memory store would
    otherwise ignore it, and another backend raise a bare TypeError)."""
    if not options:
        return
    import inspect  # only when options are given: opening a store by location alone stays cheap

    taken = [name for name, p in inspect.signature(backend).parameters.items()
             if p.kind is inspect.Parameter.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(taken))
    if unknown:
        what = f"its options are {taken}" if taken else "it takes none"
        raise InvalidArgument(f"{backend.__name__} has no option {unknown[0]!r}; {what}")


__all__ = [
    "Event", "ExperienceStore", "JsonStore", "KeyedStore", "MemoryStore", "RewritableStore", "SqliteStore", "Store",
    "open_store",
]
