"""SQLite's episode table: after every kind of write, by one process or two, the what-if read of
the table equals the fold of the whole log; a table that cannot describe the log is never read."""

from __future__ import annotations

import contextlib
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from lamar import DuplicateReport, Experience, Lamar, Scope, Signal, UnknownEpisode
from lamar.state import follower
from lamar.store import episode_rows, open_store
from lamar.store.base import Event
from lamar.store.episode_rows import EpisodeTableStore
from lamar.store.json_file import JsonStore
from lamar.store.memory import MemoryStore
from lamar.store.sqlite import SqliteStore
from lamar.whatif import cache
from lamar.whatif.log import read_log
from tests.store.test_sqlite_readers import IN_CI, _chattr

FIXTURE = Path(__file__).parents[1] / "store" / "fixtures" / "release-0.1.0.db"


def _same(lam: Lamar) -> tuple[int, int]:
    """Checks the table's read against the log's fold; (episodes from the table, events since)."""
    table = lam.store.episodes() if isinstance(lam.store, SqliteStore) else None
    assert table is not None  # the table is read (the tests here keep no what-if cache: `no_cache`)
    assert read_log(lam.store) == read_log(lam.store, cache=False)
    assert read_log(lam.store, scope={"task": "t1"}) == read_log(lam.store, scope={"task": "t1"}, cache=False)
    return len(table.rows), len(table.tail)


@pytest.fixture(autouse=True)
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "cache_path", lambda location: None)  # every read goes to the table


def test_only_sqlite_keeps_the_table(tmp_path: Path) -> None:
    sqlite = SqliteStore(tmp_path / "s.db")
    assert isinstance(sqlite, EpisodeTableStore)
    assert not isinstance(JsonStore(tmp_path / "s.json"), EpisodeTableStore)
    assert not isinstance(MemoryStore(), EpisodeTableStore)
    assert sqlite.episodes() == (([], [], [], [], [], []), {}, None, [])
    sqlite.close()


@pytest.mark.parametrize("seed", range(4))
def test_every_kind_of_write_keeps_the_table_equal_to_the_fold_of_the_log(tmp_path: Path, seed: int,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follower, "_STATE_EVERY", 3)  # the table catches up at each state saved: often
    rng = random.Random(seed)
    path = str(tmp_path / "s.db")
    lam = Lamar(path, k=2, seed=seed, holdout=0.3)
    other = Lamar(path, k=2, seed=seed + 100)  # a second process's engine on the same file
    lessons = [lam.add(Experience(f"case {n}", f"do {n}", scope=Scope(task=f"t{n % 3}"))) for n in range(6)]
    pending: list[str] = []
    reported: list[str] = []
    seen: list[tuple[int, int]] = []
    for step in range(160):
        engine = lam if rng.random() < 0.7 else other
        with contextlib.suppress(DuplicateReport, UnknownEpisode):  # an episode sealed or compacted meanwhile
            _step(engine, rng, step, lessons, pending, reported)
        if step % 10 == 0:
            seen.append(_same(lam))
    seen += [_same(lam), _same(other)]
    assert any(rows and tail for rows, tail in seen)  # read from the table and the events since, together
    lam.close()
    other.close()


def _step(engine: Lamar, rng: random.Random, step: int, lessons: list[str], pending: list[str],
          reported: list[str]) -> None:
    roll = rng.random()
    if roll < 0.55:
        rec = engine.recall({"task": f"t{rng.randrange(3)}", "user": rng.choice("ab")})
        if rng.random() < 0.8:
            engine.report(rec.episode_id, rng.choice([*Signal, 0.3, -0.7]))
            reported.append(rec.episode_id)
        else:
            pending.append(rec.episode_id)
    elif roll < 0.65 and pending:
        engine.report(pending.pop(rng.randrange(len(pending))), rng.choice(list(Signal)))
    elif roll < 0.72 and reported:
        engine.report(rng.choice(reported), rng.choice(list(Signal)), replace=True)
    elif roll < 0.77 and pending:
        engine.expire(pending.pop())
    elif roll < 0.80:
        sleep = engine.sleep(keep_last=rng.randrange(5, 40))
        engine.apply(sleep, only=[p.id for p in sleep.of_kind("compact")])
    elif roll < 0.82:
        engine.checkpoint()
    elif roll < 0.83 and step > 100:
        engine.erase(rng.choice(lessons), contexts=True, by="test")


def test_an_older_store_gets_the_table_when_first_opened_for_writing(tmp_path: Path) -> None:
    path = tmp_path / "release.db"
    shutil.copy(FIXTURE, path)
    with Lamar(str(path)) as lam:
        assert isinstance(lam.store, SqliteStore)
        table = lam.store.episodes()
        assert table is not None and table.rows == [] and table.tail  # folds nothing until a state is saved
        assert read_log(lam.store) == read_log(lam.store, cache=False)
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    store = open_store(str(path))
    assert isinstance(store, SqliteStore) and store.episodes() is not None
    assert store.episodes().rows and read_log(store) == read_log(store, cache=False)  # type: ignore[union-attr]
    store.close()


