"""The engine's saved state: used only while it provably describes the log, else the log is replayed.

Refused and replayed: a torn state (checksum), another store's state, another STATE_VERSION,
other tuning, a log rolled back behind the state. Kept: a state some events behind (only the
tail is folded). Each case checks that the engine ends where a whole-log replay ends.
"""

from __future__ import annotations

import gc
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

import lamar.state.saved
from lamar import CorruptStore, Experience, Lamar, Scope, Signal
from lamar.state.follower import Follower
from lamar.store import Event, MemoryStore
from tests.state.seam import folded

SUFFIXES = ["json", "db"]


def _history(location: str, episodes: int = 80, seed: int = 3) -> list[str]:
    lam = Lamar(location, k=2, seed=seed)
    ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}"))) for i in range(5)]
    rng = random.Random(seed)
    for n in range(episodes):
        rec = lam.recall({"task": f"t{n % 2}"})
        lam.report(rec.episode_id, rng.choice(list(Signal)))
    lam.close()  # a writer's close saves the state
    return ids


def _replayed(location: str, **tuning: object) -> Lamar:
    """An engine that folded every event of the store at `location` (a copy in memory, no state)."""
    source = Lamar(location).store
    copy = MemoryStore()
    copy.append([Event(e.kind, e.data, e.key, time=e.time) for e in source.read()])
    source.close()
    return Lamar(copy, k=2, seed=1, **tuning)  # type: ignore[arg-type]


