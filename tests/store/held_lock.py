"""Whether a fold-mode namespace's write lock is held exclusively at a given moment: what the checkpoint
tests check their work against."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lamar.store.postgres import locks


def watch_exclusive(monkeypatch: pytest.MonkeyPatch, before: Callable[[], object] | None = None) -> list[bool]:
    """Patch `locks.exclusive` so that the list's one item says whether it is held now; `before`, once, runs
    just before the lock is first taken."""
    exclusive, held, first = locks.exclusive, [False], [before] if before is not None else []

    @contextlib.contextmanager
    def watched(db: Any) -> Iterator[None]:
        if first:
            first.pop()()
        with exclusive(db):
            held[0] = True
            try:
                yield
            finally:
                held[0] = False

    monkeypatch.setattr(locks, "exclusive", watched)
    return held
