"""What `lamar ui` writes, checked against a real server over HTTP: a sleep report never replaces a
file Lamar did not make, a confirmation sent twice writes once, and a write waiting for another
process's lock leaves the pages answering."""

from __future__ import annotations

import html
import json
import re
import sqlite3
import time
import urllib.error
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, _run_ui, serving

NOTES = '{"name": "my notes, not a sleep report"}\n'


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    return path


@pytest.mark.parametrize("target, words", [
    ("notes", "already exists and is not a sleep report; Run sleep would replace it: name another file"),
    ("store", "is a Lamar store; a sleep report written there would destroy it: name another file"),
    ("folder", "is a folder: name a file for the sleep report"),
    ("nowhere", "is in a folder that does not exist ({folder}): name a file in an existing folder"),
])
def test_a_report_path_that_is_not_a_report_is_refused_at_launch(store: Path, target: str, words: str) -> None:
    notes = store.with_name("notes.json")
    notes.write_text(NOTES)
    report = {"notes": notes, "store": store, "folder": store.parent,
              "nowhere": store.parent / "reports" / "report.json"}[target]
    before = store.read_bytes()
    done = _run_ui(store, "--report", str(report))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr == f"lamar: error: --report {report} {words.format(folder=report.parent)}\n"
    assert notes.read_text() == NOTES and store.read_bytes() == before


def test_run_sleep_does_not_replace_a_file_that_appeared_after_launch(store: Path) -> None:
    report = store.with_name("report.json")
    with serving(store, "--report", str(report)) as url:
        report.write_text(NOTES)
        page = html.unescape(_get(url, "/sleep/run", {}))
        assert f"sleep failed: {report} already exists and is not a sleep report" in page
        assert report.read_text() == NOTES
        report.unlink()
        page = html.unescape(_get(url, "/sleep/run", {}))
        assert "sleep made" in page and report.read_text().lstrip().startswith('{\n  "format": "lamar-sleep-report"')


def _hidden(page: str) -> dict[str, str]:
    """The confirmation form's fields, as the browser would send them back."""
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page))
    text = re.search(r'<textarea name="lessons" hidden>(.*?)</textarea>', page, re.DOTALL)
    if text:
        fields["lessons"] = text.group(1)
    return {k: html.unescape(v) for k, v in fields.items() if k != "token"} | {"confirm": "yes"}


def _texts(path: Path) -> list[str]:
    with Lamar(str(path)) as lam:
        return [e.render() for e in lam.experiences()]


def test_a_confirmation_sent_twice_adds_the_lesson_once(store: Path) -> None:
    with serving(store) as url:
        review = _get(url, "/add", {"precondition": "a test flakes", "action": "rerun it once", "rationale": "",
                                    "scope": "project=trace"})
        confirm = _hidden(review)
        first = _get(url, "/add", confirm)
        second = _get(url, "/add", confirm)  # a double click, or the browser's "resend the form"
    assert _texts(store).count("When a test flakes, rerun it once.") == 1
    assert 'class="lesson-text"' in first and 'class="lesson-text"' in second  # both land on the lesson


def test_many_lessons_confirmed_twice_are_added_once(store: Path) -> None:
    lessons = "- When a test flakes, rerun it once\n- When the linter fails, run the formatter\n"
    with serving(store) as url:
        confirm = _hidden(_get(url, "/add/many", {"lessons": lessons, "scope": ""}))
        _get(url, "/add/many", confirm)
        _get(url, "/add/many", confirm)
    assert _texts(store) == ["When the build fails, clear the cache.", "When a test flakes, rerun it once.",
                             "When the linter fails, run the formatter."]


def test_a_mended_report_is_no_longer_said_to_be_unreadable(store: Path) -> None:
    report = store.with_name("lessons.db.sleep-report.json")
    with serving(store) as url:
        _get(url, "/sleep/run", {})
        good = report.read_text()
        report.write_text("{broken")
        assert "cannot read the sleep report" in _get(url, "/sleep")
        report.write_text(good)
        page = _get(url, "/sleep")
    assert "cannot read the sleep report" not in page


