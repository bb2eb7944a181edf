"""`Lamar.preview`: what a recall would choose and why, with nothing written and the engine's
own random stream untouched, so the next recall is the one it would have been."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from lamar import (
    Experience,
    InvalidArgument,
    InvalidContext,
    Lamar,
    LamarError,
    Preview,
    Scope,
    Verdict,
)
from tests.state.seam import coins


def _trained(path: Path) -> tuple[Lamar, str, str, str]:
    """`good` lifts the reward by 0.5, `bad` lowers it by 0.5, `elsewhere` is scoped away (seeded)."""
    lam = Lamar(path, k=1, seed=4, holdout=0.5)
    good = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    bad = lam.add(Experience("the build fails", "delete the repository", scope=Scope(project="x")))
    elsewhere = lam.add(Experience("the build fails", "rerun it", scope=Scope(project="y")))
    world = random.Random(5)
    effect = {good: 0.5, bad: -0.5}
    for _ in range(300):
        rec = lam.recall({"project": "x"})
        reward = sum(effect.get(i, 0.0) for i in rec.ids) + world.uniform(-0.3, 0.3)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
    return lam, good, bad, elsewhere


def _log(lam: Lamar) -> list[tuple[Any, ...]]:
    return [(e.seq, e.kind, e.key, e.data_json()) for e in lam.store.read(0)]


def test_a_preview_shows_each_eligible_lesson_and_why(tmp_path: Path) -> None:
    lam, good, bad, elsewhere = _trained(tmp_path / "s.db")
    seen = lam.preview({"project": "x"}, draws=400)
    assert isinstance(seen, Preview) and (seen.k, seen.draws, dict(seen.context)) == (1, 400, {"project": "x"})
    assert seen.eligible == (good, bad) and elsewhere not in seen.eligible
    first, second = seen.lessons
    assert (first.id, first.wanted, second.wanted) == (good, True, False)
    assert first.chance > 0.9 and second.chance < 0.1 and first.estimate > 0.3 > -0.3 > second.estimate
    assert not first.cold and not second.cold
    for row in seen.lessons:  # the evidence as `evidence()` reads it, and the coin a recall would flip
        ev = lam.evidence(row.id)
        assert (row.verdict, row.lower, row.upper, row.randomized) == (ev.verdict, ev.lower, ev.upper, ev.randomized)
        assert 0.0 <= row.holdout <= 0.5
    assert first.verdict is Verdict.HELPS and first.text == "When the build fails, clear the cache."
    assert seen.wanted == [lam.get(good)] and "clear the cache" in seen.as_prompt()
    assert lam.preview({"project": "x"}, k=0).wanted == [] and lam.preview({"project": "z"}).lessons == ()
    assert lam.preview({"project": "x"}, candidates=[bad]).eligible == (bad,)
    lam.close()


def test_a_new_lesson_is_previewed_as_cold_and_wanted_first(tmp_path: Path) -> None:
    lam, _, _, _ = _trained(tmp_path / "s.db")
    new = lam.add(Experience("the build fails", "read the log", scope=Scope(project="x")))
    row = lam.preview({"project": "x"}).lessons[0]
    assert (row.id, row.cold, row.wanted, row.chance, row.randomized) == (new, True, True, 1.0, 0)
    lam.close()


def test_a_preview_writes_nothing_and_leaves_the_next_recall_as_it_was(tmp_path: Path) -> None:
    lam, _, _, _ = _trained(tmp_path / "s.db")
    lam.close()
    shutil.copy(tmp_path / "s.db", tmp_path / "twin.db")
    one, twin = Lamar(tmp_path / "s.db", k=1, seed=9, holdout=0.5), Lamar(tmp_path / "twin.db", k=1, seed=9,
                                                                          holdout=0.5)
    log, state, stats = _log(one), coins(one).getstate(), one.stats()
    for _ in range(3):
        one.preview({"project": "x"}, draws=50)
    assert _log(one) == log and coins(one).getstate() == state and one.stats() == stats
    for _ in range(20):  # the same decisions, coins included, as an engine that never previewed
        a, b = one.recall({"project": "x"}), twin.recall({"project": "x"})
        assert (a.ids, a.held_out, a.propensities) == (b.ids, b.held_out, b.propensities)
        one.report(a.episode_id, 0.3)
        twin.report(b.episode_id, 0.3)
    one.close()
    twin.close()


BAD: list[tuple[Any, dict[str, Any], type[LamarError], str]] = [
    ("x", {}, InvalidContext, "mapping of strings"),
    ({"project": 1}, {}, InvalidContext, "must be a string"),
    ({"project": "x"}, {"k": -1}, InvalidArgument, "k is the number of lesson slots"),
    ({"project": "x"}, {"draws": 0}, InvalidArgument, "draws is a whole number"),
    ({"project": "x"}, {"draws": True}, InvalidArgument, "draws is a whole number"),
    ({"project": "x"}, {"candidates": "exp_1"}, InvalidArgument, "candidates is a list"),
]


@pytest.mark.parametrize(("context", "options", "error", "says"), BAD)
def test_a_bad_preview_is_refused_with_nothing_written(tmp_path: Path, context: Any, options: dict[str, Any],
                                                       error: type[LamarError], says: str) -> None:
    lam = Lamar(tmp_path / "s.json", k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache"))
    log, state = _log(lam), coins(lam).getstate()
    with pytest.raises(error, match=says):
        lam.preview(context, **options)
    assert _log(lam) == log and coins(lam).getstate() == state
    lam.close()
