"""Compaction: old reported episodes fold into one summary event; evidence and counts survive."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal, UnknownEpisode

CONTEXT = {"project": "trace"}


def play(lam: Lamar, episodes: int, *, seed: int, unreported_every: int = 0) -> list[str]:
    """Recall and report (skipping every n-th report); returns the episode ids in order."""
    rng = random.Random(seed)
    signals = list(Signal)
    ids = []
    for n in range(episodes):
        rec = lam.recall(CONTEXT)
        ids.append(rec.episode_id)
        if unreported_every and n % unreported_every == 0:
            continue
        lam.report(rec.episode_id, rng.choice(signals))
    return ids


@pytest.fixture
def lam(tmp_path: Path) -> Lamar:
    engine = Lamar(tmp_path / "experience.db", k=2, seed=5, holdout=0.5)
    engine.add(Experience("the build fails", "clear DerivedData", scope=Scope(project="trace")))
    engine.add(Experience("a test fails", "read the whole log", scope=Scope(project="trace")))
    return engine


def test_nothing_to_compact_by_default_on_a_small_store(lam: Lamar) -> None:
    play(lam, 30, seed=1)
    assert lam.sleep().of_kind("compact") == []
    assert lam.sleep(keep_last=None, older_than=None).of_kind("compact") == []
    assert lam.sleep(keep_last=0, older_than=3600).of_kind("compact") == []  # all are younger than an hour


def test_compaction_folds_old_reported_episodes_and_keeps_the_audit(lam: Lamar, tmp_path: Path) -> None:
    episodes = play(lam, 60, seed=2, unreported_every=7)
    unreported = set(episodes[::7])
    stats = lam.stats()
    lessons = [e.id for e in lam.experiences()]
    evidence = {i: lam.evidence(i).to_dict() for i in lessons}

    report = lam.sleep(keep_last=10)
    (compact,) = report.of_kind("compact")
    folded = compact.payload["episodes"]
    assert folded == [e for e in episodes[:-10] if e not in unreported]  # oldest first, reported only
    counts = compact.payload["counts"]
    assert counts["episodes"] == counts["reports"] == len(folded)
    assert sum(counts["by_signal"].values()) == len(folded)
    records = [lam.episode(e) for e in folded]
    assert counts["reward_sum"] == pytest.approx(sum(r.reward for r in records if r.reward is not None))
    for exp_id in lessons:
        audit = compact.payload["lessons"][exp_id]
        assert audit["injected"] == sum(exp_id in r.injected for r in records)
        assert audit["held_out"] == sum(exp_id in r.held_out for r in records)
        assert audit["eligible"] == len(folded)

    assert lam.apply(report, only=[compact.id]).applied == [compact.id]
    assert lam.stats()["episodes"] == stats["episodes"]
    assert lam.stats()["reports"] == stats["reports"]
    assert {i: lam.evidence(i).to_dict() for i in lessons} == evidence
    with pytest.raises(UnknownEpisode):
        lam.episode(folded[0])
    late = min(unreported, key=episodes.index)  # an old episode that was never reported
    lam.report(late, Signal.SHIPPED)  # still reportable: unreported episodes are never folded
    assert lam.stats()["reports"] == stats["reports"] + 1
    assert lam.sleep(keep_last=10).of_kind("compact")[0].payload["episodes"] == [late]

    # the folded state is what a fresh process rebuilds from the same SQLite file
    reopened = Lamar(tmp_path / "experience.db", k=2, seed=5, holdout=0.5)
    assert reopened.stats()["episodes"] == lam.stats()["episodes"]
    assert reopened.stats()["reports"] == lam.stats()["reports"]
    assert {i: reopened.evidence(i).to_dict() for i in lessons} == {i: lam.evidence(i).to_dict() for i in lessons}
    # applying it also checkpointed the store: the log starts with one snapshot holding the audit
    events = reopened.store.read(0)
    assert events[0].kind == "snapshot" and not any(e.kind in ("compact", "episode") for e in events[1:])
    audit = reopened.stats()["compacted"]
    assert (audit["compactions"], audit["episodes"], audit["reports"], audit["by_signal"]) == (
        1, counts["episodes"], counts["reports"], counts["by_signal"])
    assert audit["reward_sum"] == pytest.approx(counts["reward_sum"])


def test_compaction_by_age(lam: Lamar) -> None:
    play(lam, 20, seed=3)
    now = lam.episode(play(lam, 1, seed=4)[0]).time
    (compact,) = lam.sleep(keep_last=None, older_than=0.0).of_kind("compact")
    assert len(compact.payload["episodes"]) == 21
    assert "older than 0 s" in compact.reason
    from lamar.sleep.compaction import propose_compaction
    from lamar.state.view import StateView
    from tests.state.seam import folded

    view = StateView(folded(lam))
    assert propose_compaction(view, keep_last=None, older_than=60.0, now=now + 30.0) is None
    assert propose_compaction(view, keep_last=5, older_than=60.0, now=now + 120.0).payload["counts"]["episodes"] == 16


def test_bad_windows_are_refused(lam: Lamar) -> None:
    with pytest.raises(ValueError, match="keep_last"):
        lam.sleep(keep_last=-1)
    with pytest.raises(ValueError, match="older_than"):
        lam.sleep(older_than=-5.0)


def test_the_holdout_rate_counts_compacted_episodes_as_the_episode_count_does(tmp_path: Path) -> None:
    # Every episode holds out what its coins held out, so folding old episodes into a summary
    # must not change the share of wanted lessons withheld: it is over every episode logged.
    with Lamar(tmp_path / "experience.db", k=2, seed=5, holdout=0.5) as early:
        for action in ("clear DerivedData", "read the whole log"):
            early.add(Experience("the build fails", action, scope=Scope(project="trace")))
        play(early, 40, seed=6)
    lam = Lamar(tmp_path / "experience.db", k=2, seed=5, holdout=0.05)  # the later episodes rarely hold out
    play(lam, 40, seed=7)
    before = lam.stats()
    assert lam.apply(lam.sleep(keep_last=20)).applied
    after = lam.stats()
    assert after["compacted"]["episodes"] >= 50 and after["episodes"] == before["episodes"]
    assert after["holdout_rate"] == pytest.approx(before["holdout_rate"])
    assert after["compacted"]["held_out"] > 0 and after["compacted"]["wanted"] >= after["compacted"]["held_out"]
    lam.close()
    with Lamar(tmp_path / "experience.db", k=2, seed=5, holdout=0.05) as reopened:  # folded from the checkpoint
        assert reopened.stats()["holdout_rate"] == pytest.approx(before["holdout_rate"])
