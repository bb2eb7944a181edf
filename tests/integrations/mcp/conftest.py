"""Fixtures for the MCP tests: a SQLite store holding a few lessons, and its events for before/after checks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope
from lamar.store import open_store

LESSONS = [
    Experience("the Xcode build fails after a dependency bump", "clear DerivedData before rebuilding",
               "stale module maps survive a clean build", scope=Scope(project="trace", language="swift")),
    Experience("a test fails only in CI", "compare the CI locale with yours", "date formats differ",
               scope=Scope(project="trace")),
    Experience("a migration times out", "run it in batches", "long locks block writers", scope=Scope(project="shop")),
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A SQLite store with three lessons, two of them eligible for {project: trace, language: swift}."""
    path = tmp_path / "experience.db"
    with Lamar(str(path), seed=0) as lam:
        for lesson in LESSONS:
            lam.add(lesson)
    return path


def events(path: Path) -> list[tuple[int, str, Any]]:
    """Every event in the store, to compare before and after a call that must change nothing."""
    raw = open_store(str(path))
    try:
        return [(e.seq, e.kind, e.data) for e in raw.read(0)]
    finally:
        raw.close()
