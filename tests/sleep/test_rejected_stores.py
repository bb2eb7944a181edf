"""A rejection survives a restart on every backend, and a checkpoint (a compaction) that folds its record
away: the id the store holds as applied carries everything sleep checks, its snapshot what the person saw."""

from __future__ import annotations

from lamar import Experience, Lamar, Scope


def test_a_rejection_outlives_a_restart_and_a_checkpoint(store_location: str) -> None:
    with Lamar(store_location, seed=1) as lam:
        for action in ("raise the test timeout", "run the failing test alone first"):
            lam.add(Experience("a UI test times out on CI", action, scope=Scope(project="trace")))
        for _ in range(30):
            lam.report(lam.recall({"project": "trace"}).episode_id, 0.5)
        report = lam.sleep(keep_last=5)
        (contradiction,) = report.of_kind("contradiction")
        assert lam.reject(report, [contradiction.id]) == [contradiction.id]
    with Lamar(store_location, seed=2) as lam:  # a fresh process: its saved state, or the log
        again = lam.sleep(keep_last=5)
        assert [p.kind for p in again] == ["compact"] and again.summary["rejected"] == [contradiction.id]
        (held,) = lam.rejections()
        assert (held.kind, held.proposal, held.count) == ("contradiction", contradiction.id, None)
        assert lam.apply(again).applied == [again.proposals[0].id]  # the checkpoint folds the record's event
    with Lamar(store_location, seed=3) as lam:
        assert lam.sleep().proposals == [] and lam.sleep().summary["rejected"] == [contradiction.id]
        (held,) = lam.rejections()
        # What the person saw is kept by the checkpoint's snapshot, beside the id that holds its grounds.
        assert (held.proposal, held.kind, held.lessons) == (contradiction.id, "contradiction",
                                                           contradiction.experience_ids)
        assert [r.proposal for r in lam.unreject(contradiction.id)] == [contradiction.id]
    with Lamar(store_location, seed=4) as lam:
        assert [p.id for p in lam.sleep()] == [contradiction.id] and lam.rejections() == []
