"""`lamar ui`'s *Apply* sent a second time (the browser's resend, a second tab) changes nothing and
says the proposals were already applied, rather than "applied 0"."""

from __future__ import annotations

import contextlib
import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope, StoreError

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, serving
from tests.killed import event_count


def _message(page: str) -> str:
    found = re.search(r'<p class="message">([^<]*)</p>', page)
    assert found, page[-600:]
    return html.unescape(found.group(1))



def two_proposals(path: Path) -> None:
    """A store for which sleep proposes two things: a contradiction (two actions for one situation) and a merge
    (one lesson written twice)."""
    with Lamar(str(path)) as lam:
        for action in ("raise the test timeout", "run the failing test alone first"):
            lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))


def run_sleep(url: str) -> dict[str, str]:
    """Run sleep on the page of `two_proposals`' store: its proposal cards, id to kind."""
    assert _message(_get(url, "/sleep/run", {})).startswith("sleep made 2 proposals")
    return dict(re.findall(r'<section class="proposal \w+" data-id="([^"]+)"[^>]*><h2[^>]*>(\w+)', _get(url, "/sleep")))


def test_a_second_apply_says_already_applied_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:  # two wordings of one lesson: sleep proposes to merge them
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
    with serving(path) as url:
        assert _message(_get(url, "/sleep/run", {})).startswith("sleep made 1 proposal")
        pid = re.findall(r'name="proposal" value="([^"]+)"', _get(url, "/sleep"))[0]
        _get(url, "/sleep/decide", {"proposal": pid, "decision": "approved"})
        shown = _apply_form(_get(url, "/sleep"))
        assert _message(_get(url, "/sleep/apply", shown)) == "applied 1, skipped 0"
        written = event_count(path)
        assert _message(_get(url, "/sleep/apply", shown)) == f"already applied, nothing changed: {pid}"
        assert event_count(path) == written
    with Lamar(str(path)) as lam:
        assert len(lam.experiences(status="active")) == 1


def test_proposals_applied_with_a_compaction_are_not_offered_again(tmp_path: Path) -> None:
    # The page read the "applied" events written since the report; applying a compaction folds
    # them into a checkpoint, and every proposal of the report was offered again as undecided.
    path = tmp_path / "lessons.db"
    with Lamar(str(path), seed=1) as lam:
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
        for _ in range(40):
            lam.report(lam.recall({"language": "swift"}).episode_id, 0.5)
        report = lam.sleep(keep_last=10)
        assert sorted(p.kind for p in report) == ["compact", "merge"]
        Path(f"{path}.sleep-report.json").write_text(json.dumps(report.to_dict()))
        assert len(lam.apply(report).applied) == 2
    with serving(path) as url:
        page = _get(url, "/sleep")
    assert 'class="proposal' not in page and ">Approve<" not in page, page[-800:]
    assert "2 proposals already applied, not listed." in page


@pytest.mark.parametrize("name", ["lessons.db", "lessons.json"])
def test_a_contradiction_acknowledged_once_is_counted_not_listed_every_night(tmp_path: Path, name: str) -> None:
    # Sleep proposes an acknowledged contradiction again, by the same id, as long as both lessons
    # stand: the page showed it again after every Run sleep, as a card with nothing left to click.
    path = tmp_path / name
    two_proposals(path)
    with serving(path) as url:
        cards = run_sleep(url)
        (contradiction,) = [pid for pid, kind in cards.items() if kind == "contradiction"]
        _get(url, "/sleep/decide", {"proposal": contradiction, "decision": "approved"})
        assert _message(_get(url, "/sleep/apply", _apply_form(_get(url, "/sleep")))) == "applied 1, skipped 0"
        # The next night, counted as `lamar sleep` counts it: what is listed, and apart what is applied.
        assert re.fullmatch(r"sleep made 1 proposal at \S+; 1 proposal already applied, not listed",
                            _message(_get(url, "/sleep/run", {})))
        page = _get(url, "/sleep")
    saved = json.loads(Path(f"{path}.sleep-report.json").read_text())
    assert sorted(p["id"] for p in saved["proposals"]) == sorted(cards)  # the report file holds every proposal
    listed = re.findall(r'<section class="proposal (\w+)" data-id="([^"]+)"', page)
    assert listed == [("undecided", next(pid for pid in cards if pid != contradiction))], page[-800:]
    assert "1 proposal already applied, not listed." in page and contradiction not in page


