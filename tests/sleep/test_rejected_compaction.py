"""Compaction is one subject of rejection, applying a rejected proposal ends its rejection, and what
`lamar rejections` shows of one outlives the checkpoint that folds its record away; on every backend."""

from __future__ import annotations

from lamar import Experience, Lamar, Proposal, Scope

TRACE = {"project": "trace"}


def _twins(lam: Lamar) -> None:
    for action in ("raise the test timeout", "run the failing test alone first"):
        lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))


def _played(lam: Lamar, episodes: int) -> None:
    for _ in range(episodes):
        lam.report(lam.recall(TRACE).episode_id, 0.5)


def _compaction(lam: Lamar, **options: object) -> Proposal:
    (compact,) = lam.sleep(keep_last=5, **options).of_kind("compact")  # type: ignore[arg-type]
    return compact


def test_rejecting_compaction_again_leaves_one_rejection_of_compaction(store_location: str) -> None:
    with Lamar(store_location, seed=1) as lam:
        _twins(lam)
        _played(lam, 10)
        first = _compaction(lam)
        assert lam.reject(lam.sleep(keep_last=5), [first.id]) == [first.id]
        _played(lam, 3)  # 8 to fold: short of twice the 5 rejected
        assert lam.sleep(keep_last=5).of_kind("compact") == []
        _played(lam, 10)
        second = _compaction(lam)
        assert len(second.payload["episodes"]) == 18 and second.id != first.id
        assert lam.reject(lam.sleep(keep_last=5), [second.id]) == [second.id]
        (held,) = lam.rejections()  # the later no replaces the earlier one
        assert (held.proposal, held.kind, held.count) == ("compact", "compact", 18)
    with Lamar(store_location, seed=2) as lam:
        _played(lam, 10)  # 28 to fold: short of twice the 18 now rejected
        (held,) = lam.rejections()
        assert held.count == 18 and lam.sleep(keep_last=5).of_kind("compact") == []
        assert [r.count for r in lam.unreject("compact")] == [18] and lam.rejections() == []
        assert len(_compaction(lam).payload["episodes"]) == 28


def test_applying_a_rejected_compaction_ends_the_rejection_of_compaction(store_location: str) -> None:
    with Lamar(store_location, seed=1) as lam:
        _twins(lam)
        _played(lam, 10)
        rejected = _compaction(lam)
        lam.reject(lam.sleep(keep_last=5), [rejected.id])
        report = lam.sleep(keep_last=5, include_rejected=True)
        assert lam.apply(report, only=[rejected.id]).applied == [rejected.id]
        assert lam.rejections() == []
        _played(lam, 3)  # fewer than the 5 rejected: proposed all the same, compaction was said yes to
        assert len(_compaction(lam).payload["episodes"]) == 3


def test_applying_a_rejected_proposal_undoes_its_rejection(store_location: str) -> None:
    with Lamar(store_location, seed=1) as lam:
        _twins(lam)
        report = lam.sleep()
        (contradiction,) = report.of_kind("contradiction")
        (record,) = [lam.rejections()[0].id for _ in [lam.reject(report, [contradiction.id])]]
        assert lam.apply(report).applied == [contradiction.id]
    with Lamar(store_location, seed=2) as lam:
        assert lam.rejections() == [] and lam.unreject(contradiction.id) == []
        assert "unreject:" + record in lam._view().applied_ids()  # undone as `unreject` undoes it


def test_what_rejections_list_is_the_same_after_a_checkpoint(store_location: str) -> None:
    with Lamar(store_location, seed=1) as lam:
        _twins(lam)
        _played(lam, 30)
        report = lam.sleep(keep_last=5)
        (contradiction,) = report.of_kind("contradiction")
        lam.reject(report, [contradiction.id])
        before = lam.rejections()
        assert before[0].kind == "contradiction" and before[0].reason and before[0].time is not None
    with Lamar(store_location, seed=2) as lam:
        assert lam.apply(lam.sleep(keep_last=5)).applied  # the compaction's checkpoint folds the record's event
    with Lamar(store_location, seed=3) as lam:
        assert lam.rejections() == before
        assert lam.sleep(keep_last=5).summary["rejected"] == [contradiction.id]
