"""Which file backend a file holds, told by how it opens: never by its name, nor by text further in
(a store's lessons are free text, and may quote any marker)."""

from __future__ import annotations

import os
import re

_SQLITE = b"SQLite format 3\x00"  # how every SQLite database file opens
_JSON_STORE = re.compile(rb'\A\s*\{\s*"format"\s*:\s*"lamar"\s*,')  # both versions open with it


def head_kind(head: bytes) -> str | None:
    """"sqlite" or "json" for a file's first bytes when they open a SQLite database or a Lamar
    JSON store, else None."""
    if head.startswith(_SQLITE):
        return "sqlite"
    return "json" if _JSON_STORE.match(head) else None


def file_kind(path: str | os.PathLike[str]) -> str | None:
    """`head_kind` of the file at `path` (None when it cannot be read)."""
    try:
        with open(path, "rb") as fh:
            return head_kind(fh.read(4096))
    except OSError:
        return None


__all__ = ["file_kind", "head_kind"]
