"""`lamar ui` finds and tries lessons: the lessons page's words filter (every word, any case, in the
text, scope or id, as `lamar search`), and the dry run (Try a context): each eligible lesson with
whether the selection wants it and why, and the prompt a recall would add, as `lamar recall
--dry-run` shows them; no episode is logged, and a context that is not KEY=VALUE is a message."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.store import open_store

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, serving


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    path = tmp_path / "lessons.db"
    with Lamar(str(path), k=1, seed=2) as lam:
        ids = {"swift": lam.add(Experience("the Xcode build fails", "clear DerivedData <b>first</b>",
                                           scope=Scope(project="trace", language="swift"))),
               "trace": lam.add(Experience("a test fails only in CI", "compare the CI locale",
                                           scope=Scope(project="trace"))),
               "shop": lam.add(Experience("a migration times out", "run it in batches", scope=Scope(project="shop")))}
        for _ in range(30):
            rec = lam.recall({"project": "trace", "language": "swift"})
            lam.report(rec.episode_id, 1.0 if ids["swift"] in rec.ids else -0.5)
    with serving(path) as url:
        yield url, path, ids


def _events(path: Path) -> list[tuple[int, str]]:
    store = open_store(str(path))
    try:
        return [(e.seq, e.kind) for e in store.read(0)]
    finally:
        store.close()


def test_a_context_shows_each_eligible_lesson_and_why_and_logs_nothing(
        server: tuple[str, Path, dict[str, str]]) -> None:
    url, path, ids = server
    before = _events(path)
    empty = _get(url, "/recall")
    assert 'action="/recall"' in empty and "Nothing is logged" in empty and "<table" not in empty
    page = _get(url, "/recall?context=project%3Dtrace+language%3Dswift")
    shown = re.findall(r'<tr class="(wanted|not-wanted)" data-id="([^"]+)">', page)
    assert sorted(i for _, i in shown) == sorted([ids["swift"], ids["trace"]])  # not the shop's lesson
    assert [kind for kind, _ in shown].count("wanted") == 1 and shown[0][0] == "wanted"  # k=1, wanted first
    assert "Nothing was logged. 2 eligible lessons for" in html.unescape(page)
    assert "The prompt a recall would add" in page
    assert "&lt;b&gt;first&lt;/b&gt;" in page and "<b>first</b>" not in page  # lesson text is escaped
    assert _events(path) == before  # no episode, no event of any kind


def test_a_bad_context_is_a_message_and_changes_nothing(server: tuple[str, Path, dict[str, str]]) -> None:
    url, path, _ = server
    before = _events(path)
    page = html.unescape(_get(url, "/recall?context=project"))
    assert "context 'project' is not KEY=VALUE" in page and 'class="error"' in page
    nothing = html.unescape(_get(url, "/recall?context=project%3Dnowhere"))
    assert "Nothing was logged. 0 eligible lessons" in nothing and "<table" not in nothing
    assert _events(path) == before


def test_the_lessons_page_finds_every_word_of_q_in_any_case_within_the_scope(
        server: tuple[str, Path, dict[str, str]]) -> None:
    url, _, ids = server

    def listed(query: str) -> list[str]:
        return re.findall(r'<tr class="lesson \w+" data-id="([^"]+)">', _get(url, f"/?{query}"))

    assert listed("q=FAILS") == [ids["swift"], ids["trace"]]
    assert listed("q=fails+xcode") == [ids["swift"]]  # every word must appear
    assert listed("q=language%3Dswift") == [ids["swift"]]  # the scope is searched too
    assert listed("q=fails&scope=language%3Dswift") == [ids["swift"]]
    assert listed("q=batches&scope=project%3Dtrace") == []
    assert "No lesson matches." in _get(url, "/?q=kubernetes")
