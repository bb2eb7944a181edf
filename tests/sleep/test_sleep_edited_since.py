"""A proposal judged on one version of a lesson, applied after the lesson was edited: skipped when
the edit replaced what it was judged on (the text for a merge, the evidence for a retirement or a
narrowing), applied when a wording fix kept that evidence."""

from __future__ import annotations

import json
from pathlib import Path

from lamar import Lamar, SleepReport, Status
from tests.sleep.test_concurrent_narrow import _split_lesson
from tests.sleep.test_sleep_consolidation import fresh_copy, world

__all__ = ["world"]  # the fixture, shared with the consolidation tests


def _edited(exp_id: str) -> str:
    return (f"lesson {exp_id} was edited after the report was made (version 1 then, 2 now): "
            "run sleep again to judge the new version")


def test_a_retirement_and_a_merge_judged_before_an_edit_are_skipped(world) -> None:
    lam = fresh_copy(world)
    _, ids = world
    report = lam.sleep()
    (retire,), merge = report.of_kind("retire"), report.of_kind("merge")[0]
    lam.edit(ids["bad"], action="delete the build folder and build again")  # a new treatment
    lam.edit(ids["dup_exact"], action="quarantine the failing test")
    result = lam.apply(report, only=[retire.id, merge.id])
    assert result.applied == []
    assert result.skipped == [(retire.id, _edited(ids["bad"])), (merge.id, _edited(ids["dup_exact"]))]
    assert lam.get(ids["bad"]).status is lam.get(ids["dup_exact"]).status is Status.ACTIVE


def test_a_wording_fix_keeps_a_retirement_but_not_a_merge(world) -> None:
    lam = fresh_copy(world)
    _, ids = world
    report = lam.sleep()
    (retire,), merge = report.of_kind("retire"), report.of_kind("merge")[0]
    lam.edit(ids["bad"], rationale="a clean clone is faster than finding the cause", evidence="keep")
    lam.edit(ids["dup_exact"], precondition="a test fails now and then", evidence="keep")
    result = lam.apply(report, only=[retire.id, merge.id])
    assert result.applied == [retire.id]  # judged on evidence the wording fix kept
    assert result.skipped == [(merge.id, _edited(ids["dup_exact"]))]  # judged on the wording it changed
    assert lam.get(ids["bad"]).status is Status.RETIRED
    assert lam.get(ids["dup_exact"]).status is Status.ACTIVE


def test_a_narrowing_is_skipped_after_an_edit_and_kept_after_a_wording_fix(tmp_path: Path) -> None:
    for keep in (False, True):
        location = str(tmp_path / f"s{keep}.db")
        lesson = _split_lesson(location, 0)
        lam = Lamar(location, k=2, seed=1)
        (narrow,) = lam.sleep().of_kind("narrow")
        report = SleepReport([narrow], made_at=lam.stats()["events"])
        if keep:
            lam.edit(lesson, rationale="a stale module cache breaks the build", evidence="keep")
        else:
            lam.edit(lesson, action="clear the module cache and the index")
        result = lam.apply(report)
        if keep:
            assert result.applied == [narrow.id] and dict(lam.get(lesson).scope) == narrow.payload["scope"]
        else:
            assert result.skipped == [(narrow.id, _edited(lesson))]
            assert dict(lam.get(lesson).scope) == {"task": "build"}
        lam.close()


def test_a_report_saved_before_proposals_noted_versions_applies_as_before(world) -> None:
    lam = fresh_copy(world)
    _, ids = world
    data = lam.sleep().to_dict()
    merge = next(p for p in data["proposals"] if p["kind"] == "merge")
    for ev in merge["evidence"].values():
        del ev["version"]
    old = SleepReport.from_dict(json.loads(json.dumps(data)))
    lam.edit(ids["dup_exact"], precondition="a test fails now and then", evidence="keep")
    assert lam.apply(old, only=[merge["id"]]).applied == [merge["id"]]
    assert lam.get(ids["dup_exact"]).status is Status.RETIRED


def test_the_versions_survive_the_report_file(world, tmp_path: Path) -> None:
    lam = fresh_copy(world)
    _, ids = world
    report = lam.sleep()
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report.to_dict()))
    restored = SleepReport.from_dict(json.loads(path.read_text()))
    assert restored.proposals == report.proposals
    merge = restored.of_kind("merge")[0]
    assert {i: ev["version"] for i, ev in merge.evidence.items()} == dict.fromkeys(merge.experience_ids, 1)
    lam.edit(ids["dup_near"], action="skip the flaky test")
    assert lam.apply(restored, only=[merge.id]).skipped == [(merge.id, _edited(ids["dup_near"]))]
