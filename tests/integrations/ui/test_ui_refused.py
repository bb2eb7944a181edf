"""`lamar ui` when the store refuses a write the page asked for: a lever refused (the store's lock held past the
wait) offers to try again, and an edit refused because the lesson was retired meanwhile leads to Revive…."""

from __future__ import annotations

import html
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope
from lamar.store import open_store

pytest.importorskip("starlette")


@contextmanager
def client(path: Path, writer: Any = None) -> Iterator[Any]:
    """The app over the SQLite store at `path`, its writes through `writer()` (default: a second engine whose
    lock wait is short), as `lamar ui` opens one; a test client holding the token cookie."""
    from starlette.testclient import TestClient

    from lamar_ui.app import UI, create_app

    with Lamar(str(path)) as lam:
        ui = UI(lam, token="t0k", report_path=path.with_name("report.json"),
                writer=writer or (lambda: Lamar(open_store(str(path), timeout=0.2))))
        with TestClient(create_app(ui), base_url="http://127.0.0.1") as test:
            test.cookies.set("lamar_ui_token_80", "t0k")
            yield test


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        return path, lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))


@pytest.mark.parametrize("lever", ["retire", "erase"])
def test_a_lever_refused_while_another_writer_holds_the_lock_can_be_tried_again(
        store: tuple[Path, str], lever: str) -> None:
    # The refusal said to try again, with only a link back to the lesson: its Retire… asked once more from
    # the start, and the reason typed was gone.
    path, exp_id = store
    with client(path) as test:
        other = sqlite3.connect(str(path), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            refused = test.post(f"/lessons/{exp_id}/{lever}", data={"token": "t0k", "reason": "stale since v2",
                                                                    "confirm": "yes", "contexts": "yes"})
        finally:
            other.execute("ROLLBACK")
            other.close()
        said = html.unescape(refused.text)
        assert "holds its lock" in said and "try again" in said, said
        assert f'action="/lessons/{exp_id}/{lever}"' in refused.text and "Try again" in said, said
        assert 'value="stale since v2"' in refused.text  # the reason typed goes with it
        assert (lever == "erase") == ('name="contexts" value="yes" checked' in refused.text)
        again = test.post(f"/lessons/{exp_id}/{lever}", data={"token": "t0k", "reason": "stale since v2",
                                                              "confirm": "yes"})
        assert again.status_code == 200 and "Back to the lesson" not in again.text
    with Lamar(str(path)) as lam:
        assert lam.get(exp_id).status.value == "retired"


def test_a_lever_the_lesson_no_longer_takes_offers_no_try_again(store: tuple[Path, str]) -> None:
    path, exp_id = store
    with client(path) as test:
        test.post(f"/lessons/{exp_id}/erase", data={"token": "t0k", "reason": "a secret", "confirm": "yes"})
        refused = test.post(f"/lessons/{exp_id}/revive", data={"token": "t0k", "reason": "back", "confirm": "yes"})
    assert refused.status_code == 409 and "Try again" not in refused.text and "Back to the lesson" in refused.text


def test_an_edit_refused_as_the_lesson_was_retired_meanwhile_leads_to_revive(store: tuple[Path, str]) -> None:
    # Retired between the page's read and the write (another process, at that moment): the engine's refusal
    # named lam.revive, a Python call, under a form whose Review… could only be refused again.
    path, exp_id = store

    def retired_first() -> Lamar:
        with Lamar(str(path)) as other:
            other.retire(exp_id, "merged in a terminal")
        return Lamar(str(path))

    with client(path, retired_first) as test:
        typed = {"token": "t0k", "precondition": "the build fails", "action": "clear the cache first",
                 "rationale": "", "scope": "project=trace", "confirm": "yes", "version": "1"}
        page = test.post(f"/lessons/{exp_id}/edit", data=typed)
    said = html.unescape(page.text)
    assert f"lesson {exp_id} is retired: revive it to edit it, or add a new lesson" in said, said
    assert "lam.revive" not in said and f'href="/lessons/{exp_id}/revive"' in page.text
    assert "clear the cache first" in said and 'class="add"' not in page.text  # kept, with no form to refuse again


def test_an_edit_that_changes_nothing_is_refused_at_its_review(store: tuple[Path, str]) -> None:
    # Review… on the form as it opened asked "Store this as the lesson's next version? ... Its evidence
    # restarts": a question whose Yes could only be refused (nothing to edit), after warning of a restart.
    path, exp_id = store
    with client(path) as test:
        same = {"token": "t0k", "precondition": "the build fails", "action": " clear the cache ",
                "rationale": "", "scope": "project=trace", "version": "1"}
        page = test.post(f"/lessons/{exp_id}/edit", data=same)
        changed = test.post(f"/lessons/{exp_id}/edit", data={**same, "action": "clear the cache first"})
    said = html.unescape(page.text)
    assert "Store this as" not in said and "restarts: the new text" not in said, said
    assert "nothing to edit: the lesson already reads so" in said and 'class="add"' in page.text, said
    assert "Store this as the lesson's next version?" in html.unescape(changed.text)
    with Lamar(str(path)) as lam:
        assert lam.get(exp_id).version == 1


def test_an_edit_stored_is_said_where_focus_opens(store: tuple[Path, str]) -> None:
    # Yes, store it led back to the lesson's page with nothing said and focus at the top, where Retire and
    # Revive each say what they did: a keyboard or screen reader user could not tell the edit was stored.
    path, exp_id = store
    with client(path) as test:
        typed = {"token": "t0k", "precondition": "the build fails", "action": "clear the cache first",
                 "rationale": "", "scope": "project=trace", "version": "1", "confirm": "yes"}
        page = test.post(f"/lessons/{exp_id}/edit", data=typed)
        again = test.post(f"/lessons/{exp_id}/edit", data=typed)  # a double click: the same version, said alike
        with Lamar(str(path)) as lam:
            lam.edit(exp_id, rationale="CI caches", evidence="keep")
        later = test.get(str(page.url))
    said = '<div id="said" role="status" tabindex="-1" autofocus><p class="message">'
    stored = "Edited: version 2 stored; its evidence restarts, as the new text earns its own verdict."
    assert said + stored in page.text and said + stored in again.text, page.text
    assert 'id="said"' not in later.text  # edited since: the line no longer holds


def test_a_reports_copy_of_the_evidence_is_named_as_the_evidence_now_is(store: tuple[Path, str]) -> None:
    # A dropped lesson read "unknown" when proposed and "dropped" now, side by side: a change that never was.
    import json

    path, exp_id = store
    copy = {"verdict": "unknown", "lift": None, "lower": None, "upper": None, "randomized": 3, "estimate": -1.15}
    retire = {"id": "retire_x", "kind": "retire", "experience_ids": [exp_id], "reason": "dropped",
              "evidence": {exp_id: copy}, "payload": {}, "expect": {}}
    path.with_name("report.json").write_text(json.dumps({
        "format": "lamar-sleep-report", "made_at": 0, "proposals": [retire], "dropped": [], "events_seen": 0,
        "summary": {}}))
    with client(path) as test:
        page = test.get("/sleep").text
    cells = page.split('data-id="retire_x"', 1)[1].split("<tbody>", 1)[1].split("</td>")
    assert 'class="verdict dropped"' in cells[1], cells[1]  # when proposed
    assert 'class="verdict unproven"' in cells[2], cells[2]  # now: no episode since, nothing estimated
