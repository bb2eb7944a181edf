"""A lesson's history (what `lamar show` draws) is what the engine said at the time, kept at a bounded resolution."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.policy.history import POINTS
from tests.state.seam import folded


def _run(lam: Lamar, episodes: int, seed: int = 3) -> tuple[str, dict[int, tuple]]:
    """Episodes on one lesson (and a rival); the lesson's evidence read after every report, by seq."""
    import random

    rng = random.Random(seed)
    good = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="x")))
    lam.add(Experience("the build fails", "reboot", scope=Scope(project="x")))
    said: dict[int, tuple] = {}
    for _ in range(episodes):
        rec = lam.recall({"project": "x"})
        lam.report(rec.episode_id, 0.6 if good in rec.ids and rng.random() < 0.8 else -0.2)
        ev = lam.evidence(good)
        said[lam.stats()["events"]] = (ev.verdict.value, ev.lift, ev.lower, ev.upper, ev.randomized, ev.eligible)
    return good, said


def test_points_are_the_evidence_at_their_time_thinned_and_ending_now() -> None:
    lam = Lamar(":memory:", k=1, seed=5, holdout=0.3)
    good, said = _run(lam, 400)
    past = lam.history(good)
    points = past.points
    assert len(points) <= POINTS + 1
    assert points[0].eligible == 1 and past.stride > 1  # 400 outcomes did not fit at spacing 1
    for p in points:
        assert (p.verdict, p.lift, p.lower, p.upper, p.randomized, p.eligible) == said[p.seq]
    assert all(p.eligible % past.stride == 0 for p in points[1:-1])
    now = lam.evidence(good)
    assert (points[-1].lift, points[-1].randomized, points[-1].eligible) == (now.lift, now.randomized, now.eligible)
    assert [p.seq for p in points] == sorted({p.seq for p in points})
    assert not math.isfinite(points[0].lower)  # one episode: no interval yet
    assert past.injected_in + past.held_out_in <= 400 and past.injected_in > 0


@pytest.mark.parametrize("suffix", [".db", ".json"])
def test_history_is_the_same_resumed_from_saved_state_replayed_and_after_a_checkpoint(tmp_path: Path,
                                                                                       suffix: str) -> None:
    location = str(tmp_path / f"s{suffix}")
    lam = Lamar(location, k=1, seed=5)
    good, _ = _run(lam, 700)
    lam.retire(good, "enough")
    before = lam.history(good)
    lam.close()
    resumed = Lamar(location, k=1, seed=5)
    assert folded(resumed).cache.partial  # from the saved state, not a replay
    assert resumed.history(good) == before
    resumed.rebuild()
    assert resumed.history(good) == before
    assert resumed.checkpoint()
    after = Lamar(location, k=1, seed=5)
    assert after.history(good) == before  # the checkpoint's snapshot carries it
    assert [text for _, text in before.trail] == ["added as active", "set retired: enough"]


def test_a_copy_of_a_lesson_copies_its_history_equal_and_independent() -> None:
    """`LessonState.copy` copies the history field by field (no longer through its dict): equal in
    everything saved, and what is added to the copy leaves the original as it was. Its points are
    rows no one can edit, so the copy shares them (the fold's undo marks copy many lessons)."""
    import json

    lam = Lamar(":memory:", k=1, seed=5, holdout=0.3)
    good, _ = _run(lam, 120)
    state = folded(lam).cache.lessons[good]
    assert state.history.points and state.history.trail
    before = json.dumps(state.history.to_dict())
    copy = state.copy()
    assert copy.history.to_dict() == state.history.to_dict() and copy.history is not state.history
    copy.history.note(1.0, "only in the copy")
    assert copy.history.points[0] is state.history.points[0]
    with pytest.raises(TypeError):
        copy.history.points[0][0] = -1  # type: ignore[index]
    copy.history.add(copy._point(10**6, 2.0, lam.policy, 1))
    assert json.dumps(state.history.to_dict()) == before
