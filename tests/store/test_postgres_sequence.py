"""The sequence every fold-mode namespace takes its seqs from, against the real server: a rows build
moves it past a log the log mode numbered, and never back under another session's nextval."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from urllib.parse import quote

import psycopg
import pytest

from lamar import Experience, Lamar
from lamar.store.postgres.locks import ROWS_LOCK
from tests.store.test_postgres import namespace_url, wait_until_waiting


@pytest.fixture
def schema_url(postgres_url: str) -> Iterator[str]:
    """A URL to a schema of its own (with a sequence of its own, which no other test moves), dropped after."""
    schema = f"pgrows_seq_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        sep = "&" if "?" in postgres_url else "?"
        yield f"{postgres_url}{sep}options={quote(f'-c search_path={schema}')}"
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _in(url: str, namespace: str, fold: str, **params: str) -> str:
    return namespace_url(url, namespace, lamar_fold=fold, **params)


def test_a_rows_build_never_moves_the_sequence_back_under_another_sessions_write(schema_url: str) -> None:
    # A namespace the log mode numbered (seqs 1, 2, ... of its own) is ahead of the shared sequence;
    # its first fold-mode read builds its rows and moves the sequence past its log. Another session
    # takes seqs for another namespace between the build's look at the sequence and its move: a move
    # that set the sequence to the log's last seq put it back under those seqs, and the other
    # namespace's next write took one of them again (EventConflict).
    moved, other = "moved-pgrows", "other-pgrows"
    with Lamar(_in(schema_url, moved, "off"), k=1, seed=1) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
        for _ in range(20):
            lam.report(lam.recall({}).episode_id, 1.0)
    with Lamar(_in(schema_url, other, "on"), k=1, seed=2) as lam:
        lam.add(Experience("tests flake", "rerun them alone"))
        lam.report(lam.recall({}).episode_id, 1.0)
    with psycopg.connect(schema_url, autocommit=True) as conn:
        (last,) = conn.execute("SELECT max(seq) FROM lamar_events WHERE namespace = %s", (moved,)).fetchone() or (0,)
        (value,) = conn.execute("SELECT last_value FROM lamar_seq").fetchone() or (0,)
    assert last > value + 10  # the log mode's log is ahead of the sequence

    builder = Lamar(_in(schema_url, moved, "on", application_name="pgrows-build"), k=1, seed=3)
    failed: list[Exception] = []

    def build() -> None:
        try:
            builder.recall({})  # the rows are not built yet: this builds them
        except Exception as exc:  # noqa: BLE001 (the main thread asserts there was none)
            failed.append(exc)

    # The other session writes with the sequence held (ALTER SEQUENCE locks it against every other
    # session's nextval and setval until COMMIT): the build, once it reaches the sequence, waits there.
    with psycopg.connect(schema_url) as held:
        held.execute("ALTER SEQUENCE lamar_seq OWNED BY NONE")
        thread = threading.Thread(target=build)
        thread.start()
        wait_until_waiting(schema_url, "pgrows-build", "the build never reached the sequence")
        events = [{"kind": "episode", "key": f"episode:pgrows-{i}", "time": 1.0, "data": {}}
                  for i in range(last - value + 10)]
        taken = [row[0] for row in held.execute("SELECT seq FROM lamar_log(%s, %s, %s::json) AS seq",
                                                (other, ROWS_LOCK, json.dumps(events))).fetchall()]
        held.commit()
    thread.join(timeout=30)
    assert not thread.is_alive() and failed == []
    builder.close()
    assert max(taken) > last  # the other session's seqs went past the moved namespace's log
    with psycopg.connect(schema_url, autocommit=True) as conn:
        (now,) = conn.execute("SELECT last_value FROM lamar_seq").fetchone() or (0,)
    assert now > max(taken)  # the sequence never went back under them
    with Lamar(_in(schema_url, other, "on"), k=1, seed=4) as lam:
        lam.add(Experience("the cache is stale", "rebuild it"))  # a new seq, not one of `taken`
        lam.report(lam.recall({}).episode_id, 1.0)
