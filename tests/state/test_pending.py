"""Pending episodes: listed with their age, settled by the policy as recorded outcome events."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from lamar import DuplicateReport, Experience, Lamar, Scope, Signal


def _engine(path, **tuning):
    lam = Lamar(str(path), k=2, seed=3, **tuning)
    return lam


def _lesson(lam):
    return lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))


def test_pending_lists_unreported_episodes_with_their_age(tmp_path):
    lam = _engine(tmp_path / "s.db")
    _lesson(lam)
    first = lam.recall({"project": "x"})
    second = lam.recall({"project": "x"})
    third = lam.recall({"project": "x"})
    lam.report(second.episode_id, Signal.SHIPPED)
    now = lam.episode(third.episode_id).time + 100.0
    listed = lam.pending(now=now)
    assert [p.episode_id for p in listed] == [first.episode_id, third.episode_id]
    assert listed[0].age == pytest.approx(now - lam.episode(first.episode_id).time)
    assert listed[0].context == {"project": "x"}
    assert lam.pending(older_than=1000.0, now=now) == []
    assert len(lam.pending(older_than=50.0, now=now)) == 2


@pytest.mark.parametrize("resumed", [False, True], ids=["folded", "resumed"])
def test_pending_only_lists_the_named_episodes_in_one_read_of_the_store(tmp_path: Path, resumed: bool) -> None:
    # A caller that follows a few episodes (a LangGraph thread's open ones) asks about them all at
    # once: one read of the store, and no walk of every pending episode in it.
    path = tmp_path / "s.db"
    lam = _engine(path)
    _lesson(lam)
    ids = [lam.recall({"project": "x"}).episode_id for _ in range(300)]
    lam.report(ids[5], Signal.SHIPPED)
    lam.expire(ids[7])
    if resumed:  # from the saved state: the pending episodes are in it, the reported ones are not
        lam.close()
        lam = _engine(path)
    now = lam.episode(ids[-1]).time
    reads, read = [0], lam.store.read
    lam.store.read = lambda after=0: (reads.__setitem__(0, reads[0] + 1), read(after))[1]  # type: ignore[method-assign]
    asked = [ids[9], ids[7], ids[5], "no-such-episode", ids[3], ids[9]]
    listed = lam.pending(only=asked, now=now)
    assert [p.episode_id for p in listed] == [ids[3], ids[9]]  # oldest first, each once
    assert listed[0].context == {"project": "x"} and listed[0].age > listed[1].age
    assert reads[0] == 1
    assert lam.pending(only=ids[3], now=now) == lam.pending(only=[ids[3]], now=now) and lam.pending(only=[]) == []
    assert [p.episode_id for p in lam.pending(only=ids)] == [p.episode_id for p in lam.pending()]


def test_default_outcome_is_recorded_once_and_seen_by_every_process(tmp_path):
    path = tmp_path / "s.db"
    lam = _engine(path, pending_after=60.0, pending_outcome=Signal.REASKED)
    exp_id = _lesson(lam)
    old = lam.recall({"project": "x"})
    later = lam.episode(old.episode_id).time + 61.0
    settled = lam.settle_pending(now=later)
    assert settled == [old.episode_id]
    assert lam.settle_pending(now=later) == []  # once
    other = _engine(path, pending_after=60.0, pending_outcome=Signal.REASKED)
    assert other.settle_pending(now=later) == []  # the other process sees it settled
    record = other.episode(old.episode_id)
    assert record.signal == "reasked" and record.settled == "default"
    outcomes = [e for e in other.store.read(0) if e.kind == "outcome"]
    assert len(outcomes) == 1 and outcomes[0].data["default"] is True
    assert "no report within 60s" in outcomes[0].data["reason"]
    assert other.stats()["reports"] == 1
    # the default counts as evidence for every eligible lesson, like a report
    assert lam.evidence(exp_id) == other.evidence(exp_id)
    assert other.evidence(exp_id).injected + other.evidence(exp_id).held_out == 1


def test_expiry_teaches_nothing_and_a_late_report_replaces_it(tmp_path):
    path = tmp_path / "s.db"
    lam = _engine(path, pending_after=0.0)
    _lesson(lam)
    rec = lam.recall({"project": "x"})  # pending_after=0: the next recall settles it
    lam.recall({"project": "x"})
    record = lam.episode(rec.episode_id)
    assert record.settled == "expired" and record.reward is None
    assert lam.stats()["reports"] == 0
    assert rec.episode_id not in [p.episode_id for p in lam.pending()]
    lam.report(rec.episode_id, Signal.SHIPPED)  # late: replaces the expiry, no replace=True needed
    fresh = _engine(path)
    assert fresh.episode(rec.episode_id).signal == "shipped"
    assert fresh.stats()["reports"] == 1
    with pytest.raises(DuplicateReport):
        fresh.report(rec.episode_id, Signal.REVERTED)  # a real report is not replaced silently


def test_settling_survives_a_checkpoint(tmp_path):
    path = tmp_path / "s.db"
    lam = _engine(path, pending_after=0.0)
    _lesson(lam)
    rec = lam.recall({"project": "x"})
    lam.settle_pending(now=time.time() + 1)
    lam.checkpoint()
    fresh = _engine(path)
    assert fresh.pending() == []
    fresh.report(rec.episode_id, 0.5)
    assert fresh.episode(rec.episode_id).reward == 0.5


def test_a_checkpoint_keeps_which_outcomes_only_stood_in_for_a_report(tmp_path: Path) -> None:
    """A fresh process read an expiry folded into a checkpoint as a report (`settled` None), so an
    integration's silent outcome replaced a failed run's expiry (found by tools/engine_fuzz.py)."""
    path = tmp_path / "s.db"
    lam = _engine(path, pending_after=3600.0, pending_outcome=Signal.ACCEPTED)
    _lesson(lam)
    failed, waited, reported = (lam.recall({"project": "x"}).episode_id for _ in range(3))
    lam.report(reported, Signal.SHIPPED)
    lam.expire(failed, "the run failed")
    assert lam.settle_pending(now=time.time() + 7200) == [waited]
    assert lam.checkpoint()
    # from the snapshot, from the state saved since, the writer
    for reader in (_engine(path, pending_after=3600.0), _engine(path, pending_after=3600.0), lam):
        assert [reader.episode(e).settled for e in (failed, waited, reported)] == ["expired", "default", None]
    reader.report(failed, Signal.SHIPPED)  # a late report still replaces the expiry
    assert _engine(path).episode(failed).settled is None


def test_bad_pending_tuning_says_what_it_takes():
    with pytest.raises(ValueError, match="pending_after"):
        Lamar(":memory:", pending_after=-1)
    with pytest.raises(ValueError, match="reward"):
        Lamar(":memory:", pending_outcome=3.0)


def test_expire_one_episode_by_hand(tmp_path):
    lam = _engine(tmp_path / "s.db")
    _lesson(lam)
    rec = lam.recall({"project": "x"})
    assert lam.expire(rec.episode_id, "the run failed") is True
    assert lam.expire(rec.episode_id) is False
    assert lam.pending() == []
    (event,) = [e for e in lam.store.read(0) if e.kind == "outcome"]
    assert event.data["expired"] is True and event.data["reason"] == "the run failed"


def test_expire_refuses_what_is_not_an_episode_of_this_store():
    from lamar import UnknownEpisode

    lam = Lamar(":memory:")
    for bad in ("ep_nope", ["ep"], None):
        with pytest.raises(UnknownEpisode):
            lam.expire(bad)


def test_a_process_that_only_settles_pending_episodes_saves_the_state_it_folded(tmp_path: Path) -> None:
    # A cron job that opens a store, settles what waited too long and closes must leave the saved
    # state at the log's end, as a process that reported would: the next open folds no tail.
    path = tmp_path / "settled.db"
    lam = Lamar(str(path), k=2, seed=3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="build")))
    waiting = [lam.recall({"task": "build"}).episode_id for _ in range(20)]
    lam.close()
    with sqlite3.connect(path) as db:
        (before,) = db.execute("SELECT seq FROM state").fetchone() or (0,)
    settler = Lamar(str(path), k=2, seed=3, pending_after=0.0)
    assert sorted(settler.settle_pending(now=time.time() + 10)) == sorted(waiting)
    settler.close()
    with sqlite3.connect(path) as db:
        (after,) = db.execute("SELECT seq FROM state").fetchone()
        (last,) = db.execute("SELECT max(seq) FROM events").fetchone()
    assert after == last > before
