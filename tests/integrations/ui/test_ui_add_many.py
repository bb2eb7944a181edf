"""`lamar ui` adds many lessons at once, as `lamar add --from` does: reviewed first, all or none."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, serving

LESSONS = """## Build
- When the Xcode build fails after a bump, clear DerivedData, because stale module maps survive
- When a lint error shows on CI only, pin the linter's version
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(path) as url:
        yield url, path


def _texts(path: Path) -> list[str]:
    with Lamar(str(path)) as lam:
        return [e.render() for e in lam.experiences()]


def test_many_lessons_are_shown_then_added_with_the_scope(server: tuple[str, Path]) -> None:
    url, path = server
    before = _texts(path)
    review = html.unescape(_get(url, "/add/many", {"lessons": LESSONS, "scope": "project=trace"}))
    assert "Add these 2 lessons?" in review and "pin the linter's version" in review
    assert _texts(path) == before  # nothing written by the review
    _get(url, "/add/many", {"lessons": LESSONS, "scope": "project=trace", "confirm": "yes"})
    with Lamar(str(path)) as lam:
        added = lam.experiences()[len(before):]
    assert [e.action for e in added] == ["clear DerivedData", "pin the linter's version"]
    assert all(dict(e.scope) == {"project": "trace"} and e.provenance["via"] == "lamar ui" for e in added)


@pytest.mark.parametrize("text, scope, words", [
    (LESSONS + "- Always be kind\n", "", "the text, line 4"),
    ('{"precondition": "p", "action": "a"}\n{"precondtion": "p"}\n', "", "the text, line 2"),
    (LESSONS, "project", "KEY=VALUE"),
    ("no bullets at all\n", "", "holds no lesson"),
])
def test_a_bad_line_adds_nothing_even_when_confirmed(server: tuple[str, Path], text: str, scope: str,
                                                     words: str) -> None:
    url, path = server
    before = path.read_bytes(), _texts(path)
    page = html.unescape(_get(url, "/add/many", {"lessons": text, "scope": scope, "confirm": "yes"}))
    assert words in page and 'class="error"' in page
    assert text.splitlines()[0] in page  # the text comes back to be mended, not lost
    assert _texts(path) == before[1]
