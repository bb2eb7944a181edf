"""A rejected proposal is remembered by the store: sleep leaves it out until what it rests on changes."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest

from lamar import Experience, Lamar, Proposal, Scope, Verdict
from lamar.sleep.rejected import Rejection, count, state

BUILD = {"project": "trace", "task": "build"}


def _harmful(lam: Lamar) -> str:
    """A lesson proven harmful in a seeded world, beside a harmless one (explore=4 keeps it in play)."""
    trace = Scope(project="trace")
    bad = lam.add(Experience("the build fails", "delete the repository and clone it again", scope=trace))
    lam.add(Experience("the build fails after a bump", "clear DerivedData", scope=trace))
    _play(lam, bad, 3, until=lambda: lam.evidence(bad).verdict is Verdict.HARMS)
    assert lam.evidence(bad).verdict is Verdict.HARMS
    return bad


def _play(lam: Lamar, bad: str, seed: int, until: Callable[[], bool], most: int = 2000) -> None:
    rng = random.Random(seed)
    for n in range(1, most + 1):
        rec = lam.recall(BUILD)
        reward = 0.1 + rng.gauss(0.0, 0.3) - (0.6 if bad in rec.ids else 0.0)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
        if n % 10 == 0 and until():
            return


def _twins(lam: Lamar) -> tuple[str, str]:
    return (lam.add(Experience("a UI test times out on CI", "raise the test timeout")),
            lam.add(Experience("a UI test times out on CI", "run the failing test alone first")))


def test_a_rejected_retirement_stays_out_while_its_evidence_stands_and_comes_back_after_an_edit() -> None:
    lam = Lamar(":memory:", k=3, seed=7, holdout=0.5, explore=4.0)
    bad = _harmful(lam)
    report = lam.sleep()
    (retire,) = report.of_kind("retire")
    assert lam.reject(report, [retire.id]) == [retire.id]
    assert lam.reject(report, [retire.id]) == []  # said once: a second no records nothing
    (held,) = lam.rejections()
    assert (held.proposal, held.count, held.kind, held.lessons) == (retire.id, lam.evidence(bad).randomized,
                                                                    "retire", (bad,))
    _play(lam, bad, 4, until=lambda: False, most=500)  # more evidence, short of twice the randomized episodes
    assert lam.evidence(bad).verdict is Verdict.HARMS and lam.evidence(bad).randomized < 2 * (held.count or 0)
    again = lam.sleep()
    assert again.of_kind("retire") == [] and again.summary["rejected"] == [retire.id]
    assert [p.id for p in lam.sleep(include_rejected=True).of_kind("retire")] == [retire.id]
    lam.edit(bad, rationale="a fresh clone drops local config", evidence="keep")  # still harmful, a new version
    (asked,) = lam.sleep().of_kind("retire")
    assert asked.id == retire.id and lam.sleep().summary["rejected"] == []


def test_a_rejected_contradiction_comes_back_when_a_lesson_it_names_is_edited() -> None:
    lam = Lamar(seed=0)
    first, _ = _twins(lam)
    (contradiction,) = lam.sleep().proposals
    lam.reject(lam.sleep(), [contradiction.id])
    assert len(lam.sleep()) == 0 and lam.sleep().summary["rejected"] == [contradiction.id]
    lam.edit(first, action="raise the test timeout to two minutes")
    (back,) = lam.sleep().proposals
    assert back.id == contradiction.id


def test_a_rejected_contradiction_comes_back_when_a_lesson_it_names_absorbs_a_duplicate() -> None:
    lam = Lamar(seed=0)
    _twins(lam)
    (contradiction,) = lam.sleep().proposals
    lam.reject(lam.sleep(), [contradiction.id])
    lam.add(Experience("a UI test times out on CI.", "Raise the test timeout!"))  # the first one, reworded
    report = lam.sleep()
    assert [p.kind for p in report] == ["merge"] and report.summary["rejected"] == [contradiction.id]
    lam.apply(report)
    (back,) = lam.sleep().proposals
    assert back.id == contradiction.id and lam.sleep().summary["rejected"] == []


def test_a_rejection_is_undone_and_can_be_said_again() -> None:
    lam = Lamar(seed=0)
    _twins(lam)
    report = lam.sleep()
    (pid,) = [p.id for p in report]
    lam.reject(report, [pid])
    (undone,) = lam.unreject(pid)
    assert undone.proposal == pid and undone.kind == "contradiction"
    assert lam.rejections() == [] and [p.id for p in lam.sleep()] == [pid]
    assert lam.unreject(pid) == []
    assert lam.reject(report, [pid]) == [pid]  # a second record on the same grounds
    (second,) = lam.rejections()
    assert second.id.endswith(":2") and len(lam.sleep()) == 0


def test_applying_a_rejected_proposal_is_saying_yes_to_it() -> None:
    lam = Lamar(seed=0)
    _twins(lam)
    report = lam.sleep()
    lam.reject(report, [report.proposals[0].id])
    assert lam.apply(report).applied == [report.proposals[0].id]
    assert lam.sleep(include_rejected=True).summary["already_applied"] == [report.proposals[0].id]
    # The no is over: not listed as in force, and `lamar sleep` (every proposal) lists it as applied, not rejected.
    assert lam.rejections() == []
    night = lam.sleep(include_applied=True)
    assert night.summary["rejected"] == [] and [p.id for p in night.proposals] == [report.proposals[0].id]


def test_reject_refuses_what_the_report_does_not_hold() -> None:
    from lamar import InvalidArgument, InvalidReport, UnknownProposal

    lam = Lamar(seed=0)
    _twins(lam)
    with pytest.raises(UnknownProposal, match="no proposal 'retire_nothing'"):
        lam.reject(lam.sleep(), ["retire_nothing"])
    with pytest.raises(InvalidArgument):
        lam.unreject("")
    report = lam.sleep()
    edited = dataclasses.replace(report, proposals=[*report.proposals, dataclasses.replace(
        report.proposals[0], id="retire:0\nforged")])
    with pytest.raises(InvalidReport, match="not one sleep makes"):
        lam.reject(edited, [report.proposals[0].id, "retire:0\nforged"])
    assert lam.rejections() == []  # refused whole: not even the first was recorded


def _proposal(kind: str, evidence: dict[str, dict[str, object]], payload: dict[str, object] | None = None) -> Proposal:
    return Proposal(id=Proposal.make_id(kind, sorted(evidence)), kind=kind, experience_ids=tuple(sorted(evidence)),
                    reason="r", evidence=evidence, payload=payload or {})


@pytest.mark.parametrize(("kind", "then", "now", "asked"), [
    ("retire", {"randomized": 40, "version": 1, "restarts": 0}, {"randomized": 79, "version": 1, "restarts": 0}, False),
    ("retire", {"randomized": 40, "version": 1, "restarts": 0}, {"randomized": 80, "version": 1, "restarts": 0}, True),
    ("retire", {"randomized": 40, "version": 1, "restarts": 0}, {"randomized": 41, "version": 2, "restarts": 0}, True),
    ("promote", {"randomized": 40, "version": 1, "restarts": 0}, {"randomized": 12, "version": 1, "restarts": 1}, True),
    ("narrow", {"randomized": 30, "version": 1, "restarts": 0}, {"randomized": 59, "version": 1, "restarts": 0}, False),
    ("contradiction", {"randomized": 0, "version": 1, "restarts": 0},
     {"randomized": 500, "version": 1, "restarts": 3}, False),
    ("contradiction", {"randomized": 0, "version": 1}, {"randomized": 0, "version": 2}, True),
    ("candidate", {"traces": 3, "sessions": 2}, {"traces": 4, "sessions": 3}, False),
    ("candidate", {"traces": 3, "sessions": 2}, {"traces": 9, "sessions": 4}, True),
])
def test_what_asks_a_rejected_proposal_again(kind: str, then: dict[str, object], now: dict[str, object],
                                             asked: bool) -> None:
    before, after = _proposal(kind, {"exp_1": then}), _proposal(kind, {"exp_1": now})
    rejection = Rejection("reject:x", before.id, count(before), state(before))
    assert rejection.holds_for(after) is not asked


def test_a_rejected_compaction_stays_out_until_it_would_fold_twice_the_episodes() -> None:
    then = Proposal(id=Proposal.make_id("compact", [], {"episodes": ["e1", "e2"]}), kind="compact", experience_ids=(),
                    reason="r", payload={"episodes": ["e1", "e2", "e3"]})
    rejection = Rejection("reject:x", "compact", count(then), state(then))
    for episodes, held in ((["e4", "e5", "e6", "e7", "e8"], True), ([f"e{i}" for i in range(6)], False)):
        now = Proposal(id=Proposal.make_id("compact", [], {"episodes": episodes}), kind="compact",
                       experience_ids=(), reason="r", payload={"episodes": episodes})
        assert rejection.holds_for(now) is held
