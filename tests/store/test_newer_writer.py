"""A store holding an event of a kind this Lamar does not know, written with its checksum as a newer
Lamar writes it, is refused with the advice to upgrade: an edit, or a backup put back, loses that event."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lamar import CorruptStore, Experience, Lamar, Scope
from lamar.store.sqlite_checks import event_crc
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

NEWER = "tag"  # no Lamar writes this kind yet


def _written(target: str) -> None:
    with Lamar(target, k=1, seed=1) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
        for _ in range(3):
            lam.report(lam.recall({"task": "t"}).episode_id, "shipped")


def _json_line(seq: int) -> str:
    head = json.dumps({"seq": seq, "kind": NEWER, "time": 1.0, "data": {"name": "x"}})[:-1]
    return f'{head}, "crc": "{zlib.crc32(head.encode()):08x}"}}\n'


def _refused_with_upgrade(target: str) -> str:
    with pytest.raises(CorruptStore) as info:
        Lamar(target)
    message = str(info.value)
    assert NEWER in message and "upgrade lamar" in message.lower(), message
    assert "backup" not in message and "delete" not in message and "Fix" not in message, message
    return message


def test_a_json_line_of_a_kind_a_newer_lamar_writes_says_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    _written(str(path))
    seq = len(path.read_text().splitlines())  # the header line, then one line per event
    with path.open("a") as out:
        out.write(_json_line(seq))
    for sidecar in (".state", ".index"):
        path.with_name(path.name + sidecar).unlink(missing_ok=True)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert str(path) in _refused_with_upgrade(str(path))
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_sqlite_row_of_a_kind_a_newer_lamar_writes_says_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _written(str(path))
    with sqlite3.connect(path) as db:
        data = json.dumps({"name": "x"})
        db.execute("INSERT INTO events (kind, key, time, data, crc) VALUES (?, NULL, 1.0, ?, ?)",
                   (NEWER, data, event_crc(NEWER, None, 1.0, data)))
        db.execute("DELETE FROM state")
    assert str(path) in _refused_with_upgrade(str(path))


@pytest.fixture
def pg_url(postgres_url: str) -> Iterator[tuple[str, str]]:
    namespace = unique_namespace("newer")
    yield namespace_url(postgres_url, namespace, lamar_fold="off"), namespace
    drop_namespaces(postgres_url, namespace)


def test_a_postgres_row_of_a_kind_a_newer_lamar_writes_says_to_upgrade(postgres_url: str,
                                                                        pg_url: tuple[str, str]) -> None:
    url, namespace = pg_url
    _written(url)
    with psycopg.connect(postgres_url) as conn:
        conn.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) VALUES "
                     "(%s, nextval('lamar_seq'), %s, NULL, 1.0, %s)", (namespace, NEWER, json.dumps({"name": "x"})))
        conn.execute("DELETE FROM lamar_state WHERE namespace = %s", (namespace,))
    _refused_with_upgrade(url)
