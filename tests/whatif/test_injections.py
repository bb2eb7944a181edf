"""The injection chart's counts: after every kind of write, counted from SQLite's episode table, or
from the episodes logged since the last count, they equal the what-if fold's live episodes."""

from __future__ import annotations

import contextlib
import random
import sqlite3
from pathlib import Path

import pytest

from lamar import DuplicateReport, Experience, Lamar, Scope, UnknownEpisode
from lamar.state import follower
from lamar.store.sqlite import SqliteStore
from lamar.whatif import cache
from lamar.whatif.injections import Injections, injections
from tests.whatif.test_episode_table import _DAMAGE, _step


def _folded(lam: Lamar) -> tuple[tuple[float, int, int], ...]:
    folded = cache.fold_store(lam.store, cache=False)
    return tuple((folded.times[j], len(folded.slates[s].injected), len(folded.slates[s].held_out))
                 for j, s in enumerate(folded.slate) if folded.alive[j])


@pytest.mark.parametrize("kind", ["s.db", "s.json", ":memory:"])
def test_the_counts_equal_the_fold_after_every_kind_of_write(tmp_path: Path, kind: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "cache_path", lambda location: None)  # every count from the table or the log
    monkeypatch.setattr(follower, "_STATE_EVERY", 3)  # the table catches up often
    rng = random.Random(7)
    lam = Lamar(kind if kind == ":memory:" else str(tmp_path / kind), k=2, seed=7, holdout=0.3)
    lessons = [lam.add(Experience(f"case {n}", f"do {n}", scope=Scope(task=f"t{n % 3}"))) for n in range(6)]
    pending: list[str] = []
    reported: list[str] = []
    kept: Injections | None = None
    for step in range(160):
        with contextlib.suppress(DuplicateReport, UnknownEpisode):
            _step(lam, rng, step, lessons, pending, reported)
        if step % 7 == 0:
            want = _folded(lam)
            assert injections(lam.store).episodes == want  # counted afresh
            kept = injections(lam.store, kept)
            assert kept.episodes == want  # counted from the last count and the events since
    if isinstance(lam.store, SqliteStore):
        table = lam.store.episode_counts()
        assert table is not None and table.rows  # the table was counted, not decoded
    lam.close()


@pytest.mark.parametrize("damage", _DAMAGE)
def test_the_counts_of_a_damaged_table_are_never_read(tmp_path: Path, damage: str) -> None:
    path = str(tmp_path / "s.db")
    with Lamar(path, k=2, seed=1) as lam:
        for n in range(3):
            lam.add(Experience(f"case {n}", f"do {n}", scope=Scope(task="t1")))
        for _ in range(30):
            lam.report(lam.recall({"task": "t1"}).episode_id, "shipped")
        lam.checkpoint()  # the table catches up
    with sqlite3.connect(path) as db:
        db.execute(damage)
    with Lamar(path) as lam:
        assert isinstance(lam.store, SqliteStore)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process writing: the table cannot be refilled now
        try:
            assert lam.store.episode_counts() is None
            assert injections(lam.store).episodes == _folded(lam)
        finally:
            holder.execute("COMMIT")
            holder.close()
        table = lam.store.episode_counts()  # refilled from the log
        assert table is not None and tuple(table.rows) == _folded(lam)
