"""`lamar ui` edits a lesson: a form filled with it, a review, then its next version (`Lamar.edit`);
a refused edit shows the form again with the reason and writes nothing."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get


def _lesson(path: Path, exp_id: str) -> tuple[Experience, int]:
    with Lamar(str(path)) as lam:
        return lam.get(exp_id), lam.evidence(exp_id).restarts


def test_a_lesson_is_edited_after_a_review(served_lesson: tuple[str, Path, str]) -> None:
    url, path, exp_id = served_lesson
    page = html.unescape(_get(url, f"/lessons/{exp_id}"))
    assert f"/lessons/{exp_id}/edit" in page
    form = html.unescape(_get(url, f"/lessons/{exp_id}/edit"))
    assert '>\nclear the cache</textarea>' in form and 'value="project=trace"' in form
    values = {"precondition": "the build fails", "action": "clear DerivedData", "rationale": "stale module maps",
              "scope": "project=trace language=swift"}
    review = html.unescape(_get(url, f"/lessons/{exp_id}/edit", values))
    assert "Store this as the lesson's next version?" in review and "Its evidence restarts" in review
    assert _lesson(path, exp_id)[0].action == "clear the cache"  # nothing written by the review
    shown = html.unescape(_get(url, f"/lessons/{exp_id}/edit", {**values, "confirm": "yes"}))
    edited, restarts = _lesson(path, exp_id)
    assert (edited.action, edited.scope, edited.provenance["version"], restarts) == (
        "clear DerivedData", Scope(project="trace", language="swift"), 2, 1)
    assert "edited to version 2 (action, rationale, scope); evidence restarted: edited in lamar ui" in shown


@pytest.mark.parametrize("change, words", [
    ({"action": ""}, "action is empty"),
    ({"action": "rerun it", "keep": "yes"}, "wording fix"),
    ({"scope": "project"}, "KEY=VALUE"),
    ({}, "nothing to edit"),
])
def test_a_refused_edit_shows_the_form_again_and_writes_nothing(served_lesson: tuple[str, Path, str],
                                                                change: dict[str, str], words: str) -> None:
    url, path, exp_id = served_lesson
    before = path.read_bytes(), _lesson(path, exp_id)
    values = {"precondition": "the build fails", "action": "clear the cache", "rationale": "", "scope": "project=trace",
              **change, "confirm": "yes"}
    page = html.unescape(_get(url, f"/lessons/{exp_id}/edit", values))
    assert words in page and 'class="error"' in page
    assert _lesson(path, exp_id) == before[1]


def test_an_edit_sent_twice_stores_once_and_shows_the_lesson_both_times(served_lesson: tuple[str, Path, str]) -> None:
    # A double click on "Yes, store it" sends the form twice; the second answer, the one the browser
    # shows, said the lesson "was edited since this form was opened" by the edit it had just stored.
    url, path, exp_id = served_lesson
    values = {"precondition": "the build  fails", "action": "clear DerivedData", "rationale": "",
              "scope": "project=trace", "version": "1", "confirm": "yes"}
    first = html.unescape(_get(url, f"/lessons/{exp_id}/edit", values))
    second = html.unescape(_get(url, f"/lessons/{exp_id}/edit", values))
    assert 'class="error"' not in second, second[-600:]
    assert "edited to version 2 (action)" in first and "edited to version 2 (action)" in second
    edited, restarts = _lesson(path, exp_id)
    assert (edited.action, edited.provenance["version"], restarts) == ("clear DerivedData", 2, 1)

