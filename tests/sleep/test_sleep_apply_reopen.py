"""Apply against real stores: a report made before a change is checked against it, checkpoints included."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal, SleepReport
from lamar.store import Event


def _ship(lam: Lamar, episodes: int) -> None:
    """Recall and report as shipped `episodes` episodes in the demo project."""
    for _ in range(episodes):
        lam.report(lam.recall({"project": "demo"}).episode_id, Signal.SHIPPED)


def _twins(location: str, *, episodes: int) -> tuple[Lamar, str, str]:
    """A store with two wordings of one docs lesson (the one to keep, its twin) that sleep proposes to
    merge, and a demo lesson with `episodes` shipped episodes for it to compact."""
    lam = Lamar(location, k=2, seed=1)
    docs = Scope(project="docs")
    kept = lam.add(Experience("tests are flaky", "rerun the failing test once", scope=docs))
    twin = lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=docs))
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
    _ship(lam, episodes)
    return lam, kept, twin


def test_a_lesson_retired_and_revived_after_the_report_stays_unmerged_across_a_checkpoint(store_location: str) -> None:
    lam, kept, twin = _twins(store_location, episodes=30)
    report = lam.sleep(keep_last=5)
    (merge,) = report.of_kind("merge")
    assert set(merge.experience_ids) == {kept, twin}
    saved = report.to_dict()
    lam.retire(twin, reason="a wrong duplicate")
    lam.revive(twin, reason="it was right after all")
    stale = "was retired after the report was made"
    assert stale in lam.would_skip(report)[merge.id]
    (compact,) = report.of_kind("compact")
    assert lam.apply(report, only=[compact.id]).applied == [compact.id]  # checkpoints the log
    lam.close()

    again = Lamar(store_location, k=2, seed=1)
    result = again.apply(SleepReport.from_dict(saved))
    assert result.applied == [] and stale in dict(result.skipped)[merge.id]
    assert again.get(twin).status.value == "active"
    again.close()


def test_a_compact_proposal_edited_to_fold_an_open_episode_is_refused(store_location: str) -> None:
    lam = Lamar(store_location, k=2, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
    _ship(lam, 30)
    still_open = lam.recall({"project": "demo"}).episode_id
    data = lam.sleep(keep_last=5).to_dict()
    data["proposals"][0]["payload"]["episodes"].append(still_open)  # edited by hand
    lam.close()

    again = Lamar(store_location, k=2, seed=1)
    result = again.apply(SleepReport.from_dict(data))
    assert result.applied == [] and result.skipped[0][1].startswith(f"refused: episode {still_open}")
    again.report(still_open, Signal.SHIPPED)  # still there to report
    assert again.stats()["reports"] == 31
    again.close()


def test_a_compact_proposal_of_another_store_folds_nothing_and_is_skipped(store_location: str, tmp_path: Path) -> None:
    other = Lamar(str(tmp_path / "other.db"), k=2, seed=1)
    other.add(Experience("the build fails", "clear the cache", scope=Scope(project="demo")))
    _ship(other, 30)
    report = other.sleep(keep_last=5)
    other.close()
    lam = Lamar(store_location, k=2, seed=1)
    lam.add(Experience("the tests hang", "kill the simulator", scope=Scope(project="demo")))
    _ship(lam, 10)
    before = lam.stats()
    result = lam.apply(report)
    assert result.applied == [] and "none of the episodes it folds" in result.skipped[0][1]
    lam.close()
    again = Lamar(store_location, k=2, seed=1)
    assert again.stats()["compacted"] == before["compacted"] and again.stats()["episodes"] == 10
    again.close()


def test_a_reopened_store_applies_a_merge_without_folding_the_whole_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    location = str(tmp_path / "s.db")
    lam, kept, twin = _twins(location, episodes=300)
    report = lam.sleep(keep_last=5)
    (merge,) = report.of_kind("merge")
    (compact,) = report.of_kind("compact")
    lam.close()

    again = Lamar(location, k=2, seed=1)  # resumed from the saved state: it holds no reported episode
    store, afters = again.store, []
    read = store.read

    def counting_read(after: int = 0) -> list[Event]:
        afters.append(after)
        return read(after)

    monkeypatch.setattr(store, "read", counting_read)
    assert again.apply(report, only=[merge.id]).applied == [merge.id]
    assert afters and 0 not in afters  # the lessons the state holds judge a merge; no whole log read
    assert again.get(twin).status.value == "retired" and again.get(kept).status.value == "active"
    assert again.apply(report, only=[compact.id]).applied == [compact.id]  # needs every episode
    assert 0 in afters
    assert again.stats()["compacted"]["episodes"] == 295
    again.close()