def test_an_older_store_read_where_it_cannot_be_written_is_folded_from_its_log(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "release.db"
    shutil.copy(FIXTURE, path)
    if not _chattr([path, folder], True):  # root ignores file modes
        _chattr([path, folder], False)
        if IN_CI:
            pytest.fail("chattr +i is needed to make a store read-only for root")
        pytest.skip("chattr +i is not available here")
    try:
        store = open_store(str(path))
        assert isinstance(store, SqliteStore) and store.read_only and store.episodes() is None
        assert len(read_log(store).ids) > 0 and read_log(store) == read_log(store, cache=False)
        store.close()
    finally:
        _chattr([path, folder], False)


def _shipped(lam: Lamar, n: int) -> Lamar:
    """`lam` with one lesson and `n` episodes reported shipped."""
    lam.add(Experience("case", "do", scope=Scope(task="t1")))
    for _ in range(n):
        lam.report(lam.recall({"task": "t1"}).episode_id, Signal.SHIPPED)
    return lam


def test_a_table_flagged_stale_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _shipped(Lamar(str(path), k=1, seed=1), 5).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE episode_rows SET reward = -0.5, signal = NULL")  # a table no longer of this log
        db.execute("UPDATE meta SET value = 'stale' WHERE key = 'episode_rows_through'")
    store = open_store(str(path))
    assert isinstance(store, SqliteStore) and store.episodes() is None
    assert read_log(store) == read_log(store, cache=False)
    assert set(read_log(store).reward) == {1.0}  # what shipped is worth, from the log
    store.close()


def test_an_episode_the_table_cannot_find_again_leaves_it_stale_and_the_log_is_read(tmp_path: Path) -> None:
    # The engine logs each episode once, under its own key; the store's own API can do otherwise,
    # and the table then steps aside rather than disagree with the fold of the log.
    store = SqliteStore(tmp_path / "s.db")
    episode = {"id": "ep_1", "context": {"task": "t"}, "eligible": ["a"], "injected": ["a"], "held_out": [],
               "p": {"a": 0.5}}
    store.append([Event("episode", episode, "episode:ep_1"), Event("outcome", {"episode": "ep_1", "reward": 0.5})])
    store.save_state(2, "a state")  # the table catches up
    table = store.episodes()
    assert table is not None and len(table.rows) == 1 and table.tail == [] and read_log(store).reward == [0.5]
    store.append([Event("episode", {**episode, "id": "ep_2"})])  # under no key: an outcome could not find it
    store.save_state(3, "a state")
    assert store.episodes() is None
    assert read_log(store) == read_log(store, cache=False) and read_log(store).ids == ["ep_1"]
    store.close()


_DAMAGE = [
    # a flipped bit in a slate's text
    ("UPDATE episode_slates SET body = '[{\"task\":\"t1\"' || char(1) || '}' "
     "WHERE slate = (SELECT min(slate) FROM episode_slates)"),
    "UPDATE episode_rows SET slate = 76 WHERE seq = (SELECT max(seq) FROM episode_rows)",  # a slate never filed
    "UPDATE episode_rows SET reward = 5.0 WHERE seq = (SELECT min(seq) FROM episode_rows)",  # no report is worth it
    "UPDATE episode_rows SET sealed = 3",
    # values a write could have filed: read as they stood before the table had sums
    "UPDATE episode_rows SET reward = -0.5, signal = 'corrected' WHERE seq = (SELECT max(seq) FROM episode_rows)",
    "UPDATE episode_rows SET time = time + 0.000001 WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "UPDATE episode_rows SET id = 'ep_x' || substr(id, 5) WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "DELETE FROM episode_rows WHERE seq = (SELECT max(seq) FROM episode_rows)",
    "UPDATE episode_slates SET body = replace(body, 't1', 't2')",
    "UPDATE meta SET value = value - 2 WHERE key = 'episode_rows_through'",
    "DELETE FROM episode_sums WHERE part = 'rows'",  # a table an older Lamar kept has no sums
]


def _damaged(tmp_path: Path, damage: str) -> Path:
    """A SQLite store of 5 shipped episodes whose episode table then took `damage` (an SQL statement)."""
    path = tmp_path / "s.db"
    _shipped(Lamar(str(path), k=1, seed=1), 5).close()
    with sqlite3.connect(path) as db:
        db.execute(damage)
    return path


@pytest.mark.parametrize("damage", _DAMAGE)
def test_a_damaged_table_is_refilled_from_the_log(tmp_path: Path, damage: str) -> None:
    path = _damaged(tmp_path, damage)
    store = open_store(str(path))
    assert isinstance(store, SqliteStore) and store.episodes() is not None
    assert read_log(store) == read_log(store, cache=False) and set(read_log(store).reward) == {1.0}
    store.close()
    with sqlite3.connect(path) as db:  # refilled: the next reader reads the table as it is
        assert [tuple(row) for row in db.execute("SELECT reward, signal FROM episode_rows")] == [(1.0, "shipped")] * 5


@pytest.mark.parametrize("damage", _DAMAGE[4:8])
def test_a_damaged_table_that_cannot_be_refilled_now_is_not_read(tmp_path: Path, damage: str) -> None:
    path = _damaged(tmp_path, damage)
    store = open_store(str(path))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing: the read does not wait to refill it
    try:
        assert isinstance(store, SqliteStore) and store.episodes() is None
        assert read_log(store) == read_log(store, cache=False) and set(read_log(store).reward) == {1.0}
    finally:
        holder.execute("COMMIT")
        holder.close()
        store.close()


@pytest.mark.parametrize("damage", _DAMAGE[4:8])
def test_a_reader_that_must_not_write_leaves_a_damaged_table_unread_and_as_it_was(tmp_path: Path, damage: str) -> None:
    path = _damaged(tmp_path, damage)
    before = path.read_bytes()
    store = open_store(str(path))
    assert isinstance(store, SqliteStore)
    store.writes_on_read = False  # as `lamar mcp --read-only` opens it
    try:
        assert store.episodes() is None and store.episode_counts() is None
        assert read_log(store) == read_log(store, cache=False) and set(read_log(store).reward) == {1.0}
    finally:
        store.close()
    assert path.read_bytes() == before


@pytest.mark.parametrize("damage", _DAMAGE[4:8])
def test_a_writer_never_sums_a_damaged_span_again_as_if_whole(tmp_path: Path, damage: str) -> None:
    path = _damaged(tmp_path, damage)
    with Lamar(str(path), k=1, seed=2) as lam:  # its saves catch the table up, in the span damaged
        for _ in range(3):
            lam.report(lam.recall({"task": "t1"}).episode_id, Signal.SHIPPED)
        assert isinstance(lam.store, SqliteStore)
        lam.store.save_state(lam.store.read(0)[-1].seq, "a state")
        with sqlite3.connect(path) as db:  # refilled by the writer, before any reader
            rows = [tuple(row) for row in db.execute("SELECT reward, signal FROM episode_rows")]
            assert rows == [(1.0, "shipped")] * 8
        _same(lam)



@pytest.mark.parametrize("damage", [
    "UPDATE episode_rows SET id = CAST(x'ff41' AS TEXT) WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "UPDATE episode_rows SET signal = CAST(x'ff41' AS TEXT) WHERE seq = (SELECT max(seq) FROM episode_rows)",
    "UPDATE episode_sums SET crc = 'abc' WHERE part = 'rows'",
])
def test_a_writer_refills_a_table_it_cannot_even_sum(tmp_path: Path, damage: str) -> None:
    # A flipped bit in a row's text (not UTF-8) or in a sum (not a number): every save of the
    # engine's state failed on it, or left the table stale, rather than refilling it from the log.
    path = _damaged(tmp_path, damage)
    with Lamar(str(path), k=1, seed=2) as lam:
        lam.report(lam.recall({"task": "t1"}).episode_id, Signal.SHIPPED)
        assert isinstance(lam.store, SqliteStore)
        lam.store.save_state(lam.store.read(0)[-1].seq, "a state")
        with sqlite3.connect(path) as db:
            rows = [tuple(row) for row in db.execute("SELECT reward, signal FROM episode_rows")]
            assert rows == [(1.0, "shipped")] * 6
        _same(lam)

def test_a_rewrite_makes_a_stale_table_current_again(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with _shipped(Lamar(str(path), k=1, seed=1), 5) as lam:
        assert isinstance(lam.store, SqliteStore)
        with sqlite3.connect(path) as db:
            db.execute("UPDATE meta SET value = 'stale' WHERE key = 'episode_rows_through'")
        assert lam.store.episodes() is None
        lam.report(lam.recall({"task": "t1"}).episode_id, Signal.CORRECTED)
        lam.store.save_state(lam.store.read(0)[-1].seq, "a state")
        assert lam.store.episodes() is None  # a stale table is not caught up
        assert lam.checkpoint()
        _same(lam)


def test_a_read_brings_a_table_far_behind_the_log_up_to_date_without_waiting_for_a_writer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(episode_rows, "BEHIND", 3)
    path = tmp_path / "release.db"
    shutil.copy(FIXTURE, path)  # a file from before the table: it gets one, folding nothing yet
    store = open_store(str(path))
    assert isinstance(store, SqliteStore)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process writing: the read does not wait for it
    table = store.episodes()
    assert table is not None and table.rows == [] and len(table.tail) > 3
    holder.execute("COMMIT")
    holder.close()
    table = store.episodes()
    assert table is not None and table.rows and table.tail == []
    assert read_log(store) == read_log(store, cache=False)
    store.close()
