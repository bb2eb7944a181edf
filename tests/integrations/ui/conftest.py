"""Fixtures shared by the `lamar ui` tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope


@pytest.fixture
def served_lesson(tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    """A store of one lesson served by `lamar ui`: (its URL, the store's path, the lesson's id)."""
    pytest.importorskip("starlette")
    from tests.integrations.ui.test_ui_trial import serving

    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(path) as url:
        yield url, path, exp_id
