"""A store filled without Lamar's engine (`store.append`, as an importer or a copy writes it) has no
saved state: the first reader that folds a long log saves it, where it may write, so the next folds a tail."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.store import open_store
from lamar.store.base import Event
from tests.state.seam import folded

EPISODES = 3000  # 6 003 events: past what a reader folds before it saves the state


def _imported(path: Path, episodes: int = EPISODES) -> int:
    """A store at `path` holding an engine's log appended event by event, as an importer writes it."""
    lam = Lamar(":memory:", k=2, seed=1)
    for action in ("pin the seeds", "mock the clock", "retry the network"):
        lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
    for i in range(episodes):
        lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    events = lam.store.read(0)
    store = open_store(str(path))
    try:
        store.append([Event(e.kind, e.data, e.key, time=e.time) for e in events])
    finally:
        store.close()
    return len(events)


@pytest.mark.parametrize("suffix", [".db", ".json"])
def test_a_reader_that_folded_a_long_log_saves_the_state_the_next_one_resumes_from(
        tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"imported{suffix}"
    events = _imported(path)
    with Lamar(str(path)) as first:  # `lamar stats`: a process that only reads
        stats = first.stats()
        assert not folded(first).cache.partial and stats["episodes"] == EPISODES
        assert folded(first).store.load_state() is not None  # type: ignore[attr-defined]
    with Lamar(str(path)) as second:
        assert folded(second).cache.partial and folded(second).state_seq == events
        assert second.stats() == stats  # the same fold, read from the state


def test_a_short_log_and_a_store_told_to_stay_as_found_are_left_as_they_were(tmp_path: Path) -> None:
    short = tmp_path / "short.db"
    _imported(short, episodes=300)
    with Lamar(str(short)) as reader:
        reader.stats()
        assert folded(reader).store.load_state() is None  # type: ignore[attr-defined]
    for suffix in (".db", ".json"):
        path = tmp_path / f"kept{suffix}"
        _imported(path)
        before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("kept")}
        store = open_store(str(path))
        store.writes_on_read = False  # type: ignore[attr-defined]  # as `lamar mcp --read-only` opens it
        with Lamar(store) as reader:
            reader.stats()
        after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("kept")}
        assert after.keys() == before.keys() and all(after[n] == before[n] for n in before if n.endswith(suffix))