def test_an_edit_from_a_form_opened_before_another_edit_is_refused(store: Path) -> None:
    with Lamar(str(store)) as lam:
        exp_id = lam.experiences()[0].id
    with serving(store) as url:
        form = _get(url, f"/lessons/{exp_id}/edit")
        version = re.search(r'name="version" value="(\d+)"', form)
        assert version and version.group(1) == "1"
        with Lamar(str(store)) as lam:  # `lamar edit` in a terminal, or another tab, meanwhile
            lam.edit(exp_id, action="clear DerivedData", reason="edited in a terminal")
        mine = {"precondition": "the build fails", "action": "delete the build folder", "rationale": "",
                "scope": "project=trace", "version": "1"}
        review = html.unescape(_get(url, f"/lessons/{exp_id}/edit", mine))
        confirmed = html.unescape(_get(url, f"/lessons/{exp_id}/edit", {**mine, "confirm": "yes"}))
    for page in (review, confirmed):
        # The newer text is shown under the refusal, between it and the form: "above" sent the eye to the title.
        assert "the lesson was edited since this form was opened: it now reads as shown below (version 2)" in page
        assert page.index('class="error"') < page.index('<p class="lesson-text">') < page.index("<form")
        assert '>\ndelete the build folder</textarea>' in page  # the user's text is kept, to be checked and sent again
        assert 'name="version" value="2"' in page
    with Lamar(str(store)) as lam:
        assert lam.get(exp_id).action == "clear DerivedData" and lam.get(exp_id).version == 2


def test_run_sleep_clicked_twice_at_once_writes_one_whole_report(store: Path) -> None:
    report = store.with_name("lessons.db.sleep-report.json")
    with serving(store) as url, ThreadPoolExecutor(4) as pool:
        pages = [html.unescape(page) for page in pool.map(lambda _: _get(url, "/sleep/run", {}), range(4))]
    for page in pages:  # each click's own message
        assert "sleep failed" not in page and "sleep made 0 proposals" in page
    assert json.loads(report.read_text())["format"] == "lamar-sleep-report"
    assert [p.name for p in store.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_erase_confirmed_twice_stores_one_erase_event_and_shows_the_lesson(store: Path) -> None:
    with Lamar(str(store)) as lam:
        exp_id = lam.experiences()[0].id
    with serving(store) as url:
        _get(url, f"/lessons/{exp_id}/erase", {"reason": "a secret slipped in", "confirm": "yes"})
        # a double click, or the browser's resend: the cleanup runs once more, and the lesson's page follows
        page = _get(url, f"/lessons/{exp_id}/erase", {"reason": "a secret slipped in", "confirm": "yes"})
    assert "Not found" not in page and "[erased]" in page
    with Lamar(str(store)) as lam:
        assert [e.data["id"] for e in lam.store.read() if e.kind == "erase"] == [exp_id]


@pytest.mark.parametrize("suffix", ["db", "json"])
def test_a_store_deleted_while_the_app_runs_is_said_on_every_page(tmp_path: Path, suffix: str) -> None:
    # SQLite read on through its open handle: the pages showed the deleted file's lessons as the
    # store's, and a JSON store's refusal was "lamar ui failed on this request".
    path = tmp_path / f"lessons.{suffix}"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    with serving(path) as url:
        assert "clear the cache" in _get(url, "/")
        for gone in tmp_path.glob("lessons.*"):
            gone.unlink()
        for page in ("/", "/episodes", "/sleep", "/api/version"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                _get(url, page)
            said = html.unescape(refused.value.read().decode())
            assert refused.value.code == 503 and "clear the cache" not in said, said
            # SQLite's open handle tells a deletion; a JSON store, read by name, cannot tell it from a move
            assert f"{path} was deleted{'' if suffix == 'db' else ', moved or renamed'} while open" in said
            assert "restore it from a backup" in said
            assert "stop lamar ui (Ctrl-C) and start it again" in said


def test_the_pages_answer_while_a_write_waits_for_another_process_lock(store: Path) -> None:
    # The write held the app's one engine for the whole wait: every page, and the poll that keeps
    # pages current, hung until the other writer let go or the 30 s wait ran out.
    with Lamar(str(store)) as lam:
        exp_id = lam.experiences()[0].id
    with serving(store) as url, ThreadPoolExecutor(1) as pool:
        version = json.loads(_get(url, "/api/version"))["version"]
        other = sqlite3.connect(str(store), isolation_level=None)  # another process's writer, mid-transaction
        other.execute("BEGIN IMMEDIATE")
        try:
            retire = pool.submit(_get, url, f"/lessons/{exp_id}/retire", {"reason": "stale"})
            started = time.monotonic()
            while time.monotonic() - started < 3:  # long enough for the write to be waiting
                for page in ("/", "/episodes", f"/lessons/{exp_id}", "/api/version"):
                    asked = time.monotonic()
                    shown = _get(url, page)
                    assert time.monotonic() - asked < 5, f"{page} waited for the write"
                assert json.loads(shown)["version"] == version  # what is committed
            assert not retire.done()  # the write is still waiting for the lock
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert "set retired: stale" in retire.result(timeout=30)  # the lock let go: it goes through
    with Lamar(str(store)) as lam:
        assert lam.get(exp_id).status.value == "retired"
