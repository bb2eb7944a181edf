"""Replaced outcomes: the state after any series of replacements equals the fold of the whole
log, on every local backend."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal, StoreError
from lamar.state.cache import FoldCache
from lamar.state.marks import SPACING
from lamar.state.snapshot import snapshot_of
from lamar.store import Store, open_store
from lamar.store.base import Event
from lamar.store.memory import MemoryStore


def _refolded(lam: Lamar) -> FoldCache:
    cache = FoldCache(lam.policy, "test")
    cache.fold_log(lam.store.read(0))
    return cache


@pytest.mark.parametrize("backend", ["memory", "sqlite", "json"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_replacements_leave_the_state_a_refold_gives(tmp_path: Path, backend: str, seed: int) -> None:
    location = {"memory": ":memory:", "sqlite": str(tmp_path / "s.db"), "json": str(tmp_path / "s.json")}[backend]
    rng = random.Random(seed)
    lam = Lamar(open_store(location), k=2, seed=seed)
    lam.add(Experience("always", "everywhere"))  # eligible in every episode: its detector watches past its warm-up
    for i in range(6):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project="ab"[i % 2])))
    episodes: list[str] = []
    for step in range(400):
        if episodes and rng.random() < 0.3:  # replace an outcome, old or recent, once or again
            target = rng.choice(episodes[-5:] if rng.random() < 0.5 else episodes)
            lam.report(target, rng.choice([1.0, -1.0, 0.5]), replace=True)
        else:
            rec = lam.recall({"project": rng.choice("ab")})
            lam.report(rec.episode_id, rng.choice([1.0, -1.0, 0.0]) if rng.random() < 0.8 else 1.0)
            episodes.append(rec.episode_id)
        if step % 50 == 49:
            assert snapshot_of(lam._holder._log.cache) == snapshot_of(_refolded(lam))  # type: ignore[attr-defined]
    cache = lam._holder._log.cache  # type: ignore[attr-defined]
    assert max(s.detector.watched for s in cache.lessons.values()) > 50  # the spread's reader was exercised
    assert snapshot_of(cache) == snapshot_of(_refolded(lam))
    # folds the log in a new process's way
    fresh = Lamar(open_store(location) if backend != "memory" else lam.store, k=2)
    assert [lam.evidence(i) for i in cache.lessons] == [fresh.evidence(i) for i in cache.lessons]
    fresh.close()
    lam.close()



def _two_projects(store: str | Store, *, lessons: int, seed: int) -> Lamar:
    """An engine (k=2) over `store` holding `lessons` lessons scoped to project a and b in turn."""
    lam = Lamar(store, k=2, seed=seed)
    for i in range(lessons):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project="ab"[i % 2])))
    return lam


def _folds_of(cache: FoldCache) -> list[int]:
    """The seqs of the events `cache` folds from now on (its `fold` counted)."""
    folded: list[int] = []
    fold = cache.fold

    def counted(event: Event, *again: bool) -> None:
        folded.append(event.seq)
        fold(event, *again)

    cache.fold = counted  # type: ignore[method-assign]
    return folded


def test_a_replacement_of_a_recent_report_folds_again_only_the_events_after_it() -> None:
    lam = _two_projects(":memory:", lessons=6, seed=4)
    rng = random.Random(4)
    for n in range(600):
        rec = lam.recall({"project": rng.choice("ab")})
        lam.report(rec.episode_id, rng.choice([1.0, -1.0]))
        if n == 0:
            lam.report(rec.episode_id, 0.0, replace=True)  # from this replacement on the engine marks the log
    cache = lam._holder._log.cache  # type: ignore[attr-defined]
    folded = _folds_of(cache)
    lam.report(rec.episode_id, -0.5, replace=True)
    assert 0 < len(folded) <= 2 * SPACING + 2, len(folded)  # not the 1 200 events of the whole log
    assert snapshot_of(cache) == snapshot_of(_refolded(lam))
    lam.close()



def test_marks_over_many_lessons_touched_sparsely_copy_few_and_still_make_a_recent_replacement_cheap(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each outcome touches 5 of 200 lessons, so few repeat between two marks: the marks space out
    with the lessons, copying at most one lesson per two events and holding one copy per lesson."""
    from lamar.policy.lesson import LessonState

    lam = Lamar(":memory:", k=2, seed=8)
    for i in range(200):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project=f"p{i // 5}")))
    copies = [0]
    copy = LessonState.copy

    def counted(state: LessonState) -> LessonState:
        copies[0] += 1
        return copy(state)

    monkeypatch.setattr(LessonState, "copy", counted)
    rng = random.Random(8)
    for n in range(1500):
        rec = lam.recall({"project": f"p{rng.randrange(40)}"})
        lam.report(rec.episode_id, rng.choice([1.0, -1.0, 0.5]))
        if n == 0:
            lam.report(rec.episode_id, 0.0, replace=True)
    cache = lam._holder._log.cache  # type: ignore[attr-defined]
    assert copies[0] <= 3000 // 2 + 200, copies[0]  # one copy per lesson a mark sees first, at most
    assert sum(len(m.lessons) for m in cache.marks.marks) <= 2 * 200 + 256  # the last mark fills after the cap
    folded = _folds_of(cache)
    lam.report(rec.episode_id, -0.5, replace=True)
    assert 0 < len(folded) <= 2 * 2 * 200 + 2, len(folded)  # not the 3 200 events of the whole log
    assert snapshot_of(cache) == snapshot_of(_refolded(lam))
    lam.close()