def test_a_decision_list_edited_into_another_type_is_said_not_read_letter_by_letter(tmp_path: Path) -> None:
    # The page iterated "approved" as it found it: a number was a server error, an id written
    # as a bare string was read as its letters ("Apply 13 approved proposals").
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
        report = lam.sleep()
    written = event_count(path)
    for approved in (report.proposals[0].id, 5, [{"id": "x"}]):
        Path(f"{path}.sleep-report.json").write_text(json.dumps({**report.to_dict(), "approved": approved}))
        with serving(path) as url:
            page = _get(url, "/sleep")
            assert "'approved' must be a list of proposal ids; fix it or run `lamar review" in _message(page)
            assert "approved proposal" not in page
            assert "'approved' must be a list of proposal ids" in _message(_get(url, "/sleep/apply", {}))
    assert event_count(path) == written


def _apply_form(page: str) -> dict[str, str | list[str]]:
    """The approvals the page's *Apply* form sends (the token: `_get` adds it)."""
    form = re.search(r'<form method="post" action="/sleep/apply">(.*?)</form>', page)
    assert form, page[-600:]
    return {"approved": [html.unescape(v) for v in
                         re.findall(r'<input type="hidden" name="approved" value="([^"]*)">', form.group(1))]}


def test_apply_carries_out_only_the_approvals_its_page_showed(tmp_path: Path) -> None:
    # Apply carried out whatever the report approved when it was clicked: a proposal approved
    # meanwhile (`lamar review`, another tab) was applied by a click on a page that never showed it.
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:  # two pairs of wordings: sleep proposes two merges
        for language in ("swift", "kotlin"):
            lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language=language)))
            lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language=language)))
    with serving(path) as url:
        _get(url, "/sleep/run", {})
        first, second = re.findall(r'name="proposal" value="([^"]+)"', _get(url, "/sleep"))[::2]
        _get(url, "/sleep/decide", {"proposal": first, "decision": "approved"})
        shown = _apply_form(_get(url, "/sleep"))
        report_file = Path(f"{path}.sleep-report.json")
        report = json.loads(report_file.read_text())
        report_file.write_text(json.dumps({**report, "approved": [first, second]}))  # as `lamar review` would
        written = event_count(path)
        message = _message(_get(url, "/sleep/apply", shown))
        assert message == (f"the approvals changed since this page was shown (approved now: {first}, {second}): "
                           "check them, then apply again"), message
        assert event_count(path) == written
        assert _message(_get(url, "/sleep/apply", _apply_form(_get(url, "/sleep")))) == "applied 2, skipped 0"


def test_apply_sends_the_approvals_its_page_shows_not_the_applied_ones_it_hides(tmp_path: Path) -> None:
    # The form named every approval of the report, the applied ones the page hides among them: Apply
    # then spoke of a proposal the page never showed, and a form naming only those shown was refused.
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        for action in ("raise the test timeout", "run the failing test alone first"):
            lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
        report = lam.sleep()
        kinds = {p.kind: p.id for p in report}
        contradiction, merge = kinds["contradiction"], kinds["merge"]
        # Both approved in `lamar review`, the contradiction applied alone (`lamar apply --only`).
        assert lam.apply(report, [contradiction]).applied == [contradiction]
        approved = {**report.to_dict(), "approved": [contradiction, merge]}
        Path(f"{path}.sleep-report.json").write_text(json.dumps(approved))
    with serving(path) as url:
        assert _apply_form(_get(url, "/sleep")) == {"approved": [merge]}
        written = event_count(path)
        message = _message(_get(url, "/sleep/apply", {"approved": [contradiction]}))  # the shown one left out
        assert message == (f"the approvals changed since this page was shown (approved now: {merge}): "
                           "check them, then apply again"), message
        assert event_count(path) == written
        assert _message(_get(url, "/sleep/apply", {"approved": [merge]})) == "applied 1, skipped 0"
        # A page shown before the contradiction was applied sends it too: applied again, it changes nothing.
        written = event_count(path)
        message = _message(_get(url, "/sleep/apply", {"approved": [contradiction, merge]}))
        assert message == f"already applied, nothing changed: {contradiction}, {merge}", message
        assert event_count(path) == written


