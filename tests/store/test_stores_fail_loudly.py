"""A store changed behind Lamar's back (read on a read-only mount with its write-ahead log, cut
short, a bit flipped, a table dropped, a row edited by hand) is read whole or refused with a
CorruptStore that names the file and the repair: never opened silently wrong."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import CorruptStore, Experience, Lamar, Scope, Signal, StoreError
from lamar.store.sqlite_checks import event_crc
from tests.store.test_sqlite_readers import _read_only_mount
from tools.store_bitflips import make, table_bytes, trial, whatif_of


def _cli(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(store), *args],
                          capture_output=True, text=True, timeout=120, env=env, check=False)


def _reported(lam: Lamar, n: int) -> None:
    rng = random.Random(n)
    for _ in range(n):
        lam.report(lam.recall({"task": "t"}).episode_id, rng.choice(list(Signal)))


def _contents(path: Path) -> object:
    """What a store holds: a SQLite file's rows (its pages move when a connection closes), else
    the bytes of the file and its sidecars."""
    if path.suffix == ".db":
        with sqlite3.connect(path) as db:
            return list(db.iterdump())
    return {p.name: p.read_bytes() for p in path.parent.iterdir() if p.is_file() and p.name != f"{path.name}.lock"}


def _written(path: Path, episodes: int) -> None:
    """A store at `path` holding one lesson and `episodes` reported episodes, closed."""
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    _reported(lam, episodes)
    lam.close()


def _refused(path: Path, *words: str) -> str:
    """Opening `path` and `lamar stats` on it are both refused, naming the file (and `words`)."""
    before = _contents(path)
    with pytest.raises(CorruptStore) as info:
        Lamar(str(path)).stats()
    message = str(info.value)
    assert str(path) in message and all(word in message for word in words), message
    done = _cli(path, "stats")
    assert done.returncode == 2 and str(path) in done.stderr, done.stderr
    assert _contents(path) == before  # left untouched
    return message


# -- SQLite --------------------------------------------------------------------------------------

def test_a_sqlite_store_on_a_read_only_mount_is_read_with_the_events_in_its_write_ahead_log(tmp_path: Path) -> None:
    source, copy = tmp_path / "src", tmp_path / "copy"
    source.mkdir()
    copy.mkdir()
    lam = Lamar(str(source / "s.db"), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    with sqlite3.connect(source / "s.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the lesson in the file, the episodes to come in the log
    _reported(lam, 25)
    for name in ("s.db", "s.db-wal"):  # as a copy or a snapshot of a live store holds it: no -shm
        shutil.copy(source / name, copy / name)
    lam.close()
    assert (copy / "s.db-wal").stat().st_size > 0 and not (copy / "s.db-shm").exists()
    with _read_only_mount(tmp_path, copy) as mount:
        done = _cli(mount / "s.db", "stats")
        assert done.returncode == 0 and re.search(r"episodes\s+25: 25 reported", done.stdout), done.stdout
        reader = Lamar(str(mount / "s.db"))
        assert reader.stats()["episodes"] == 25 and reader.store.read_only  # type: ignore[attr-defined]
        reader.close()
        assert sorted(p.name for p in mount.iterdir()) == ["s.db", "s.db-wal"]


def test_a_sqlite_store_whose_events_table_is_gone_is_refused_not_made_anew(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _written(path, 5)
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE events")
    _refused(path, "events table is gone", "backup")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events'").fetchone() == (0,)


@pytest.mark.parametrize("tables", ["users (id INTEGER, name TEXT)", "events (id INTEGER, title TEXT)"])
def test_another_programs_sqlite_database_is_refused_not_given_lamars_tables(tmp_path: Path, tables: str) -> None:
    # Neither a read nor a write may turn it into a store: no journal mode switched, no table added.
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute(f"CREATE TABLE {tables}")
    db.close()
    _refused(path, "not a Lamar store", tables.split()[0])
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] != "wal"
        assert [name for (name,) in db.execute("SELECT name FROM sqlite_master")] == [tables.split()[0]]
    db.close()


@pytest.mark.parametrize("suffix", [".db", ".json"])
def test_an_empty_store_file_is_a_store_to_the_api_and_none_yet_to_a_read_command(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"empty{suffix}"
    path.touch()
    done = _cli(path, "ls")
    assert done.returncode == 2 and "empty file, not a store yet" in done.stderr and "--create" in done.stderr
    assert path.stat().st_size == 0
    assert _cli(path, "add", "--create", "-q", "--precondition", "the build fails", "--action", "retry").returncode == 0
    assert _cli(path, "ls").returncode == 0
    other = tmp_path / f"api{suffix}"
    other.touch()  # as tempfile.NamedTemporaryFile(suffix=...) leaves it
    with Lamar(str(other)) as lam:
        lam.add(Experience("the build fails", "retry"))
    with Lamar(str(other)) as lam:
        assert len(lam.experiences()) == 1


@pytest.mark.parametrize("held", ["whitespace", ".state", ".index"])
def test_a_json_file_that_is_not_just_empty_is_not_started_afresh(tmp_path: Path, held: str) -> None:
    # Only an empty file with nothing beside it is no store yet: an empty file beside its sidecars is a store
    # cut short, and a blank one is not empty; either is refused and left as it was.
    path = tmp_path / "cut.json"
    path.write_bytes(b" \n" if held == "whitespace" else b"")
    if held != "whitespace":
        path.with_name(path.name + held).write_text("kept")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for args in (("add", "--create", "-q", "--precondition", "the build fails", "--action", "retry"), ("ls",)):
        done = _cli(path, *args)
        assert done.returncode == 2 and "is empty, not a Lamar store" in done.stderr, done.stderr
    with pytest.raises(CorruptStore, match="left untouched"):
        Lamar(str(path))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.suffix != ".lock"} == before


def _edited_sqlite(path: Path, edit: str, recompute: bool) -> None:
    with sqlite3.connect(path) as db:
        seq = db.execute("SELECT min(seq) FROM events WHERE kind = 'outcome'").fetchone()[0]
        if edit == "reward 1e300":
            db.execute("UPDATE events SET data = json_set(data, '$.reward', 1e300) WHERE seq = ?", (seq,))
        elif edit == "reward nan":
            db.execute("UPDATE events SET data = json_set(data, '$.reward', 'nan') WHERE seq = ?", (seq,))
        elif edit == "a bogus kind":
            db.execute("UPDATE events SET kind = 'bogus' WHERE seq = ?", (seq,))
        elif edit in ("a context of null", "propensities of a list"):
            first = db.execute("SELECT min(seq) FROM events WHERE kind = 'episode'").fetchone()[0]
            field, value = ("context", "null") if edit == "a context of null" else ("p", "[]")
            db.execute(f"UPDATE events SET data = json_set(data, '$.{field}', json('{value}')) WHERE seq = ?", (first,))
        elif edit == "a gap in seq":
            db.execute("DELETE FROM events WHERE seq = ?", (seq,))
        else:  # the last events deleted
            db.execute("DELETE FROM events WHERE seq > (SELECT max(seq) - 3 FROM events)")
        if recompute:  # as an editor who knows the checksum would
            rows = db.execute("SELECT seq, kind, key, time, data FROM events").fetchall()
            db.executemany("UPDATE events SET crc = ? WHERE seq = ?",
                           [(event_crc(kind, key, at, data), s) for s, kind, key, at, data in rows])
        db.execute("DELETE FROM state")  # the saved state gone: the whole log is folded


@pytest.mark.parametrize("column", ["time", "key", "data"])
def test_a_sqlite_row_holding_a_value_of_another_type_is_refused(tmp_path: Path, column: str) -> None:
    # A damaged page can leave a row whose column holds another type: a checksum that cannot
    # even be computed is a failed checksum, not a crash.
    path = tmp_path / "s.db"
    _written(path, 6)
    with sqlite3.connect(path) as db:
        value = {"time": "yesterday", "key": 7.5, "data": b"\xff\xfe"}[column]
        db.execute(f"UPDATE events SET {column} = ? WHERE seq = (SELECT max(seq) FROM events)", (value,))
        db.execute("DELETE FROM state")
    _refused(path, "checksum", "backup")


@pytest.mark.parametrize("recompute", [False, True], ids=["checksum-kept", "checksum-recomputed"])
@pytest.mark.parametrize("edit", ["reward 1e300", "reward nan", "a context of null", "propensities of a list",
                                  "a bogus kind", "a gap in seq", "the tail deleted"])
def test_a_hand_edited_sqlite_row_is_refused_once_the_state_is_gone(tmp_path: Path, edit: str, recompute: bool) -> None:
    path = tmp_path / "s.db"
    _written(path, 12)
    _edited_sqlite(path, edit, recompute)
    # a kind no Lamar knows, under a checksum that holds, is what a newer Lamar writes: upgrading is the way on
    _refused(path, "Upgrade lamar" if edit == "a bogus kind" and recompute else "backup")


def test_a_version_1_sqlite_store_gets_checksums_for_the_events_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "release.db"
    shutil.copy(Path(__file__).parent / "fixtures" / "release-0.1.0.db", path)
    lam = Lamar(str(path))
    events = lam.store.read(0)
    lam.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("3",)
        rows = db.execute("SELECT kind, key, time, data, crc FROM events ORDER BY seq").fetchall()
    assert len(rows) == len(events) and all(crc == event_crc(*row) for *row, crc in rows)


# -- JSON ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("sidecar", ["state", "index"])
def test_a_json_store_cut_at_a_line_boundary_is_refused_when_its_sidecars_knew_it_longer(
        tmp_path: Path, sidecar: str) -> None:
    path = tmp_path / "s.json"
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    _reported(lam, 35 if sidecar == "state" else 530)  # 2 lines each: 1 060 lines pass the index's step
    lam.close()
    keep = "index" if sidecar == "index" else "state"
    for other in ("index", "state"):
        if other != keep:
            Path(f"{path}.{other}").unlink(missing_ok=True)
    assert Path(f"{path}.{keep}").exists()
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:23]))  # header and 22 events: whole lines, nothing torn
    _refused(path, f"{path.name}.{keep}", "backup", "delete")


def test_a_bit_flipped_in_a_json_or_sqlite_store_is_never_read_silently_wrong(tmp_path: Path) -> None:
    rng = random.Random(38)
    for suffix in (".json", ".db"):
        source, work = tmp_path / f"source{suffix}", tmp_path / f"work{suffix}"
        source.mkdir()
        work.mkdir()
        expected = make(source / f"store{suffix}")
        for extra in source.iterdir():
            if extra.name.endswith(("-wal", "-shm", ".lock")):
                extra.unlink()
        outcomes = [trial(source / f"store{suffix}", expected, rng, work) for _ in range(60)]
        print(suffix, {o: outcomes.count(o) for o in ("refused", "harmless", "wrong")})
        # most of a JSON file is event text; most of a SQLite file is page structure and free space
        assert outcomes.count("wrong") == 0 and outcomes.count("refused") >= {".json": 50, ".db": 10}[suffix], outcomes


def test_a_bit_flipped_in_the_episode_table_never_changes_the_whatif_answer_silently(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # `whatif_of` sets it: put back after
    source, work = tmp_path / "source", tmp_path / "work"
    source.mkdir()
    work.mkdir()
    original = source / "store.db"
    make(original)
    for extra in source.iterdir():
        if extra.name.endswith(("-wal", "-shm", ".lock")):
            extra.unlink()
    expected, spots, rng = whatif_of(original), table_bytes(original), random.Random(7)
    outcomes = [trial(original, expected, rng, work, whatif_of, spots) for _ in range(60)]
    print({o: outcomes.count(o) for o in ("refused", "harmless", "wrong")})
    # A damaged table, even one SQLite cannot read, is refilled from the checked log (the copy is
    # writable) or passed over for the log; a flip that breaks `meta`'s page, which holds the
    # store's schema version too, refuses the store at open, naming the file.
    assert outcomes.count("wrong") == 0 and outcomes.count("refused") <= 3, outcomes


def test_a_json_line_edited_by_hand_is_refused_unless_its_checksum_was_deleted(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _written(path, 6)
    Path(f"{path}.state").unlink()
    Path(f"{path}.index").unlink()
    lines = path.read_text().splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if '"kind": "outcome"' in line)
    edited = lines[number].replace('"reward": ', '"reward": 0.5, "was": ')
    path.write_text("".join([*lines[:number], edited, *lines[number + 1:]]))
    _refused(path, f"line {number + 1}", "checksum", '"crc"')
    unchecked = re.sub(r', "crc": "[0-9a-f]{8}"\}$', "}", edited.rstrip("\n")) + "\n"
    path.write_text("".join([*lines[:number], unchecked, *lines[number + 1:]]))
    lam = Lamar(str(path), k=1, seed=1)  # a deliberate edit: read as written
    assert next(e.data["reward"] for e in lam.store.read(0) if e.kind == "outcome") == 0.5
    lam.close()
    bad = unchecked.replace('"reward": 0.5', '"reward": 1e300')
    path.write_text("".join([*lines[:number], bad, *lines[number + 1:]]))
    _refused(path, f"line {number + 1}", "1e+300")


def test_the_json_store_reads_the_seq_of_the_state_the_engine_saves(tmp_path: Path) -> None:
    """The check of a JSON store against its state names the state's seq as the engine writes it:
    a change of that text that the store no longer understands fails here, not silently."""
    from lamar.store.json_file import _STATE_SEQ

    path = tmp_path / "s.json"
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    _reported(lam, 3)
    last = lam.store.read(0)[-1].seq
    lam.close()
    found = _STATE_SEQ.search(Path(f"{path}.state").read_text(), 0, 200)
    assert found is not None and int(found.group(1)) == last
    assert json.loads(Path(f"{path}.state").read_text().split("\n", 1)[1])["seq"] == last


def test_a_json_store_started_again_beside_an_old_state_opens(tmp_path: Path) -> None:
    """Deleting the file to start afresh leaves its sidecars: the new file's first write drops the
    old state, which described another log, so the new store is not taken for a shortened one."""
    path = tmp_path / "s.json"
    _written(path, 20)
    path.unlink()
    fresh = Lamar(str(path), k=1, seed=1)
    fresh.add(Experience("the tests fail", "read the log", scope=Scope(task="t")))
    assert not Path(f"{path}.state").exists()
    assert len(Lamar(str(path)).experiences()) == 1


@pytest.mark.parametrize(("url", "path"), [
    ("sqlite:///{dir}/lessons.db", "{dir}/lessons.db"),  # SQLAlchemy's form, as LangChain users write it
    ("file://{dir}/lessons.db", "{dir}/lessons.db"),
    ("file:lessons.json", "lessons.json"),
    ("redis://127.0.0.1:6379/lessons.json", None),
])
def test_a_url_that_is_not_postgresql_is_refused_not_taken_for_a_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, path: str | None) -> None:
    """A sqlite:// or file: URL would be a relative path ("sqlite:" a folder in the working
    directory), the store apart from the file meant: refused, naming the path to pass instead."""
    from lamar import StoreError

    monkeypatch.chdir(tmp_path)
    location = url.format(dir=tmp_path)
    with pytest.raises(StoreError) as refused:
        Lamar(location)
    if path is not None:
        assert f"pass the path itself: {path.format(dir=tmp_path)!r}" in str(refused.value)
    else:
        assert "cannot tell the backend" in str(refused.value)
    assert list(tmp_path.iterdir()) == []  # no folder, no file written


@pytest.mark.parametrize("name", ["lessons\0.db", "lessons\0.json", "\ud800lessons.db", "\ud800lessons.json"])
def test_a_store_path_no_file_can_have_is_a_store_error_that_says_what_is_wrong(tmp_path: Path, name: str) -> None:
    """A NUL, or a lone surrogate the file system cannot encode, in the path: StoreError naming it,
    not the ValueError or UnicodeEncodeError of the open underneath, and nothing written."""
    with pytest.raises(StoreError, match="cannot name a file"):
        Lamar(str(tmp_path / name))
    assert list(tmp_path.iterdir()) == []


def test_a_trace_file_named_like_a_json_store_is_refused_as_not_a_store(tmp_path: Path) -> None:
    """A JSON Lines file that is not a store (sleep traces) is not called damaged: the message says
    what it is not, and sends nobody to restore a backup of a file that is fine."""
    from lamar.sleep.traces import Trace, TraceWriter

    path = tmp_path / "traces.json"
    writer = TraceWriter(path)
    for n in range(2):
        writer.write(Trace(id=f"t{n}", context={}, input="fix the build", output="cleared the cache"))
    before = path.read_bytes()
    with pytest.raises(CorruptStore, match="holds JSON lines but is not a Lamar store") as refused:
        Lamar(path)
    assert "backup" not in str(refused.value)
    assert path.read_bytes() == before


def test_a_sqlite_store_locked_by_another_process_past_the_timeout_is_busy_not_corrupt(tmp_path: Path) -> None:
    """A file another connection holds exclusively (a rollback-journal file mid-transaction) is a
    StoreError that says it is busy, not a CorruptStore that would send the user to a backup;
    once the lock is gone the same store opens."""
    from lamar import StoreError
    from lamar.store import SqliteStore

    path = tmp_path / "lessons.db"
    lam = Lamar(path)
    lam.add(Experience("the build fails", "clear the cache"))
    lam.close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("PRAGMA journal_mode=DELETE")
    other.execute("BEGIN EXCLUSIVE")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="another connection holds its lock") as refused:
        SqliteStore(path, timeout=0.2)
    assert not isinstance(refused.value, CorruptStore)
    assert path.read_bytes() == before
    other.execute("COMMIT")
    other.close()
    assert len(Lamar(path).experiences()) == 1


def test_a_write_kept_waiting_past_the_timeout_says_nothing_was_written_and_to_try_again(tmp_path: Path) -> None:
    """A store already open whose write waits out another writer's lock: the same busy message as
    at open, saying nothing was written, and the same write works once that writer is done."""
    from lamar import StoreError
    from lamar.store import SqliteStore

    path = tmp_path / "lessons.db"
    lam = Lamar(SqliteStore(path, timeout=0.2))
    lam.add(Experience("the build fails", "clear the cache"))
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # a writer in the middle of its transaction
    lesson = Experience("a lock is held", "wait for it")
    with pytest.raises(StoreError, match="another connection holds its lock") as refused:
        lam.add(lesson)
    assert "nothing was written: try again once that writer is done" in str(refused.value)
    assert not isinstance(refused.value, CorruptStore)
    other.execute("COMMIT")
    other.close()
    lam.add(lesson)
    assert len(lam.experiences()) == 2
    lam.close()


@pytest.mark.parametrize(("made", "named", "said"), [
    ("lessons.json", "lessons.db", "is a Lamar JSON store, not SQLite.*open it by a .json path"),
    ("lessons.db", "lessons.json", "is an SQLite database, not JSON.*open it by a .db path"),
])
def test_a_store_under_the_other_backends_name_is_refused_as_what_it_is(tmp_path: Path, made: str, named: str,
                                                                        said: str) -> None:
    """A store copied or renamed to the other backend's suffix: the refusal says what it is and how
    to open it (not to restore a backup), and the file is left as it was."""
    source = tmp_path / made
    lam = Lamar(source)
    lam.add(Experience("the build fails", "clear the cache"))
    lam.close()
    path = tmp_path / named
    shutil.copyfile(source, path)
    with pytest.raises(CorruptStore, match=said) as refused:
        Lamar(path)
    assert "backup" not in str(refused.value)
    assert path.read_bytes() == source.read_bytes()


def test_a_closed_sqlite_store_says_it_is_closed_not_corrupt(tmp_path: Path) -> None:
    from lamar import StoreError
    from lamar.store.sqlite import SqliteStore

    path = tmp_path / "s.db"
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("the build fails", "clear the cache"))
    lam.close()
    lam.close()
    for call in (lambda: lam.recall({}), lam.stats, lambda: lam.add(Experience("a", "b"))):
        with pytest.raises(StoreError, match="is closed") as caught:
            call()
        assert not isinstance(caught.value, CorruptStore)
    store = SqliteStore(path)
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.read()
    assert len(Lamar(str(path)).experiences()) == 1


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_sqlite_store_deleted_or_replaced_while_open_refuses_to_write(tmp_path: Path, how: str) -> None:
    # SQLite would go on writing through its open handle to the old file, out of everyone's reach.
    path = tmp_path / "s.db"
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    _reported(lam, 3)
    for name in ("s.db", "s.db-wal", "s.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    if how == "replaced":
        _written(tmp_path / "other" / "s.db", 2)
        (tmp_path / "other" / "s.db").rename(path)
    gone = "deleted" if how == "deleted" else "replaced"
    with pytest.raises(StoreError, match=rf"{re.escape(str(path))} was {gone}"):
        lam.recall({"task": "t"})
    lam.close()
    if how == "replaced":
        with Lamar(str(path)) as other:
            assert other.stats()["episodes"] == 2  # the file now there is left as it was


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_sqlite_store_deleted_or_replaced_while_open_refuses_to_read(tmp_path: Path, how: str) -> None:
    # Reads through the open handle showed the old file (or, once emptied, an empty store) as if
    # it were the store at that path: `lamar ui` went on showing it without a word.
    path = tmp_path / "s.db"
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    for name in ("s.db", "s.db-wal", "s.db-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    if how == "replaced":
        _written(tmp_path / "other" / "s.db", 2)
        (tmp_path / "other" / "s.db").rename(path)
    said = (f"deleted while open; nothing was read or written: restore it from a backup to {path}, then open the "
            f"store again (without one, opening {path} again would start a new, empty store there, without its "
            "lessons)") if how == "deleted" else (
            "replaced by another file while open; nothing was read or written: open the store again to use "
            "the file now at that path")
    for read in (lam.stats, lam.experiences, lambda: lam.store.read(0), lam.store.episodes):
        with pytest.raises(StoreError, match=re.escape(f"{path} was {said}")):
            read()
    lam.close()


@pytest.mark.parametrize("suffix", [".json", ".db"])
@pytest.mark.parametrize("where", ["renamed", "moved"])
def test_a_file_store_renamed_or_moved_while_open_says_where_its_lessons_are(tmp_path: Path, suffix: str,
                                                                           where: str) -> None:
    # It said the file was deleted and to open the store again to start a new one at that path: a team that did
    # so after `mv proto.db` worked on in an empty store while the lessons sat in the renamed file.
    path = tmp_path / f"proto{suffix}"
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    (tmp_path / "old").mkdir()
    new = tmp_path / (f"proto-old{suffix}" if where == "renamed" else f"old/proto{suffix}")
    path.rename(new)
    if suffix == ".json" and where == "moved":  # no handle held, and not in the folder: where to is not known
        said = f"{path} was deleted, moved or renamed while open; nothing was read or written: if it was moved"
    elif suffix == ".db":  # the latest writes are in proto.db-wal, which the rename left behind
        said = (f"{path} was moved or renamed to {new} while open; nothing was read or written: its latest writes "
                f"are still in {path}-wal, beside the old name, so move it back to {path} and open the store again")
    else:
        said = (f"{path} was moved or renamed to {new} while open; nothing was read or written: open the store at "
                f"{new}, or move it back to {path} and open the store again (opening {path} again would start a new, "
                "empty store there, without its lessons)")
    with pytest.raises(StoreError, match=re.escape(said)):
        lam.stats()
    lam.close()
    if suffix == ".db":
        new.rename(path)  # as it says
        new = path
    with Lamar(str(new)) as moved:
        assert len(moved.experiences()) == 1


def test_a_sqlite_store_replaced_while_open_says_where_the_file_that_was_open_is(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    path.rename(tmp_path / "kept.db")
    _written(tmp_path / "other" / "s.db", 2)
    (tmp_path / "other" / "s.db").rename(path)
    with pytest.raises(StoreError, match=re.escape(f"with its lessons, is now at {tmp_path / 'kept.db'}")):
        lam.stats()
    lam.close()


@pytest.mark.parametrize("suffix", [".json", ".db"])
def test_a_closed_file_store_refuses_every_read_and_write(tmp_path: Path, suffix: str) -> None:
    from lamar.store import open_store
    from lamar.store.base import Event

    path = tmp_path / f"s{suffix}"
    with Lamar(str(path), seed=1) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    lam.close()  # twice is harmless
    for call in (lambda: lam.recall({}), lam.stats, lambda: lam.add(Experience("a", "b"))):
        with pytest.raises(StoreError, match="is closed; open it again") as caught:
            call()
        assert not isinstance(caught.value, CorruptStore)
    store = open_store(str(path))
    store.close()
    for use in (store.read, lambda: store.lookup(["k"]), lambda: store.save_state(1, "x"),
                lambda: store.append([Event("status", {"id": "x", "status": "retired"})])):
        with pytest.raises(StoreError, match="is closed"):
            use()
    assert len(Lamar(str(path)).experiences()) == 1


@pytest.mark.parametrize("name", ["s.db", "s.json"])
def test_a_store_opened_by_a_relative_name_reads_and_writes_after_a_change_of_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    # SQLite holds the file by its full path: the check that it is still the file at that path
    # looked for the relative name in the new working folder and called the store deleted; the
    # JSON store read and wrote the relative name there.
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    lam = Lamar(name, k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert len(lam.experiences()) == 1
    lam.report(lam.recall({"task": "t"}).episode_id, 1.0)
    lam.close()
    assert not (tmp_path / "elsewhere" / name).exists()
    with Lamar(str(tmp_path / name)) as again:
        assert again.stats()["episodes"] == 1