def test_an_engine_that_never_replaces_marks_nothing_and_its_first_replacement_starts_the_marks() -> None:
    lam = _two_projects(":memory:", lessons=6, seed=9)
    rng = random.Random(9)
    for _ in range(400):
        rec = lam.recall({"project": rng.choice("ab")})
        lam.report(rec.episode_id, rng.choice([1.0, -1.0]))
    cache = lam._holder._log.cache  # type: ignore[attr-defined]
    assert cache.marks.marks == [] and cache.marks.current is None  # nothing copied
    lam.report(rec.episode_id, 0.5, replace=True)  # folds the whole log, marking its second half
    assert cache.marks.marks
    reopened = Lamar(lam.store, k=2)  # a process that folds a log holding a replacement marks it too
    assert reopened._holder._log.cache.marks.marks  # type: ignore[attr-defined]
    assert snapshot_of(cache) == snapshot_of(_refolded(lam))
    reopened.close()
    lam.close()


@pytest.mark.parametrize("backend", ["sqlite", "json"])
def test_replacements_among_two_writers_adds_retirements_defaults_and_expiries(tmp_path: Path, backend: str) -> None:
    location = str(tmp_path / ("s.db" if backend == "sqlite" else "s.json"))
    rng = random.Random(7)
    tuning = {"k": 2, "pending_after": 3600.0, "pending_outcome": Signal.REASKED}
    engines = [Lamar(open_store(location), seed=7, **tuning), Lamar(open_store(location), seed=8, **tuning)]
    lessons = [engines[0].add(Experience("always", "everywhere"))]
    reported: list[str] = []
    unreported: list[str] = []
    for i in range(4):
        lessons.append(engines[0].add(Experience(f"case {i}", f"do {i}", scope=Scope(project="ab"[i % 2]))))
    for step in range(500):
        lam = rng.choice(engines)
        roll = rng.random()
        if roll < 0.01:
            lessons.append(lam.add(Experience(f"case {step}", f"do {step}", scope=Scope(project=rng.choice("ab")))))
        elif roll < 0.02 and len(lessons) > 3:
            lam.retire(lessons.pop(rng.randrange(1, len(lessons))))
        elif roll < 0.07 and unreported:
            lam.expire(unreported[0])  # an expiry, or (settled already) nothing
        elif roll < 0.12:
            lam.settle_pending(now=time.time() + 7200)  # each unreported episode gets the default outcome
        elif roll < 0.40 and (reported or unreported):
            # a replacement, of a report or of the default or expiry a late report replaces
            target = (unreported.pop(0) if unreported and rng.random() < 0.3
                      else rng.choice(reported[-8:] if rng.random() < 0.5 else reported))
            lam.report(target, rng.choice([1.0, -1.0, 0.5]), replace=True)
            reported.append(target)
        else:
            rec = lam.recall({"project": rng.choice("ab")})
            if rng.random() < 0.2:
                unreported.append(rec.episode_id)
            else:
                lam.report(rec.episode_id, rng.choice([1.0, -1.0, 0.0]))
                reported.append(rec.episode_id)
        if step % 50 == 49:
            for engine in engines:
                engine.stats()  # folds what the other wrote
                assert snapshot_of(engine._holder._log.cache) == snapshot_of(_refolded(engine))  # type: ignore[attr-defined]
    for engine in engines:
        engine.close()


