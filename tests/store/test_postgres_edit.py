"""`Lamar.edit` on PostgreSQL: in the fold mode the rows fold the edit event as the in-process
fold does (the text, the scope index, the restarted evidence), and the log mode replays it."""

from __future__ import annotations

import random
from typing import Any

import pytest

from lamar import Experience, InvalidArgument, Lamar, Scope
from lamar.store.postgres import PostgresStore
from tests.state.seam import folded


def _rows(url: str) -> dict[str, dict[str, Any]]:
    store = PostgresStore(url)
    assert store.rows is not None
    view = store.rows.lessons()
    store.close()
    return {s.experience.id: {k: v for k, v in s.to_dict().items() if k != "history"} for s in view.states}


def _run(lam: Lamar, gain: dict[str, float], episodes: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(episodes):
        rec = lam.recall({"project": rng.choice("xy"), "language": rng.choice(["py", "go"])})
        reward = 0.1 + sum(gain.get(i, 0.0) for i in rec.ids) + rng.gauss(0.0, 0.3)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))


def test_the_rows_fold_an_edit_as_a_replay_of_the_log_does(fold_url: str) -> None:
    lam = Lamar(fold_url, k=2, seed=3, holdout=0.5)
    a = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    b = lam.add(Experience("the tests flake", "rerun them", scope=Scope(project="x")))
    gain = {a: 0.5, b: -0.3}
    _run(lam, gain, 200, seed=1)
    before, kept = lam.evidence(a), lam.evidence(b)
    lam.edit(a, action="clear the module cache", scope={"project": "y"})
    lam.edit(b, rationale="flaky tests hide real failures", evidence="keep")
    after = lam.evidence(a)
    assert lam.evidence(b) == kept and kept.randomized > 0
    assert (after.randomized, after.restarts, after.eligible) == (0, before.restarts + 1, before.eligible)
    assert a in lam.recall({"project": "y"}).eligible and a not in lam.recall({"project": "x"}).eligible
    _run(lam, gain, 100, seed=2)
    replay = Lamar(fold_url.replace("&lamar_fold=on", "") + "&lamar_fold=off", k=2, seed=0, holdout=0.5)
    assert _rows(fold_url) == {i: {k: v for k, v in folded(replay).lesson(i).to_dict().items() if k != "history"}
                               for i in (a, b)}
    assert replay.get(a).action == "clear the module cache" and replay.get(a).scope == Scope(project="y")
    assert {i: lam.evidence(i) for i in (a, b)} == {i: replay.evidence(i) for i in (a, b)}
    assert replay.history(a).trail[-1][1].startswith("edited to version 2 (action, scope); evidence restarted")
    replay.close()
    lam.close()


def test_a_refused_edit_writes_nothing_in_the_fold_mode(fold_url: str) -> None:
    lam = Lamar(fold_url, k=2, seed=3)
    a = lam.add(Experience("the build fails", "clear the cache"))
    lam.get(a)  # the rows are built on the first read
    rows, log = _rows(fold_url), [e.seq for e in lam.store.read()]
    with pytest.raises(InvalidArgument, match="changes the action"):
        lam.edit(a, action="rerun it", evidence="keep")
    assert _rows(fold_url) == rows and [e.seq for e in lam.store.read()] == log
    lam.close()


def test_a_preview_reads_the_rows_and_writes_nothing(fold_url: str) -> None:
    lam = Lamar(fold_url, k=1, seed=3, holdout=0.5)
    a = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    _run(lam, {a: 0.5}, 60, seed=4)
    rows, log = _rows(fold_url), [e.seq for e in lam.store.read()]
    (row,) = lam.preview({"project": "x"}).lessons
    ev = lam.evidence(a)
    assert (row.id, row.verdict, row.lower, row.upper, row.randomized) == (a, ev.verdict, ev.lower, ev.upper,
                                                                          ev.randomized)
    assert _rows(fold_url) == rows and [e.seq for e in lam.store.read()] == log
    lam.close()
