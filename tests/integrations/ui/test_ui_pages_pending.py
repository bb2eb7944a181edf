"""The episodes page over a store where episodes were expired or given a default outcome."""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar_ui import pages


def test_expired_and_default_outcomes_show_as_such(tmp_path: Path) -> None:
    lam = Lamar(str(tmp_path / "s.db"), seed=1, pending_after=60.0, pending_outcome=Signal.REASKED)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    first, expired, last = (lam.recall({"project": "x"}).episode_id for _ in range(3))
    assert lam.expire(expired, "the run failed")
    assert lam.settle_pending(now=lam.episode(last).time + 61.0) == [first, last]
    events = lam.store.read(0)
    outcomes = {e.data["episode"]: e.data for e in events if e.kind == "outcome"}
    html = pages.episodes_page([e for e in events if e.kind == "episode"], outcomes, {},
                               pending_only=False, total=3, pending=0)
    rows = {episode: row for episode in (first, expired, last) for row in html.split("<tr") if episode in row}
    assert "<td>expired</td>" in rows[expired]
    assert "<td>reasked</td>" in rows[first] and "<td>reasked</td>" in rows[last]


def test_a_lesson_page_counts_as_ls_does_and_says_which_episodes_await_their_outcome(tmp_path: Path) -> None:
    # The verdict line counts reported episodes (as `lamar ls` and the lessons table do), the
    # episodes section every logged one, naming the pending ones.
    pytest.importorskip("starlette")
    from tests.cli.test_cli_observe import one_pending_each_way
    from tests.integrations.ui.test_ui_trial import _get, serving

    path = tmp_path / "s.db"
    with Lamar(str(path), seed=3, holdout=0.5) as lam:
        exp_id = one_pending_each_way(lam)  # one pending episode that injected the lesson, one that held it out
        ev, past = lam.evidence(exp_id), lam.history(exp_id)
    assert (past.injected_in, past.held_out_in) == (ev.injected + 1, ev.held_out + 1)
    with serving(path) as url:
        page = html.unescape(_get(url, f"/lessons/{exp_id}"))
    assert f"in reported episodes {ev.injected} injected, {ev.held_out} held out;" in page
    assert (f"Injected in {past.injected_in} episodes (1 awaiting its outcome), "
            f"held out in {past.held_out_in} (1 awaiting its outcome).") in page
