"""Sleep proposes retiring a lesson the selection dropped, once it went RETIRE_AFTER episodes of its scope unchosen,
and says its harm is not proven; apply re-checks that it is still unchosen, and an older reader refuses the kind."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Experience, Lamar
from lamar.policy.dropped import RETIRE_AFTER
from lamar.sleep.kinds import KINDS
from tests.worlds import turning


@pytest.fixture
def dropped(tmp_path: Path) -> Iterator[tuple[Lamar, str]]:
    """A store whose one lesson helped for 600 episodes, then harmed, and was dropped: 1 400 episodes in."""
    with Lamar(str(tmp_path / "s.db"), k=1, seed=3) as lam:
        exp_id = lam.add(Experience("the build fails", "clear the cache"))
        turning(lam, exp_id, 600, turn=600, seed=11)
        turning(lam, exp_id, 300, turn=600, seed=12, start=600)
        _more(lam, exp_id, 900, 1400)
        yield lam, exp_id


def _more(lam: Lamar, exp_id: str, start: int, end: int) -> None:
    """Episodes start to end, a hundred at a time, each hundred with its own seed."""
    for at in range(start, end, 100):
        turning(lam, exp_id, 100, turn=600, seed=4 + at // 100, start=at)


def test_proposed_only_after_the_stretch_and_in_words_that_claim_no_harm(dropped: tuple[Lamar, str]) -> None:
    lam, exp_id = dropped
    ev = lam.evidence(exp_id)
    assert ev.dropped and 0 < ev.unchosen < RETIRE_AFTER, ev  # dropped, not yet long enough
    assert lam.sleep().of_kind("retire_dropped") == []
    _more(lam, exp_id, 1400, 1500)
    ev = lam.evidence(exp_id)
    assert ev.verdict.value == "unknown" and ev.unchosen >= RETIRE_AFTER, ev
    report = lam.sleep()
    (proposal,) = report.of_kind("retire_dropped")
    assert proposal.experience_ids == (exp_id,) and [p.kind for p in report.proposals] == ["retire_dropped"]
    assert proposal.reason.startswith(f"NOT proven harm: the selection stopped choosing it: not chosen in the last "
                                      f"{ev.unchosen} reported episodes of its scope"), proposal.reason
    assert "after its injected rewards fell" in proposal.reason and "its verdict stays unknown" in proposal.reason
    assert proposal.reason.endswith("Retire it, or keep it to let the selection try it again")
    assert lam.apply(report).applied == [proposal.id]
    assert lam.get(exp_id).status.value == "retired"
    assert lam.history(exp_id).trail[-1][1].startswith("set retired: sleep retire_dropped: NOT proven harm")


def test_apply_skips_it_as_stale_once_the_selection_chose_the_lesson_again(dropped: tuple[Lamar, str]) -> None:
    lam, exp_id = dropped
    _more(lam, exp_id, 1400, 1500)
    report = lam.sleep()
    (proposal,) = report.of_kind("retire_dropped")
    before = lam.evidence(exp_id).unchosen
    _more(lam, exp_id, 1500, 1900)  # an exploration draw chooses it once more
    assert lam.evidence(exp_id).unchosen < before
    result = lam.apply(report)
    assert result.applied == [] and result.codes == {proposal.id: "stale"}
    assert result.skipped == [(proposal.id, f"lesson {exp_id} was chosen again since the report was made")]
    assert lam.get(exp_id).status.value == "active"


def test_an_older_reader_refuses_the_kind(dropped: tuple[Lamar, str], monkeypatch: pytest.MonkeyPatch) -> None:
    lam, exp_id = dropped
    _more(lam, exp_id, 1400, 1500)
    report = lam.sleep()
    (proposal,) = report.of_kind("retire_dropped")
    monkeypatch.delitem(KINDS, "retire_dropped")  # a Lamar from before the kind
    result = lam.apply(report)
    assert result.codes == {proposal.id: "refused"}
    assert result.skipped[0][1].startswith("refused: unknown proposal kind 'retire_dropped'"), result.skipped
    assert lam.get(exp_id).status.value == "active"


def test_a_lesson_kept_is_asked_about_again_once_it_has_gone_twice_as_long_unchosen(
        dropped: tuple[Lamar, str]) -> None:
    lam, exp_id = dropped
    _more(lam, exp_id, 1400, 1500)
    report = lam.sleep()
    (proposal,) = report.of_kind("retire_dropped")
    kept = proposal.evidence[exp_id]["unchosen"]
    assert lam.reject(report, [proposal.id]) == [proposal.id]  # a person keeps it
    _more(lam, exp_id, 1500, 1700)
    assert kept < lam.evidence(exp_id).unchosen < 2 * kept
    later = lam.sleep()
    assert later.of_kind("retire_dropped") == [] and later.summary["rejected"] == [proposal.id]
    _more(lam, exp_id, 1700, 1800)
    assert lam.evidence(exp_id).unchosen >= 2 * kept
    (again,) = lam.sleep().of_kind("retire_dropped")
    assert again.id == proposal.id and again.evidence[exp_id]["unchosen"] >= 2 * kept
