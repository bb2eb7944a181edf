"""The episodes page over a store where episodes were expired or given a default outcome."""

from __future__ import annotations

from pathlib import Path

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
