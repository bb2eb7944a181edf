"""SQLite's episode table after a Lamar from before its sums wrote to it (`older_table`): a reader
refolds the table only from the first span that writer can have changed, and damage anywhere is
still caught."""

from __future__ import annotations

import contextlib
import random
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import DuplicateReport, Experience, Lamar, Scope, Signal, UnknownEpisode
from lamar.state import follower
from lamar.store import episode_rows, episode_sums, open_store, sqlite_checks
from lamar.store.sqlite import SqliteStore
from lamar.store.sqlite_checks import event_crc
from lamar.whatif import cache
from lamar.whatif.log import read_log
from tests.whatif import older_table
from tests.whatif.test_episode_table import _same, _shipped, _step
from tools.store_bitflips import make, table_bytes, trial, whatif_of

SPAN = 16  # seqs per sum here, so that a store of a few dozen episodes spans several sums
_CACHE_PATH = cache.cache_path


@pytest.fixture(autouse=True)
def small_spans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "cache_path", lambda location: None)  # every read goes to the table
    monkeypatch.setattr(episode_sums, "SPAN", SPAN)
    # `_rewritten` counts the rows filed with a trigger, which a store refuses to write beside; the count,
    # not that refusal, is what is tested here.
    monkeypatch.setattr(sqlite_checks, "refuse_triggers", lambda db, path: None)


