"""`lamar ui` adds many lessons at once, as `lamar add --from` does: reviewed first, all or none; a
store that fails part-way gets a page saying which went in, and the same form sent again adds the rest."""

from __future__ import annotations

import contextlib
import html
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.store import sqlite_checks

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, serving

LESSONS = """## Build
- When the Xcode build fails after a bump, clear DerivedData, because stale module maps survive
- When a lint error shows on CI only, pin the linter's version
"""


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    # The store's failure part-way is a trigger's (`_store_fails_on`), which a store refuses to write
    # beside; that refusal is not what is tested here, so the server's process lets the trigger be.
    allow = "from lamar.store import sqlite_checks\nsqlite_checks.refuse_triggers = lambda db, path: None"
    monkeypatch.setattr(sqlite_checks, "refuse_triggers", lambda db, path: None)  # this process reads it too
    with serving(path, before=allow) as url:
        yield url, path


def _texts(path: Path) -> list[str]:
    with Lamar(str(path)) as lam:
        return [e.render() for e in lam.experiences()]


def test_many_lessons_are_shown_then_added_with_the_scope(server: tuple[str, Path]) -> None:
    url, path = server
    before = _texts(path)
    review = html.unescape(_get(url, "/add/many", {"lessons": LESSONS, "scope": "project=trace"}))
    assert "Add these 2 lessons?" in review and "pin the linter's version" in review
    one = html.unescape(_get(url, "/add/many", {"lessons": LESSONS.splitlines()[2], "scope": ""}))
    assert "Add this lesson?" in one and "these 1" not in one, one  # not "Add these 1 lesson?"
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
    (LESSONS + "- When the API refuses, send ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n", "", "the text, line 4"),
])
def test_a_bad_line_adds_nothing_even_when_confirmed(server: tuple[str, Path], text: str, scope: str,
                                                     words: str) -> None:
    url, path = server
    before = path.read_bytes(), _texts(path)
    page = html.unescape(_get(url, "/add/many", {"lessons": text, "scope": scope, "confirm": "yes"}))
    assert words in page and 'class="error"' in page
    assert text.splitlines()[0] in page  # the text comes back to be mended, not lost
    assert _texts(path) == before[1]


def test_ids_that_do_not_match_the_lessons_reviewed_add_nothing(server: tuple[str, Path]) -> None:
    url, path = server
    before = _texts(path)
    for ids in ("exp_same exp_same", "exp_one"):  # one id for two lessons would keep only the first
        page = html.unescape(_get(url, "/add/many", {"lessons": LESSONS, "ids": ids, "confirm": "yes"}))
        assert "the text no longer holds the lessons reviewed: review them again" in page
    assert _texts(path) == before


def _store_fails_on(path: Path, words: str) -> None:
    """SQLite fails to write the event that holds `words` (a blob past its size limit), as it would on
    a full disk; a trigger's RAISE would be a constraint error, which the store reads as a key clash."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(f"CREATE TRIGGER full BEFORE INSERT ON events WHEN NEW.data LIKE '%{words}%' "
                   "BEGIN SELECT zeroblob(2000000000); END")
        db.commit()


def _store_mended(path: Path) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("DROP TRIGGER full")
        db.commit()


def test_a_store_failing_part_way_says_which_were_added_and_the_same_form_adds_the_rest_once(
        server: tuple[str, Path]) -> None:
    url, path = server
    three = LESSONS + "- When a migration times out, run it in batches\n"
    before = _texts(path)
    review = _get(url, "/add/many", {"lessons": three, "scope": "project=trace"})
    ids = re.findall(r'name="ids" value="([^"]+)"', review)
    assert len(ids) == 1 and len(ids[0].split()) == 3
    form = {"lessons": three, "scope": "project=trace", "ids": ids[0], "confirm": "yes"}
    _store_fails_on(path, "pin the linter")
    page = html.unescape(_get(url, "/add/many", form))
    assert "the store refused lesson 2 of 3, so 1 was added and 2 not (" in page, page[-1500:]
    assert "string or blob too big; nothing of this write was kept" in page
    assert re.findall(r'<strong class="(added|error)">', page) == ["added", "error", "error"]
    assert "Add the 2 lessons not added?" in page and "Yes, add 2 lessons" in page
    assert re.findall(r'name="ids" value="([^"]+)"', page) == ids  # the button sends the same review again
    with Lamar(str(path)) as lam:
        assert [e.action for e in lam.experiences()[len(before):]] == ["clear DerivedData"]
    _store_mended(path)
    _get(url, "/add/many", form)  # the same form, sent again
    with Lamar(str(path)) as lam:
        added = lam.experiences()[len(before):]
    assert [e.action for e in added] == ["clear DerivedData", "pin the linter's version", "run it in batches"]
    assert [e.id for e in added] == ids[0].split()
