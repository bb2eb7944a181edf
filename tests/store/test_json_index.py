"""The JSON store's index beside the file is a cache: missing, stale, torn or foreign, the store reads
exactly what a whole-file parse reads; writers keep it current, readers never write it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from lamar import EventConflict, Experience, Lamar, Scope, Signal
from lamar.store import Event, JsonStore, MemoryStore
from lamar.store.json_file import _INDEX_EVERY
from lamar.store.json_format import parse
from lamar.store.json_index import STEP, index_path
from lamar.store.transfer import transfer


def _fill(path: Path, events: int, start: int = 0) -> None:
    store = JsonStore(path)
    store.append([Event("status", {"id": f"e{i}", "status": "active"}, key=f"k:{i}")
                  for i in range(start, start + events)])
    store.close()


def _whole(path: Path) -> list[tuple]:
    """What the file says, parsed whole, as comparable rows."""
    _, events, _, _ = parse(path.read_bytes(), path)
    return [(e.seq, e.kind, e.key, e.time, e.data) for e in events]


def _rows(events: list[Event]) -> list[tuple]:
    return [(e.seq, e.kind, e.key, e.time, e.data) for e in events]


def _same_as_whole(store: JsonStore, path: Path) -> None:
    whole = _whole(path)
    assert _rows(store.read()) == whole
    for after in (0, 1, STEP - 1, STEP, len(whole) // 2, len(whole) - 3, len(whole)):
        assert _rows(store.read(after)) == [row for row in whole if row[0] > after]
    probe = [key for key in (whole[0][2], whole[len(whole) // 2][2], whole[-1][2], "k:absent") if key]
    assert _rows(store.lookup(probe)) == [row for row in whole if row[2] in probe]


def test_an_open_with_a_current_index_parses_only_the_lines_past_it(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _fill(path, 3 * _INDEX_EVERY + 10)
    assert index_path(path).exists()
    store = JsonStore(path)
    assert store._tail == [] and store._index.lines == 3 * _INDEX_EVERY + 10  # nothing parsed on open
    _same_as_whole(store, path)


@pytest.mark.parametrize("damage", ["missing", "torn", "edited", "behind", "foreign"])
def test_an_index_that_cannot_be_trusted_changes_nothing_read(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "s.json"
    _fill(path, 2 * _INDEX_EVERY)
    index = index_path(path)
    saved = index.read_bytes()
    if damage == "missing":
        index.unlink()
    elif damage == "torn":
        index.write_bytes(saved[:len(saved) // 2])
    elif damage == "edited":
        index.write_bytes(saved[:-9] + bytes([saved[-9] ^ 1]) + saved[-8:])
    elif damage == "behind":  # a writer appended since, and the index was not saved again
        _fill(path, 300, start=10_000)
        index.write_bytes(saved)
    else:  # another store's index, copied beside this file
        other = tmp_path / "o.json"
        _fill(other, 2 * _INDEX_EVERY)
        index.write_bytes(index_path(other).read_bytes())
    before = index.read_bytes() if index.exists() else None
    store = JsonStore(path)
    _same_as_whole(store, path)
    assert (index.read_bytes() if index.exists() else None) == before  # a reader writes nothing
    store.append([Event("status", {"id": "x", "status": "active"}, key="k:new")])
    _same_as_whole(JsonStore(path), path)


def test_a_reader_needs_no_write_access(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "s.json"
    _fill(path, 2 * _INDEX_EVERY)
    _fill(path, 100, start=10_000)  # past the index: the reader parses these in memory
    files = {p.name: p.read_bytes() for p in folder.iterdir()}
    os.chmod(folder, 0o555)
    os.chmod(path, 0o444)
    try:
        _same_as_whole(JsonStore(path), path)  # as root the modes stop nothing: the folder is compared below
    finally:
        os.chmod(folder, 0o755)
        os.chmod(path, 0o644)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == files


def test_a_second_writer_appends_while_our_index_is_behind(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _fill(path, _INDEX_EVERY + 5)
    ours = JsonStore(path)
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path[:0] = {sys.path!r}
        from lamar.store import Event, JsonStore
        store = JsonStore({str(path)!r})
        for start in range(0, 3 * {_INDEX_EVERY}, 500):  # saves the index again as it goes
            store.append([Event("status", {{"id": "b", "status": "active"}}, key=f"b:{{i}}")
                          for i in range(start, start + 500)])
        """)], capture_output=True, text=True, check=False)
    assert child.returncode == 0, child.stderr
    with pytest.raises(EventConflict):  # a key the other writer stored, far past what we had indexed
        ours.append([Event("status", {"id": "a", "status": "active"}, key="b:7")])
    stored = ours.append([Event("status", {"id": "a", "status": "active"}, key="a:1")])
    assert stored[0].seq == _INDEX_EVERY + 5 + 7 * 500 + 1
    _same_as_whole(ours, path)
    assert _rows(ours.lookup(["b:7", "a:1", "k:3"])) == [r for r in _whole(path) if r[2] in ("b:7", "a:1", "k:3")]
    _same_as_whole(JsonStore(path), path)


def test_a_hand_edit_inside_the_indexed_lines_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    lam = Lamar(MemoryStore(), k=1, seed=1)
    exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    for _ in range(_INDEX_EVERY):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    # The engine's log copied in one append (a JSON store syncs each append: slow to fill event by
    # event). The copy's saved state goes, as docs/stores.md tells an editor to: it checks only its
    # own last event, so it would still hold the old text (a limitation of the state, not of the index).
    transfer(lam.store, JsonStore(path))
    Path(f"{path}.state").unlink()
    assert index_path(path).exists()
    lines = path.read_text().splitlines(keepends=True)
    lesson = json.loads(lines[1])
    lesson["data"]["action"] = "clear the whole cache folder"  # longer: every later offset moves
    del lesson["crc"]  # a deliberate edit deletes the line's checksum (docs/stores.md)
    lines[1] = json.dumps(lesson) + "\n"
    path.write_text("".join(lines))
    assert Lamar(str(path)).get(exp_id).action == "clear the whole cache folder"
    _same_as_whole(JsonStore(path), path)


def test_a_checkpoint_and_a_version_1_migration_leave_a_current_index(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    lam = Lamar(str(path), k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    for _ in range(200):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    events = lam.store.read()
    assert lam.checkpoint()
    store = JsonStore(path)
    assert store._tail == [] and store.read()[0].kind == "snapshot"
    _same_as_whole(store, path)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "lamar", "version": 1, "events": [e.to_dict() for e in events]}))
    JsonStore(old).append([Event("status", {"id": "x", "status": "active"})])
    migrated = JsonStore(old)
    assert migrated._tail == [] and _rows(migrated.read())[:len(events)] == _rows(events)
    _same_as_whole(migrated, old)
