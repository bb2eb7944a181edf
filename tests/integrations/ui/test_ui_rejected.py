"""A proposal rejected on `lamar ui`'s sleep page is remembered by the store: the next Run sleep leaves it
out and says so, and approving it instead undoes the rejection."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_apply import _message, run_sleep, two_proposals
from tests.integrations.ui.test_ui_trial import _get, serving


@pytest.mark.parametrize("name", ["lessons.db", "lessons.json"])
def test_a_rejection_on_the_sleep_page_keeps_the_proposal_out_of_the_next_sleep(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    two_proposals(path)
    with serving(path) as url:
        cards = run_sleep(url)
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
