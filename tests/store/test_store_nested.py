"""An event nested deeper than any write makes (a store file crafted or damaged by someone else) is refused with a
CorruptStore that names the file, not a RecursionError from the JSON decoder, in JSON and SQLite stores alike."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path

import pytest

from lamar import Lamar
from lamar.store.sqlite_checks import event_crc
from tests.store.test_stores_fail_loudly import _refused, _written

_DEEP = '{"precondition": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("depth", [100_000, 2_000])  # past the decoder's limit, and past Python's checks after it
def test_a_json_line_nested_past_any_event_is_refused_naming_its_line(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "crafted.json"
    _written(path, 2)
    for sidecar in (".index", ".state"):
        path.with_name(path.name + sidecar).unlink(missing_ok=True)
    seq = json.loads(path.read_text().splitlines()[-1])["seq"] + 1
    data = '{"precondition": ' + "[" * depth + "]" * depth + "}"
    with path.open("a") as fh:  # no "crc": a line edited by hand is read as written
        fh.write(f'{{"seq": {seq}, "kind": "experience", "time": 1.0, "data": {data}}}\n')
    assert "nested" in _refused(path, "line 7")  # the header, a lesson, two episodes and their outcomes first


def test_a_sqlite_row_nested_past_any_event_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "crafted.db"
    _written(path, 2)
    with sqlite3.connect(path) as db:  # its checksum computed as Lamar computes it: anyone can
        db.execute("INSERT INTO events (kind, key, time, data, crc) VALUES ('experience', NULL, 1.0, ?, ?)",
                   (_DEEP, event_crc("experience", None, 1.0, _DEEP)))
    db.close()
    assert "nested" in _refused(path, "event 6")


@pytest.mark.parametrize("suffix", [".json", ".db"])
def test_a_saved_state_nested_past_any_state_is_set_aside_and_the_log_folded(tmp_path: Path, suffix: str) -> None:
    # The state is a cache beside the log: one that cannot be read is folded again from the events, as a torn one is.
    path = tmp_path / f"crafted{suffix}"
    _written(path, 2)
    body = '{"version": ' + "[" * 100_000 + "]" * 100_000 + "}"
    text = f"{zlib.crc32(body.encode()):08x}{len(body.encode()):x}\n{body}"  # its checksum as Lamar computes it
    if suffix == ".json":
        path.with_name(path.name + ".state").write_text(text)
    else:
        with sqlite3.connect(path) as db:
            db.execute("UPDATE state SET body = ?", (text,))
        db.close()
    with Lamar(str(path)) as lam:
        assert lam.stats()["reports"] == 2


def test_a_whatif_cache_nested_past_any_fold_is_set_aside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar.whatif.cache import cache_path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = tmp_path / "crafted.json"
    _written(path, 30)  # the fewest a what-if estimate takes
    cached = cache_path(str(path))
    assert cached is not None
    cached.parent.mkdir(parents=True)
    cached.write_text('{"format": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with Lamar(str(path)) as lam:
        assert lam.whatif().reported == 30
