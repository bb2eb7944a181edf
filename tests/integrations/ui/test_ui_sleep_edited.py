"""`lamar ui`'s sleep page over a report edited by hand: the ids, kind and reason it shows, and the
messages its buttons leave, are as bounded as `lamar review`'s lines; the forms still send the id whole."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_apply import _apply_form, _message
from tests.integrations.ui.test_ui_trial import _get, serving

LONGEST = 400


def _twins(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A store of two wordings of one lesson, and the sleep report that proposes to merge them."""
    path = tmp_path / "lessons.db"
    with Lamar(str(path), seed=1) as lam:
        lam.add(Experience("the build fails after a bump", "clear DerivedData"))
        lam.add(Experience("the build fails after a bump", "clear DerivedData."))
        return path, lam.sleep().to_dict()


def test_the_sleep_page_shows_an_edited_report_bounded_and_acts_on_the_whole_id(tmp_path: Path) -> None:
    path, data = _twins(tmp_path)
    huge = "merge_" + "x" * 10_000
    data["proposals"][0].update(id=huge, kind="merge" + "k" * 10_000, reason="r" * 50_000)
    Path(f"{path}.sleep-report.json").write_text(json.dumps(data))
    with serving(path) as url:
        page = _get(url, "/sleep")
        card = re.search(r'<section class="proposal[^>]*>(.*?)</section>', page, flags=re.DOTALL)
        assert card, page[-600:]
        shown = [html.unescape(text) for text in re.findall(r">([^<]+)<", card.group(1))]
        assert max(map(len, shown)) <= LONGEST, sorted(map(len, shown))[-3:]
        assert re.findall(r'name="proposal" value="([^"]+)"', page)[0] == huge  # the forms carry it whole
        decided = _message(_get(url, "/sleep/decide", {"proposal": huge, "decision": "approved"}))
        assert decided.endswith("(10006 characters) approved") and len(decided) <= LONGEST, decided[:500]
        form = _apply_form(_get(url, "/sleep"))
        assert form == {"approved": [huge]}
        applied = _message(_get(url, "/sleep/apply", form))
        assert len(applied) <= LONGEST and "unknown proposal kind" in applied, applied[:500]


def test_the_sleep_page_reads_a_report_as_lamar_review_does(tmp_path: Path) -> None:
    # A byte-order mark made the page say it could not read the report; a key written twice was
    # read as its last, whichever one the person had edited.
    path, data = _twins(tmp_path)
    pid = data["proposals"][0]["id"]
    report = Path(f"{path}.sleep-report.json")
    report.write_bytes(b"\xef\xbb\xbf" + json.dumps(data, indent=2).replace("\n", "\r\n").encode())
    with serving(path) as url:
        assert re.findall(r'name="proposal" value="([^"]+)"', _get(url, "/sleep")) == [pid] * 2
        text = json.dumps(data).replace('"format"', f'"approved": [], "approved": ["{pid}"], "format"', 1)
        report.write_text(text)
        said = _message(_get(url, "/sleep"))
        assert said == (f"cannot read the sleep report {report}: the key 'approved' is written twice in one object; "
                        "JSON keeps only the last: delete the one not meant"), said
        assert 'action="/sleep/apply"' not in _get(url, "/sleep")
    assert report.read_text() == text


@pytest.mark.parametrize("odd", ["a proposal", {"kind": "retire"}, {"id": ["merge_1"], "kind": "retire"}],
                         ids=["text", "no id", "a list as id"])
def test_approve_on_a_report_with_a_malformed_proposal_says_so_and_changes_nothing(tmp_path: Path,
                                                                                   odd: object) -> None:
    # The page said it could not read such a report, but Approve, sent from a page shown before the
    # edit, read each proposal's id itself and failed with a server error.
    path, data = _twins(tmp_path)
    pid = data["proposals"][0]["id"]
    data["proposals"].append(odd)
    report = Path(f"{path}.sleep-report.json")
    report.write_text(json.dumps(data))
    with serving(path) as url:
        said = _message(_get(url, "/sleep/decide", {"proposal": pid, "decision": "approved"}))
    assert said.startswith(f"cannot read the sleep report {report}: a proposal "), said
    assert report.read_text() == json.dumps(data)
