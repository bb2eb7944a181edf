"""The what-if benchmark's step table: each step of a first read timed on a real SQLite store."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from lamar.store import open_store
from lamar.store.base import Event
from lamar.whatif.bench import build_store, catch_up_cost, copy_to_postgres, main, read_steps
from lamar.whatif.cache import fold_store
from lamar.whatif.log import read_log
from tests.store.test_postgres import drop_namespaces


def test_the_first_read_is_timed_step_by_step(tmp_path: Path) -> None:
    path = tmp_path / "whatif.db"
    build_store(path, 200)
    megabytes, steps = read_steps(path, 2)
    assert [name for name, _ in steps] == [
        "the episode table and the events since (what a first run reads)",
        "the log it stands in for: SQLite hands over the rows", "every event's checksum",
        "folding the texts into the what-if columns (each distinct one decoded once)",
        "for comparison, not a step: decoding and checking each event, then folding it",
        "for comparison, not a step: decoding each text whole (json.loads)"]
    assert all(seconds > 0 for _, seconds in steps)
    store = open_store(str(path))
    try:
        events = store.read(0)
        assert megabytes == pytest.approx(sum(len(e.data_json()) for e in events) / 1e6)
        assert len(fold_store(store, cache=False).ids) == 201  # the built episodes and the one logged after
        table = store.episodes()
        assert table is not None and len(table.rows) == 201 and table.tail == []  # the engine's close caught it up
    finally:
        store.close()
    counted, seconds = catch_up_cost(path)
    assert counted == len(events) and seconds > 0
    store = open_store(str(path))
    try:
        assert read_log(store) == read_log(store, cache=False)  # folded again, the same
    finally:
        store.close()


def test_the_postgres_namespace_is_copied_once_and_checked(tmp_path: Path, postgres_url: str) -> None:
    path = tmp_path / "whatif.db"
    build_store(path, 50)
    url = copy_to_postgres(path, postgres_url)
    namespace = url.rsplit("lamar_namespace=", 1)[1]
    try:
        assert copy_to_postgres(path, postgres_url) == url  # the second run finds it whole
        source, target = open_store(str(path)), open_store(url)
        try:
            assert [(e.kind, e.data) for e in target.read(0)] == [(e.kind, e.data) for e in source.read(0)]
            target.append([Event("status", {"id": "x", "status": "retired"})])  # another log under that name
        finally:
            source.close()
            target.close()
        with pytest.raises(SystemExit, match="holds"):
            copy_to_postgres(path, postgres_url)
    finally:
        drop_namespaces(postgres_url, namespace)


def test_a_users_store_is_only_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine.db"
    build_store(path, 40)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert main(["--store", str(path), "--runs", "1"]) == 0
    assert "lamar whatif, cached, 200 episodes logged since | 1" in capsys.readouterr().out
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # the 200 episodes went to a copy
    store = open_store(str(path))
    try:
        assert len(fold_store(store, cache=False).ids) == 41
    finally:
        store.close()


@pytest.mark.parametrize("argv", [["--runs", "0"], ["--runs", "-1"], ["--episodes", "0"], ["--store", "log.json"]])
def test_arguments_that_time_nothing_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and "--" in capsys.readouterr().err


def test_a_file_that_is_not_a_store_is_refused_unwritten(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not a database")
    with pytest.raises(SystemExit, match="not a Lamar SQLite store"):
        main(["--store", str(path), "--runs", "1"])
    assert path.read_text() == "not a database"
