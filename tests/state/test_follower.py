"""The followers: the log mode's folds the tail; the fold mode's folds only the settled log, and
folds the whole log (without trusting or saving it) when the settled seq is not known."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.policy.config import Policy
from lamar.state.follower import Follower, SettledFollower
from lamar.store import MemoryStore, open_store


def _store(episodes: int) -> MemoryStore:
    lam = Lamar(MemoryStore(), k=1, seed=2)
    lam.add(Experience("case", "do", scope=Scope(task="t")))
    for _ in range(episodes):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert isinstance(lam.store, MemoryStore)
    return lam.store


def test_the_fold_mode_follower_folds_only_what_is_settled() -> None:
    store = _store(10)  # 21 events
    through: list[int | None] = [11]
    log = SettledFollower(store, Policy(), lambda: through[0])
    log.sync()
    assert (log.cache.seq, log.cache.settled, len(log.cache.episodes)) == (11, True, 5)
    through[0] = 15
    log.sync()  # the tail up to the settled seq, not past it
    assert (log.cache.seq, log.cache.reports) == (15, 7)
    through[0] = None  # a write in flight did not end: the whole log as it stands, not trusted as settled
    log.sync()
    assert (log.cache.seq, log.cache.settled, log.cache.reports) == (21, False, 10)
    log.save()
    assert store.load_state() is None  # an unsettled fold is never saved
    through[0] = 21
    log.sync()  # folded again from the start, now settled
    assert (log.cache.seq, log.cache.settled) == (21, True)
    log.save()
    assert store.load_state() is not None


def test_only_a_writer_saves_the_state_as_it_syncs() -> None:
    store = _store(300)  # 601 events; the engine that wrote them saved its state at seq 512
    before = store.load_state()
    assert before is not None and '"seq":512' in before
    reader = Follower(store, Policy())
    reader.sync()
    assert reader.state_due() and store.load_state() == before  # a reader leaves the store as it was
    writer = Follower(store, Policy())
    writer.sync()
    writer.append([])  # nothing, but through the follower: it is a writer from now on
    writer.sync()
    assert '"seq":601' in (store.load_state() or "") and not writer.state_due()
    resumed = Follower(store, Policy())
    assert resumed.resume() and resumed.cache.partial and resumed.cache.seq == 601


def test_an_engine_on_its_own_memory_store_saves_its_state_only_at_a_checkpoint() -> None:
    # Only an engine opened on `lam.store` could load it, and one that finds none folds the log.
    lam = Lamar(":memory:", k=1, seed=2)
    eid = lam.add(Experience("case", "do", scope=Scope(task="t")))
    for _ in range(300):  # 601 events: an engine on a store handed to it saved at seq 512 (above)
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    store = lam.store
    assert isinstance(store, MemoryStore) and store.load_state() is None
    assert Lamar(store, k=1, seed=2).evidence(eid) == lam.evidence(eid)
    assert lam.checkpoint()  # a checkpoint still saves the state that names its snapshot
    resumed = Follower(store, Policy())
    assert resumed.resume() and resumed.cache.seq == 601
    assert resumed.cache.last is not None and resumed.cache.last.kind == "snapshot"


@pytest.mark.parametrize("suffix", [".db", ".json"])
def test_the_state_saved_after_a_checkpoint_resumes(tmp_path: Path, suffix: str) -> None:
    location = str(tmp_path / f"s{suffix}")
    lam = Lamar(location, k=1, seed=2)
    lam.add(Experience("case", "do", scope=Scope(task="t")))
    for _ in range(30):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    lam.close()
    lam = Lamar(location, k=1, seed=2)  # a process that only checkpoints is a writer too
    assert lam.checkpoint()
    lam.close()  # saves the state folded through the snapshot: it names the snapshot as its last event
    resumed = Follower(open_store(location), Policy())
    assert resumed.resume() and resumed.cache.partial and resumed.cache.seq == 61
    assert resumed.cache.last is not None and resumed.cache.last.kind == "snapshot"


def test_a_state_of_many_pending_episodes_is_saved_as_rarely_as_it_is_large() -> None:
    # The saved state holds every pending episode: saved every 512 events regardless, its
    # writing made each recall's cost grow with the episodes pending.
    store = MemoryStore()
    lam = Lamar(store, seed=1)
    lam.add(Experience("case", "do", scope=Scope(task="t")))
    for _ in range(3000):
        lam.recall({"task": "t"})
    saves: list[int] = []
    save_state = store.save_state
    store.save_state = lambda seq, text: (saves.append(seq), save_state(seq, text))[-1]  # type: ignore[method-assign]
    for _ in range(3000):
        lam.recall({"task": "t"})
    assert len(saves) <= 1, saves
    assert Lamar(store).stats()["episodes"] == 6000  # another engine on the store still finds every one


def test_a_reader_saves_by_the_writers_rule_over_a_longer_floor() -> None:
    # One formula for both: a reader waits at least _READER_STATE_EVERY events, and, as a writer does, as many
    # as the saved state holds, so that saving a large state never costs each event more than O(1).
    from lamar.state.follower import _READER_STATE_EVERY

    reader = Follower(_store(3), Policy())
    reader.sync()
    reader.unsaved = _READER_STATE_EVERY - 1
    assert reader.state_due() and not reader.reader_due()
    reader.unsaved = _READER_STATE_EVERY
    assert reader.reader_due()
    reader.state_size = _READER_STATE_EVERY + 1  # a state this large waits as many events as it holds
    assert not reader.reader_due() and not reader.state_due()
    reader.state_size, reader.foreign = 0, True  # another Lamar's state: never saved over by a reader
    assert not reader.reader_due() and reader.state_due()