def _same(a: Lamar, b: Lamar) -> None:
    assert {e.id: a.evidence(e.id) for e in a.experiences()} == {e.id: b.evidence(e.id) for e in b.experiences()}
    assert a.stats() | {"store": ""} == b.stats() | {"store": ""}
    for n in range(20):
        x, y = a.recall({"task": f"t{n % 2}"}), b.recall({"task": f"t{n % 2}"})
        assert (x.ids, x.held_out, x.propensities) == (y.ids, y.held_out, y.propensities)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_valid_state_is_resumed_and_only_the_tail_is_folded(tmp_path: Path, suffix: str) -> None:
    location = str(tmp_path / f"s.{suffix}")
    _history(location)
    lam = Lamar(location, k=2, seed=1)
    assert lam.store.load_state() is not None and folded(lam).cache.partial
    assert len(folded(lam).cache.episodes) == 0  # no episode record was loaded to open it
    writer = Lamar(location, k=2, seed=5)  # another process writes: the state is now behind
    for _ in range(5):
        writer.report(writer.recall({"task": "t0"}).episode_id, Signal.SHIPPED)
    again = Lamar(location, k=2, seed=1)
    assert folded(again).cache.partial and len(folded(again).cache.episodes) == 5  # the tail's episodes, no more
    _same(again, _replayed(location))


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("damage", ["torn", "foreign", "version", "tuning"])
def test_a_state_that_cannot_be_trusted_is_replayed(tmp_path: Path, suffix: str, damage: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    location = str(tmp_path / f"s.{suffix}")
    _history(location)
    store = Lamar(location).store
    text = store.load_state()
    assert text is not None
    tuning: dict[str, object] = {}
    if damage == "torn":
        store.save_state(0, text[: len(text) // 2])
    elif damage == "foreign":  # another store's state (same shape of history, other events)
        other = str(tmp_path / f"other.{suffix}")
        _history(other, seed=4)
        foreign = Lamar(other).store.load_state()
        assert foreign is not None
        store.save_state(0, foreign)
    elif damage == "version":
        monkeypatch.setattr(lamar.state.saved, "STATE_VERSION", lamar.state.saved.STATE_VERSION + 1)
    else:
        tuning = {"explore": 0.5}
    store.close()
    lam = Lamar(location, k=2, seed=1, **tuning)  # type: ignore[arg-type]
    assert not folded(lam).cache.partial  # the whole log was folded
    _same(lam, _replayed(location, **tuning))


def test_a_log_rolled_back_behind_its_state_is_replayed(tmp_path: Path) -> None:
    location = tmp_path / "s.json"
    _history(str(location), episodes=40)
    backup = tmp_path / "backup.json"
    shutil.copy(location, backup)
    lam = Lamar(str(location), k=2, seed=2)
    for _ in range(30):
        lam.report(lam.recall({"task": "t1"}).episode_id, Signal.REVERTED)
    lam.close()  # the state now describes 60 more events than the backup holds
    shutil.copy(backup, location)  # the log is restored from the backup; its state stays
    # A file shorter than its state was cut short, or restored on purpose: the store cannot tell,
    # so it refuses, naming the sidecars to delete (issue 38); with them gone, the log is replayed.
    with pytest.raises(CorruptStore, match="delete s.json.state"):
        Lamar(str(location), k=2, seed=1)
    for sidecar in ("s.json.state", "s.json.index"):
        (tmp_path / sidecar).unlink(missing_ok=True)
    restored = Lamar(str(location), k=2, seed=1)
    assert not folded(restored).cache.partial
    _same(restored, _replayed(str(location)))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_writers_save_the_state_as_they_go_and_readers_never_do(tmp_path: Path, suffix: str) -> None:
    location = str(tmp_path / f"s.{suffix}")
    lam = Lamar(location, k=2, seed=1)
    lam.add(Experience("case", "do", scope=Scope(task="t")))
    for _ in range(300):  # 600 events: past the amortised threshold, without closing
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert lam.store.load_state() is not None
    lam.close()
    files = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file() and not p.name.endswith(".lock")}
    reader = Lamar(location)
    reader.stats()
    reader.experiences()
    reader.close()
    assert {p: p.read_bytes() for p in files} == files


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_pending_episodes_from_before_the_state_stay_pending_settle_and_expire_alike(
        tmp_path: Path, suffix: str) -> None:
    location = str(tmp_path / f"s.{suffix}")
    lam = Lamar(location, k=2, seed=1)
    lam.add(Experience("case", "do", scope=Scope(task="t")))
    waiting = [lam.recall({"task": "t"}).episode_id for _ in range(6)]
    for _ in range(20):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    lam.report(waiting[0], Signal.REVERTED)
    lam.expire(waiting[1])
    lam.close()
    resumed, replayed = Lamar(location, k=2, seed=1), _replayed(location)
    assert folded(resumed).cache.partial
    now = resumed.pending()[0].time + 10.0
    assert [p.episode_id for p in resumed.pending(now=now)] == [p.episode_id for p in replayed.pending(now=now)] \
        == waiting[2:]
    for engine in (resumed, replayed):
        assert engine.expire(waiting[2]) is True and engine.expire(waiting[1]) is False
        engine.report(waiting[1], Signal.SHIPPED)  # a late report replaces an expiry
        assert engine.episode(waiting[1]).reward == 1.0
    _same(resumed, replayed)


def test_resuming_and_refolding_run_no_cycle_collection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A full collection walks every object the fold built so far, again and again as it grows:
    # what the state decodes into and what a fold builds holds no cycle for it to find.
    location = str(tmp_path / "s.db")
    lam = Lamar(location, k=2, seed=1)
    for i in range(300):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 10}")))
    for n in range(300):
        lam.report(lam.recall({"task": f"t{n % 10}"}).episode_id, Signal.SHIPPED)
    lam.close()
    inside, collections = [""], []

    def counting(name: str, method: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            inside[0] = name
            try:
                return method(*args, **kwargs)
            finally:
                inside[0] = ""
        return wrapper

    for name in ("resume", "refold"):
        monkeypatch.setattr(Follower, name, counting(name, getattr(Follower, name)))

    def noted(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and inside[0]:
            collections.append((inside[0], info["generation"]))

    gc.callbacks.append(noted)
    try:
        again = Lamar(location, k=2, seed=1)
        assert folded(again).cache.partial  # resumed from the saved state
        report = again.sleep()  # folds the whole log again
        again.close()
    finally:
        gc.callbacks.remove(noted)
    assert report.summary["episodes"] == 300
    # At most the one collection of all that was built, as the collector resumes on the way out.
    assert collections.count(("resume", 0)) <= 1 and collections.count(("refold", 0)) <= 1
    assert len(collections) <= 2, collections


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_state_saved_with_other_settling_knobs_is_resumed(tmp_path: Path, suffix: str) -> None:
    """`pending_after` and `pending_outcome` say when episodes are settled, not how they fold: an
    agent with them and the `lamar` command without them read each other's state, rather than
    each folding the whole log again whenever the other one saved."""
    location = str(tmp_path / f"s.{suffix}")
    agent = Lamar(location, k=2, seed=3, pending_after=3600.0, pending_outcome=Signal.ACCEPTED)
    ids = [agent.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}"))) for i in range(5)]
    for n in range(80):
        agent.report(agent.recall({"task": f"t{n % 2}"}).episode_id, Signal.SHIPPED if n % 3 else Signal.REVERTED)
    agent.close()
    # The state names every knob, so a Lamar that compares the whole tuning (one with the same
    # settling knobs, of a release that compared them) reads it as before.
    text = Lamar(location).store.load_state()
    assert ids and text is not None and '"pending_after":3600.0' in text
    lam = Lamar(location, k=2, seed=1)  # as the CLI opens it: no settling knobs
    assert folded(lam).cache.partial  # resumed from the agent's state
    _same(lam, _replayed(location))
    lam.close()
    again = Lamar(location, k=2, seed=1, pending_after=60.0)
    assert folded(again).cache.partial
