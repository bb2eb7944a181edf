"""`Lamar.edit`: a lesson's next version under the same id, its evidence restarted or (a wording
fix) kept, replayed alike by every fold; bad input is refused with nothing written."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from lamar import (
    EventConflict,
    Experience,
    InvalidArgument,
    InvalidContext,
    InvalidEvent,
    InvalidExperience,
    Lamar,
    LamarError,
    Scope,
    UnknownExperience,
    Verdict,
)
from lamar.store import Event, MemoryStore
from lamar.store.transfer import transfer


def _trained(path: Path, episodes: int = 300) -> tuple[Lamar, str, str]:
    """A SQLite store where `helps` lifts the reward by 0.6 and `other` does nothing (seeded)."""
    lam = Lamar(path, k=2, seed=7, holdout=0.5)
    helps = lam.add(Experience("the build fails", "clear the cache", "stale modules",
                               scope=Scope(project="x")))
    other = lam.add(Experience("the build fails", "rerun it", scope=Scope(project="x")))
    import random

    world = random.Random(11)
    for i in range(episodes):
        rec = lam.recall({"project": "x", "language": "swift" if i % 2 else "python"})
        reward = (0.6 if helps in rec.ids else 0.0) + world.uniform(-0.4, 0.4)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
    return lam, helps, other


def _log(lam: Lamar) -> list[tuple[Any, ...]]:
    return [(e.seq, e.kind, e.key, e.data_json()) for e in lam.store.read(0)]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isinf(a) and math.isinf(b) and (a > 0) == (b > 0))


def test_a_new_action_is_a_new_treatment_whose_evidence_restarts(tmp_path: Path) -> None:
    lam, helps, _ = _trained(tmp_path / "s.db")
    before = lam.evidence(helps)
    assert before.verdict is Verdict.HELPS and before.randomized > 20
    edited = lam.edit(helps, action="clear the module cache", reason="clearer")
    assert (edited.id, edited.action, edited.precondition, edited.rationale) == (
        helps, "clear the module cache", "the build fails", "stale modules")
    assert edited.provenance["version"] == 2 and lam.get(helps) == edited
    after = lam.evidence(helps)
    # A new segment: no randomized episode, no verdict, the next share of alpha; the id's counts stay.
    assert (after.verdict, after.randomized, after.restarts) == (Verdict.UNKNOWN, 0, before.restarts + 1)
    assert (after.eligible, after.injected, after.held_out) == (before.eligible, before.injected, before.held_out)
    history = lam.history(helps)
    assert any(p.verdict == "helps" for p in history.points)  # the past segment's evidence stays in its history
    assert history.trail[-1][1] == "edited to version 2 (action); evidence restarted: clearer"
    # The new text is tried afresh (cold: its warm-up tries), and injected as written now.
    rec = lam.recall({"project": "x"})
    assert helps in rec.ids or helps in rec.held_out
    if helps in rec.ids:
        assert "clear the module cache" in rec.as_prompt()
    lam.close()
    again = Lamar(tmp_path / "s.db", k=2, seed=7, holdout=0.5)  # a fresh process folds the same
    assert again.get(helps) == edited and again.evidence(helps).restarts == after.restarts
    randomized = again.evidence(helps).randomized
    again.rebuild()
    assert again.get(helps) == edited and again.evidence(helps).randomized == randomized
    again.close()


def test_a_wording_fix_may_keep_the_evidence(tmp_path: Path) -> None:
    lam, helps, _ = _trained(tmp_path / "s.db", episodes=120)
    before = lam.evidence(helps)
    edited = lam.edit(helps, precondition="the Xcode build fails", rationale="stale module maps",
                      evidence="keep")
    after = lam.evidence(helps)
    assert edited.precondition == "the Xcode build fails" and edited.action == "clear the cache"
    assert dataclasses.asdict(after) == dataclasses.asdict(before)
    assert lam.history(helps).trail[-1][1].endswith("(precondition, rationale); evidence kept: edited by hand")
    lam.close()


def test_a_new_scope_moves_where_the_lesson_is_eligible(tmp_path: Path) -> None:
    lam = Lamar(tmp_path / "s.json", k=3, seed=1)
    exp = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    lam.edit(exp, scope={"project": "y", "language": "swift"})
    assert exp not in lam.recall({"project": "x"}).eligible
    assert exp in lam.recall({"project": "y", "language": "swift"}).eligible
    assert lam.experiences(scope={"project": "y"})[0].id == exp
    lam.edit(exp, scope=Scope(project="x"))
    assert lam.get(exp).provenance["version"] == 3 and exp in lam.recall({"project": "x"}).eligible
    lam.close()


def test_the_edit_survives_a_checkpoint(tmp_path: Path) -> None:
    lam = Lamar(tmp_path / "s.db", k=1, seed=1)
    exp = lam.add(Experience("the build fails", "clear the cache"))
    lam.edit(exp, action="clear DerivedData")
    assert lam.checkpoint()
    lam.close()
    again = Lamar(tmp_path / "s.db", k=1, seed=1)
    assert again.get(exp).action == "clear DerivedData" and again.evidence(exp).restarts == 1
    assert again.edit(exp, action="clear the cache").provenance["version"] == 3
    again.close()


def test_an_edit_folded_twice_changes_the_lesson_once(tmp_path: Path) -> None:
    lam = Lamar(tmp_path / "s.db", k=1, seed=1)
    exp = lam.add(Experience("the build fails", "clear the cache"))
    lam.edit(exp, action="clear DerivedData")
    (event,) = [e for e in lam.store.read(0) if e.kind == "edit"]
    lam.store.append([Event("edit", {**event.data, "action": "something else"}, key="edit:copy")])
    assert lam.get(exp).action == "clear DerivedData" and lam.evidence(exp).restarts == 1
    lam.close()


BAD: list[tuple[dict[str, Any], type[LamarError], str]] = [
    ({}, InvalidArgument, "at least one of"),
    ({"action": "clear the cache"}, InvalidArgument, "nothing to edit"),
    ({"action": "clear  the\u200b cache"}, InvalidArgument, "nothing to edit"),  # the same in prompt form
    ({"action": ""}, InvalidExperience, "action is empty"),
    ({"precondition": "   "}, InvalidExperience, "precondition is empty"),
    ({"action": 5}, InvalidExperience, "must be a string"),
    ({"action": "use ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}, InvalidExperience, "looks like a secret"),
    ({"action": "x" * 7000}, InvalidExperience, "characters long"),
    ({"scope": ["project"]}, InvalidArgument, "scope is a mapping"),
    ({"scope": {"project": 3}}, InvalidContext, "must be a string"),
    ({"action": "rerun it", "evidence": "maybe"}, InvalidArgument, "evidence must be one of"),
    ({"action": "rerun it", "evidence": "keep"}, InvalidArgument, "changes the action"),
    ({"scope": {"project": "y"}, "evidence": "keep"}, InvalidArgument, "changes the scope"),
    ({"action": "rerun it", "reason": None}, InvalidArgument, "reason must be"),
]


@pytest.mark.parametrize(("change", "error", "says"), BAD)
def test_bad_edits_are_refused_with_nothing_written(tmp_path: Path, change: dict[str, Any],
                                                    error: type[LamarError], says: str) -> None:
    lam = Lamar(tmp_path / "s.db", k=1, seed=1)
    exp = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    log = _log(lam)
    with pytest.raises(error, match=says):
        lam.edit(exp, **change)
    assert _log(lam) == log and lam.get(exp).provenance.get("version") is None
    lam.close()


def test_an_unknown_or_retired_lesson_is_refused_with_nothing_written(tmp_path: Path) -> None:
    lam = Lamar(tmp_path / "s.db", k=1, seed=1)
    exp = lam.add(Experience("the build fails", "clear the cache"))
    with pytest.raises(UnknownExperience, match="no experience 'exp_nope'"):
        lam.edit("exp_nope", action="rerun it")
    lam.retire(exp)
    log = _log(lam)
    with pytest.raises(InvalidExperience, match="is retired: revive it first") as caught:
        lam.edit(exp, action="rerun it")
    # "(revive)" named no call; the way to revive it in Python, with its id, as the fronts each name their own
    assert f"revive it first with lam.revive('{exp}') to edit it" in str(caught.value), caught.value
    assert str(caught.value).endswith(caught.value.advice) and caught.value.advice.startswith("revive it first")
    assert _log(lam) == log
    lam.close()


def test_an_erased_lesson_is_refused_without_pointing_at_revive(tmp_path: Path) -> None:
    # revive refuses an erased lesson, so "revive it first" sent the person in a circle.
    lam = Lamar(tmp_path / "s.db", k=1, seed=1)
    exp = lam.add(Experience("the build fails", "clear the cache"))
    lam.erase(exp)
    log = _log(lam)
    with pytest.raises(InvalidExperience) as caught:
        lam.edit(exp, action="rerun it")
    assert "was erased: its text is gone and it cannot be revived or edited; add a new lesson" in str(caught.value)
    assert "revive it first" not in str(caught.value) and _log(lam) == log
    lam.close()


def test_a_concurrent_edit_of_the_same_version_is_refused(tmp_path: Path) -> None:
    lam = Lamar(tmp_path / "s.db", k=1, seed=1)
    exp = lam.add(Experience("the build fails", "clear the cache"))
    # Another writer stored version 2 between this engine's read and its write: the key refuses it.
    lam.store.append([Event("status", {"id": "exp_other", "status": "active"}, key=f"edit:{exp}:2")])
    log = _log(lam)
    with pytest.raises(EventConflict, match="another writer stored version 2"):
        lam.edit(exp, action="rerun it")
    assert _log(lam) == log
    lam.close()


def test_an_imported_edit_is_held_to_what_edit_writes() -> None:
    source = Lamar(":memory:", k=1, seed=1)
    exp = source.add(Experience("the build fails", "clear the cache"))
    source.edit(exp, action="clear  Ｄerived Data")
    target = MemoryStore()
    transfer(source.store, target)
    assert Lamar(target).get(exp).action == "clear Derived Data"
    (edit,) = [e for e in source.store.read(0) if e.kind == "edit"]
    for bad in ({"evidence": "keep"}, {"version": 1}, {"action": "use ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"},
                {"scope": "x"}, {"changed": ["id"]}):
        forged = MemoryStore()
        forged.append([e if e.kind != "edit" else Event("edit", {**edit.data, **bad}, e.key, 0, e.time)
                       for e in source.store.read(0)])
        with pytest.raises(InvalidEvent, match="'edit'"):
            transfer(forged, MemoryStore())


def test_a_sleep_proposal_about_a_text_edited_since_is_not_applied(tmp_path: Path) -> None:
    lam = Lamar(tmp_path / "s.db", k=1, seed=1)
    kept = lam.add(Experience("a lint error", "run the formatter first"))
    twin = lam.add(Experience("A lint error.", "Run the formatter first."))
    report = lam.sleep()
    (merge,) = report.of_kind("merge")
    lam.edit(twin, action="run the linter first")
    result = lam.apply(report)
    assert result.applied == [] and result.skipped == [
        (merge.id, (f"lesson {twin} was edited after the report was made (version 1 then, 2 now): run sleep "
                    "again to judge the new version"))]
    assert lam.get(kept).status.value == lam.get(twin).status.value == "active"
    lam.close()
