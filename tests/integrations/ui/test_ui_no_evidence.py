"""A lesson whose few randomized episodes leave every lift possible reads "no evidence yet" with no
lift on its page, as `lamar show` prints "n/a"."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from tests.cli.test_cli_no_evidence import barely_measured


def test_the_lesson_page_says_no_evidence_yet_and_shows_no_lift(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from tests.integrations.ui.test_ui_trial import _get, serving

    exp_id, randomized = barely_measured(tmp_path / "s.db")
    with serving(tmp_path / "s.db") as url:
        page = html.unescape(_get(url, f"/lessons/{exp_id}"))
    said = f"no evidence yet: {randomized} randomized episode"
    assert said in page and "leave every lift from -2 to +2 possible" in page, page[:3_000]
    assert "lift n/a" not in page