@contextlib.contextmanager
def _signed_in(lam: Lamar, report_path: Path) -> Iterator[tuple[Any, Any]]:
    """(ui, client): the app on `lam` in a test client that holds the token's cookie, as a browser that opened the
    link does."""
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from lamar_ui.app import UI, create_app

    ui = UI(lam, report_path=report_path)
    with TestClient(create_app(ui), base_url="http://127.0.0.1") as client:
        client.get(f"/?token={ui.token}", follow_redirects=False)  # the cookie
        yield ui, client


def _locked(report: object) -> dict[str, str]:
    """`would_skip` of a store another process holds locked: which proposals are applied cannot be told."""
    raise StoreError("the store is locked by another process")


def test_run_sleep_saves_its_report_when_the_store_cannot_say_which_are_applied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Which proposals are applied is a courtesy of the message, as in `lamar sleep`: the report is
    # saved and counted whole, not called a failed sleep.
    report_path = tmp_path / "report.json"
    with Lamar(seed=1) as lam:
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
        with _signed_in(lam, report_path) as (ui, client):
            monkeypatch.setattr(lam, "would_skip", _locked)
            response = client.post("/sleep/run", data={"token": ui.token}, follow_redirects=False)
            monkeypatch.undo()
            page = client.get(response.headers["location"]).text
    assert re.fullmatch(r"sleep made 1 proposal at \S+, applied or not \(the store could not say: the store is "
                        r"locked by another process\)", _message(page)), _message(page)
    assert len(json.loads(report_path.read_text())["proposals"]) == 1


def test_the_sleep_page_lists_every_proposal_when_the_store_cannot_say_which_are_applied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As `lamar sleep` and `lamar review` do: the page errored instead, and the report was out of reach.
    report_path = tmp_path / "report.json"
    with Lamar(seed=1) as lam:
        for action in ("raise the test timeout", "run the failing test alone first"):
            lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
        with _signed_in(lam, report_path) as (ui, client):
            client.post("/sleep/run", data={"token": ui.token}, follow_redirects=False)
            ids = [p["id"] for p in json.loads(report_path.read_text())["proposals"]]
            monkeypatch.setattr(lam, "would_skip", _locked)
            response = client.get("/sleep")
    assert response.status_code == 200 and len(ids) == 2
    assert re.findall(r'<section class="proposal \w+" data-id="([^"]+)"', response.text) == ids
    assert _message(response.text) == ("every proposal is listed, applied or not (the store could not say: the store "
                                       "is locked by another process)")


@pytest.mark.parametrize("edit", ["nested", "surrogate"])
def test_a_report_edited_past_reading_is_said_on_the_page_not_a_server_error(tmp_path: Path, edit: str) -> None:
    # The page read the report with json.loads alone: JSON nested past Python's recursion limit, or a
    # lone surrogate (which cannot be written out in the page), was a 500 on /sleep and on Apply.
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
        report = lam.sleep()
    report_path = Path(f"{path}.sleep-report.json")
    report_path.write_text(json.dumps(report.to_dict()))
    written = event_count(path)
    with serving(path) as url:  # edited while the app runs: it refuses such a file at its start
        text = json.dumps({**report.to_dict(), "approved": [report.proposals[0].id]})
        report_path.write_text("[" * 100_000 + "]" * 100_000 if edit == "nested"
                               else text.replace('"reason": "', '"reason": "\\ud800', 1))
        said = "its JSON is nested too deep" if edit == "nested" else "it holds a lone surrogate"
        assert said in _message(_get(url, "/sleep"))
        assert said in _message(_get(url, "/sleep/apply", {"approved": report.proposals[0].id}))
    assert event_count(path) == written
