"""`lamar ui`'s reviews (add, add many, edit) show each lesson as the store will keep it: a bidi
override or a full-width letter typed in the form is shown as it will be stored, not as typed."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from lamar import Lamar

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get

# Typed: a right-to-left override that makes "evil" read "live", and a full-width "ＳＹＳ".
TYPED = "rerun the job once before investigating \u202eevil\u202c on ＳＹＳ"
STORED = "rerun the job once before investigating evil on SYS"


def _question(page: str) -> str:
    found = re.search(r"<q>(.*?)</q>|<ol>(.*?)</ol>", page, re.DOTALL)
    assert found, page[-800:]
    return html.unescape(found.group(1) or found.group(2))


def _actions(path: Path) -> list[str]:
    with Lamar(str(path)) as lam:
        return [e.action for e in lam.experiences()]


def test_the_add_review_shows_the_text_the_store_keeps(served_lesson: tuple[str, Path, str]) -> None:
    url, path, _ = served_lesson
    form = {"precondition": "the CI runner flakes", "action": TYPED, "rationale": "", "scope": "project=trace"}
    shown = _question(_get(url, "/add", form))
    assert STORED in shown and "\u202e" not in shown, ascii(shown)
    _get(url, "/add", {**form, "confirm": "yes"})
    assert _actions(path)[-1] == STORED


def test_the_many_review_shows_the_text_the_store_keeps(served_lesson: tuple[str, Path, str]) -> None:
    url, path, _ = served_lesson
    text = f"- When the CI runner flakes, {TYPED}\n"
    shown = _question(_get(url, "/add/many", {"lessons": text, "scope": ""}))
    assert STORED in shown and "\u202e" not in shown, ascii(shown)
    _get(url, "/add/many", {"lessons": text, "scope": "", "confirm": "yes"})
    assert _actions(path)[-1] == STORED


def test_the_edit_review_shows_the_text_the_store_keeps(served_lesson: tuple[str, Path, str]) -> None:
    url, path, exp_id = served_lesson
    form = {"precondition": "the build fails", "action": TYPED, "rationale": "", "scope": "project=trace",
            "version": "1"}
    shown = _question(_get(url, f"/lessons/{exp_id}/edit", form))
    assert STORED in shown and "\u202e" not in shown, ascii(shown)
    _get(url, f"/lessons/{exp_id}/edit", {**form, "confirm": "yes"})
    assert _actions(path) == [STORED]


def test_keeping_the_evidence_is_not_refused_for_a_space_the_store_drops(served_lesson: tuple[str, Path, str]) -> None:
    url, _, exp_id = served_lesson
    form = {"precondition": "the build  fails ", "action": "clear the cache ", "rationale": "it is stale",
            "scope": "project=trace", "version": "1", "keep": "yes"}
    page = html.unescape(_get(url, f"/lessons/{exp_id}/edit", form))
    assert "Its evidence is kept" in page and "a new action or scope restarts it" not in page, page[-800:]
