"""A proposal rejected on `lamar ui`'s sleep page is remembered by the store: the next Run sleep leaves it
out and says so, and approving it instead undoes the rejection."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, serving


def _message(page: str) -> str:
    found = re.search(r'<p class="message">([^<]*)</p>', page)
    assert found, page[-600:]
    return html.unescape(found.group(1))


@pytest.mark.parametrize("name", ["lessons.db", "lessons.json"])
def test_a_rejection_on_the_sleep_page_keeps_the_proposal_out_of_the_next_sleep(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    with Lamar(str(path)) as lam:
        for action in ("raise the test timeout", "run the failing test alone first"):
            lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
    with serving(path) as url:
        assert _message(_get(url, "/sleep/run", {})).startswith("sleep made 2 proposals")
        cards = dict(re.findall(r'<section class="proposal \w+" data-id="([^"]+)"><h2>(\w+)', _get(url, "/sleep")))
        (pid,) = [i for i, kind in cards.items() if kind == "contradiction"]
        said = _message(_get(url, "/sleep/decide", {"proposal": pid, "decision": "rejected"}))
        assert said == f"{pid} rejected; sleep leaves it out until what it rests on changes"
        said = _message(_get(url, "/sleep/decide", {"proposal": pid, "decision": "approved"}))
        assert said == f"{pid} approved; its rejection undone"
        _get(url, "/sleep/decide", {"proposal": pid, "decision": "rejected"})
        made = _message(_get(url, "/sleep/run", {}))
        assert made.startswith("sleep made 1 proposal") and made.endswith("; 1 rejected proposal left out"), made
        assert f'data-id="{pid}"' not in _get(url, "/sleep")
    with Lamar(str(path)) as lam:
        (held,) = lam.rejections()
        assert held.proposal == pid and held.id.endswith(":2")
