"""`Lamar.page` on a SQLite store: the lessons a page at a time from a place in the order they were added,
each page copying only its own lessons, the places unmoved by lessons retired or added by another process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, InvalidArgument, InvalidContext, Lamar, LamarError, Scope
from lamar.store import open_store


def _fill(path: Path, lessons: int) -> list[str]:
    """`lessons` lessons over three projects, every fourth of them about the cache; their ids."""
    with Lamar(str(path), seed=0) as lam:
        return [lam.add(Experience(f"case {i} comes up", f"clear the cache {i}" if i % 4 == 0 else f"do step {i}",
                                   scope=Scope(project=f"p{i % 3}"))) for i in range(lessons)]


def test_walking_the_pages_lists_what_experiences_lists_with_the_same_filters(tmp_path: Path) -> None:
    added = _fill(tmp_path / "s.db", 30)
    with Lamar(str(tmp_path / "s.db"), seed=0) as lam:
        first = lam.page()
        assert [e.id for e in first.lessons] == added[:20] and first.places == list(range(20))
        assert (first.count, first.next) == (30, 20)
        last = lam.page(first.next)
        assert [e.id for e in last.lessons] == added[20:] and (last.count, last.next) == (30, None)
        page = lam.page(0, 2, context={"project": "p1", "task": "any"}, text="CACHE")  # p1 and "cache": 4, 16, 28
        assert [e.id for e in page.lessons] == [added[4], added[16]] and page.places == [4, 16]
        assert (page.count, page.next) == (3, 28)
        assert lam.page(page.next, 2, context={"project": "p1"}, text="cache").places == [28]
        assert lam.page(30).lessons == [] and lam.page(30).count == 30  # the end of the store is a place too


def test_a_lesson_retired_or_added_by_another_process_moves_no_other(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    added = _fill(store, 12)
    with Lamar(str(store), seed=0) as lam:
        page = lam.page(0, 5, status="active")
        assert [e.id for e in page.lessons] == added[:5] and page.next == 5
        with Lamar(str(store), seed=1) as other:  # another engine, as `lamar retire` and `lamar add` are
            other.retire(added[1], "superseded")
            other.retire(added[7], "superseded")
            late = other.add(Experience("a late case comes up", "do the late step"))
        rest: list[str] = []
        start = page.next
        while start is not None:
            page = lam.page(start, 5, status="active")
            rest, start = rest + [e.id for e in page.lessons], page.next
            assert page.count == 11
        assert rest == [*added[5:7], *added[8:], late]


def test_a_page_hands_out_copies_of_its_lessons_only(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _fill(tmp_path / "s.db", 40)
    with Lamar(str(tmp_path / "s.db"), seed=0) as lam:
        copied: list[str] = request.getfixturevalue("copied")  # from here on
        page = lam.page(30, 3, status="active")
        assert copied == [e.id for e in page.lessons] and len(copied) == 3 and page.count == 40
        page.lessons[0].provenance["note"] = "changed by the caller"
        assert "note" not in lam.get(page.lessons[0].id).provenance


@pytest.mark.parametrize(("arguments", "error", "says"), [
    ({"start": -1}, InvalidArgument, "start is a place in the order the lessons were added, a whole number >= 0"),
    ({"start": 6}, InvalidArgument, "from 0 to 5 here"),
    ({"start": True}, InvalidArgument, "start is a place"),
    ({"start": "2"}, InvalidArgument, "start is a place"),
    ({"limit": 0}, InvalidArgument, "limit is the most lessons a page holds"),
    ({"limit": 2.0}, InvalidArgument, "limit is the most lessons a page holds"),
    ({"status": "done"}, InvalidArgument, "status must be one of"),
    ({"text": " "}, InvalidArgument, "search for some words"),
    ({"context": ["p1"]}, InvalidContext, "a context must be a mapping of strings"),
    ({"context": {"project": 1}}, InvalidContext, "must be a string"),
])
def test_a_bad_argument_is_refused_and_changes_nothing(tmp_path: Path, arguments: dict[str, Any],
                                                        error: type[LamarError], says: str) -> None:
    _fill(tmp_path / "s.db", 5)
    raw = open_store(str(tmp_path / "s.db"))
    before = [(e.seq, e.kind, e.data) for e in raw.read(0)]
    with Lamar(str(tmp_path / "s.db"), seed=0) as lam, pytest.raises(error, match=says):
        lam.page(**arguments)
    assert [(e.seq, e.kind, e.data) for e in raw.read(0)] == before
    raw.close()