@contextlib.contextmanager
def older(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within it, every SQLite store in this process writes the table as the older Lamar did."""
    with monkeypatch.context() as swap:
        swap.setattr(episode_rows, "catch_up", older_table.catch_up)
        swap.setattr(episode_rows, "rebuild", older_table.rebuild)
        yield


def _rewritten(path: Path) -> list[int]:
    """The seqs of the rows filed into the table since the last call (a trigger records them)."""
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("CREATE TABLE IF NOT EXISTS rewritten (seq INTEGER)")
        db.execute("CREATE TRIGGER IF NOT EXISTS filed AFTER INSERT ON episode_rows "
                   "BEGIN INSERT INTO rewritten VALUES (new.seq); END")
        seqs = [seq for (seq,) in db.execute("SELECT seq FROM rewritten ORDER BY seq")]
        db.execute("DELETE FROM rewritten")
    return seqs


def _read(path: Path) -> None:
    """A first what-if read, as `lamar whatif` makes it; it equals the fold of the log, and the
    table then equals one refilled from the whole log."""
    store = open_store(str(path))
    assert isinstance(store, SqliteStore) and store.episodes() is not None
    assert read_log(store) == read_log(store, cache=False)
    store.close()
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        table = [db.execute(f"SELECT * FROM {name} ORDER BY 1").fetchall()
                 for name in ("episode_rows", "episode_slates")]
        db.execute("BEGIN IMMEDIATE")
        episode_rows.rebuild(db, event_crc)
        assert table == [db.execute(f"SELECT * FROM {name} ORDER BY 1").fetchall()
                         for name in ("episode_rows", "episode_slates")]
        db.execute("ROLLBACK")


def _older_writes(path: Path, monkeypatch: pytest.MonkeyPatch, episodes: int, seed: int) -> int:
    """The older Lamar recalls and reports `episodes` episodes and closes; the seq of its first event."""
    with older(monkeypatch), Lamar(str(path), k=1, seed=seed) as lam:
        assert isinstance(lam.store, SqliteStore)
        first = lam.store.read(0)[-1].seq + 1
        for n in range(episodes):
            lam.report(lam.recall({"task": "t1"}).episode_id, Signal.CORRECTED if n % 2 else Signal.SHIPPED)
    return first


def test_a_reader_refolds_only_the_spans_an_older_lamar_can_have_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    _shipped(Lamar(str(path), k=1, seed=1), 60).close()
    _rewritten(path)
    for round_ in range(3):  # the older Lamar keeps writing: each read pays for its writes alone
        first = _older_writes(path, monkeypatch, 3, seed=10 + round_)
        filed = _rewritten(path)  # its rows, summed by nothing
        assert len(filed) == 3 and min(filed) >= first
        _read(path)
        refolded = _rewritten(path)
        assert refolded and min(refolded) >= first // SPAN * SPAN  # the span its rows begin in, and after
        with contextlib.closing(sqlite3.connect(path)) as db:
            assert len(refolded) < db.execute("SELECT count(*) FROM episode_rows").fetchone()[0] / 4
        _read(path)
        assert _rewritten(path) == []  # summed again: the next read reads it as it is


def test_a_table_repaired_before_any_event_is_logged_still_describes_the_log(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "s.db").close()
    with contextlib.closing(sqlite3.connect(tmp_path / "s.db")) as db, db:
        db.execute("UPDATE episode_sums SET crc = crc + 1 WHERE part = 'through'")
    store = SqliteStore(tmp_path / "s.db")
    assert store.episodes() == (([], [], [], [], [], []), {}, None, [])  # not a table folding through seq -1
    store.close()


def test_an_older_lamar_reporting_an_earlier_episode_again_refolds_from_that_episode_s_span(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    with _shipped(Lamar(str(path), k=1, seed=1), 60) as lam:
        assert isinstance(lam.store, SqliteStore)
        episodes = [e for e in lam.store.read(0) if e.kind == "episode"]
    earlier = episodes[30]
    with older(monkeypatch), Lamar(str(path), k=1, seed=2) as lam:
        lam.report(earlier.data["id"], Signal.REVERTED, replace=True)
    _rewritten(path)
    _read(path)
    refolded = _rewritten(path)
    assert min(refolded) == earlier.seq // SPAN * SPAN > 0
    store = open_store(str(path))
    assert min(read_log(store).reward) < 0  # the older Lamar's report stands
    store.close()


_DAMAGE = [  # each to the first rows, slates or marks: spans the older Lamar never changed
    "UPDATE episode_rows SET reward = -0.5, signal = 'corrected' WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "UPDATE episode_rows SET time = time + 0.000001 WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "UPDATE episode_rows SET id = 'ep_x' || substr(id, 5) WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "DELETE FROM episode_rows WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "UPDATE episode_rows SET reward = 5.0 WHERE seq = (SELECT min(seq) FROM episode_rows)",
    "UPDATE episode_slates SET body = replace(body, 't1', 't2') WHERE slate = 1",
    "UPDATE episode_sums SET crc = crc + 1 WHERE part = 'rows' AND span = 0",
    "UPDATE meta SET value = (value - 40) || substr(value, instr(value, ' ')) WHERE key = 'episode_rows_summed'",
    "UPDATE meta SET value = (value + 0) || ' 0' WHERE key = 'episode_rows_summed'",
    "DELETE FROM meta WHERE key = 'episode_rows_summed'",
]


@pytest.mark.parametrize("damage", _DAMAGE)
def test_damage_to_a_span_the_older_lamar_never_changed_is_still_caught(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    path = tmp_path / "s.db"
    _shipped(Lamar(str(path), k=1, seed=1), 60).close()
    _older_writes(path, monkeypatch, 3, seed=10)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(damage)
    _rewritten(path)
    _read(path)  # equal to the fold of the log, and to a refill
    assert min(_rewritten(path)) < SPAN  # refilled from the first span


def test_a_bit_flipped_in_a_table_an_older_lamar_wrote_to_never_changes_the_whatif_answer_silently(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # `whatif_of` sets it: put back after
    monkeypatch.setattr(cache, "cache_path", _CACHE_PATH)  # as `lamar whatif` reads: its cache, emptied each time
    source, work, unflipped = tmp_path / "source", tmp_path / "work", tmp_path / "unflipped"
    for folder in (source, work, unflipped):
        folder.mkdir()
    original = source / "store.db"
    make(original, 60)
    _older_writes(original, monkeypatch, 3, seed=10)  # every read of a copy now repairs its table
    for extra in source.iterdir():
        if extra.name.endswith(("-wal", "-shm", ".lock")):
            extra.unlink()
    shutil.copy(original, unflipped / original.name)
    expected, spots, rng = whatif_of(unflipped / original.name), table_bytes(original), random.Random(7)
    outcomes = [trial(original, expected, rng, work, whatif_of, spots) for _ in range(60)]
    assert outcomes.count("wrong") == 0 and outcomes.count("refused") <= 3, outcomes


def test_a_slate_s_entry_damaged_in_its_index_does_not_file_that_slate_twice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No sum covers an index's pages: a repair that looked the kept slates up through their index
    # missed the one whose entry a flipped bit changed, and filed it again under a new number.
    path = tmp_path / "s.db"
    _shipped(Lamar(str(path), k=1, seed=1), 60).close()
    _older_writes(path, monkeypatch, 3, seed=10)
    with contextlib.closing(sqlite3.connect(path)) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        (page,) = db.execute("SELECT pageno FROM dbstat WHERE name = 'sqlite_autoindex_episode_slates_1'").fetchone()
    data = bytearray(path.read_bytes())
    at = data.index(b'"task":"t1"', (page - 1) * size, page * size)
    data[at + 9] ^= 4  # "t1" -> "t5" in each entry of the index's one page it finds first
    path.write_bytes(bytes(data))
    _read(path)


@pytest.mark.parametrize("seed", range(3))
def test_every_kind_of_write_by_a_new_and_an_older_lamar_keeps_the_table_equal_to_the_fold(
        tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follower, "_STATE_EVERY", 3)  # the table catches up at each state saved: often
    rng = random.Random(seed)
    path = str(tmp_path / "s.db")
    lam = Lamar(path, k=2, seed=seed, holdout=0.3)
    other = Lamar(path, k=2, seed=seed + 100)  # the older Lamar, in a process of its own
    lessons = [lam.add(Experience(f"case {n}", f"do {n}", scope=Scope(task=f"t{n % 3}"))) for n in range(6)]
    pending: list[str] = []
    reported: list[str] = []
    for step in range(160):
        engine = lam if rng.random() < 0.6 else other
        with contextlib.suppress(DuplicateReport, UnknownEpisode), \
                older(monkeypatch) if engine is other else contextlib.nullcontext():
            _step(engine, rng, step, lessons, pending, reported)
        if step % 10 == 0:
            _same(lam)
    with older(monkeypatch):
        other.close()
    _same(lam)
    lam.close()
    _read(Path(path))
