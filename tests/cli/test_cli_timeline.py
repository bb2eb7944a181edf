"""The episodes `lamar show` lists are read from the end of the log, in growing windows, and are the
same as a scan of the whole log."""

from __future__ import annotations

from pathlib import Path

from lamar import Experience, Lamar, Scope, Signal
from lamar.cli.timeline import appearances, latest_appearances


def test_the_latest_episodes_are_found_past_the_first_window(tmp_path: Path) -> None:
    lam = Lamar(str(tmp_path / "s.db"), k=1, seed=2)
    rare = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    lam.add(Experience("a lint error", "run the formatter", scope=Scope(task="lint")))
    for _ in range(8):  # episodes that may inject the rare lesson (or hold it out), early in the log
        lam.report(lam.recall({"task": "build"}).episode_id, Signal.SHIPPED)
    for _ in range(1500):  # then 3 000 events that never name it: past the first window of 1 024
        lam.report(lam.recall({"task": "lint"}).episode_id, Signal.ACCEPTED)
    everything, _ = appearances(lam.store.read(0), rare)
    assert 3 < len(everything) <= 8 and lam.history(rare).injected_in == len(everything)
    assert latest_appearances(lam, rare, 3) == everything[-3:]
    assert latest_appearances(lam, rare, 20) == everything  # fewer than asked: the whole log was read
    assert latest_appearances(lam, rare, None) == everything
    assert all(a.signal == "shipped" for a in everything)