class _GoneOnce(MemoryStore):
    """A store whose next read from before seq `gone_below` fails, as a server that went away."""

    gone_below: int | None = None

    def read(self, after: int = 0) -> list[Event]:
        if self.gone_below is not None and after < self.gone_below:
            self.gone_below = None
            raise StoreError("the server went away")
        return super().read(after)


def test_a_replacement_whose_read_fails_leaves_the_fold_as_it_was() -> None:
    store = _GoneOnce()
    lam = _two_projects(store, lessons=4, seed=3)
    rng = random.Random(3)
    episodes = []
    for n in range(600):
        rec = lam.recall({"project": rng.choice("ab")})
        lam.report(rec.episode_id, rng.choice([1.0, -1.0]))
        episodes.append(rec.episode_id)
        if n == 0:
            lam.report(rec.episode_id, 0.0, replace=True)
    store.gone_below = lam._holder._log.cache.seq  # type: ignore[attr-defined]  # the read that folds again from a mark
    with pytest.raises(StoreError):
        lam.report(episodes[-3], 0.5, replace=True)
    assert lam.stats()["episodes"] == 600  # the next read folds the replacement once, and no episode twice
    assert snapshot_of(lam._holder._log.cache) == snapshot_of(_refolded(lam))  # type: ignore[attr-defined]
    lam.close()


def test_a_late_report_of_an_expiry_held_in_a_checkpoint_counts_as_a_refold_counts_it(tmp_path: Path) -> None:
    lam = Lamar(open_store(str(tmp_path / "s.db")), k=2, seed=1, pending_after=3600.0)
    lam.add(Experience("always", "everywhere"))
    rng = random.Random(1)
    for _ in range(300):
        rec = lam.recall({"project": "a"})
        lam.report(rec.episode_id, rng.choice([1.0, -1.0]))
    late = lam.recall({"project": "a"}).episode_id
    lam.expire(late)
    assert lam.checkpoint()
    # A writer that had not seen the expiry reports the episode as the checkpoint drops its key.
    lam.store.append([Event("outcome", {"episode": late, "reward": -1.0, "signal": None, "replace": False})])
    lam.report(late, 1.0, replace=True)
    assert snapshot_of(lam._holder._log.cache) == snapshot_of(_refolded(lam))  # type: ignore[attr-defined]
    fresh = Lamar(open_store(str(tmp_path / "s.db")), k=2)
    assert lam.episode(late).reports == fresh.episode(late).reports
    fresh.close()
    lam.close()


@pytest.mark.parametrize("replaced_before", [True, False])  # a refold from a mark, or of the whole log
@pytest.mark.parametrize("stop_at", [1, 40])
def test_a_refold_stopped_half_way_leaves_the_next_call_to_fold_the_whole_log(stop_at: int,
                                                                              replaced_before: bool) -> None:
    lam = _two_projects(":memory:", lessons=4, seed=6)
    rng = random.Random(6)
    episodes = []
    for n in range(600):
        rec = lam.recall({"project": rng.choice("ab")})
        lam.report(rec.episode_id, rng.choice([1.0, -1.0]))
        episodes.append(rec.episode_id)
        if n == 0 and replaced_before:
            lam.report(rec.episode_id, 0.0, replace=True)
    cache = lam._holder._log.cache  # type: ignore[attr-defined]
    assert bool(cache.marks.marks) == replaced_before
    fold, folded = cache.fold, []

    def interrupted(event: Event, *again: bool) -> None:
        folded.append(event.seq)
        if len(folded) == stop_at:
            raise KeyboardInterrupt
        fold(event, *again)

    cache.fold = interrupted
    with pytest.raises(KeyboardInterrupt):
        lam.report(episodes[-5], 0.5, replace=True)
    cache.fold = fold
    assert lam.stats()["episodes"] == 600  # no episode folded twice
    assert snapshot_of(lam._holder._log.cache) == snapshot_of(_refolded(lam))  # type: ignore[attr-defined]
    lam.close()
