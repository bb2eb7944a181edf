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
from tests.whatif.test_episode_table import _step


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


def test_a_slate_that_is_not_json_is_counted_from_the_log(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    with Lamar(path, k=2, seed=1) as lam:
        lam.add(Experience("case", "do", scope=Scope(task="t")))
        for _ in range(30):
            lam.report(lam.recall({"task": "t"}).episode_id, "shipped")
        lam.checkpoint()  # the table catches up
        assert isinstance(lam.store, SqliteStore) and lam.store.episode_counts() is not None
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE episode_slates SET body = '[{' WHERE slate = (SELECT min(slate) FROM episode_slates)")
    db.close()
    with Lamar(path) as lam:
        assert isinstance(lam.store, SqliteStore) and lam.store.episode_counts() is None
        assert injections(lam.store).episodes == _folded(lam)
