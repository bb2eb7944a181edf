"""`savers`: each test's new checkpointer on the same checkpoints, as another process's would be,
on LangGraph's own in-memory, SQLite and PostgreSQL savers."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

Savers = Callable[[], Any]  # a new checkpointer (its own connection) on the same checkpoints


@pytest.fixture(params=["memory", "sqlite"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
        return
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    yield SqliteSaver(conn)
    conn.close()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def savers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Savers]:
    with ExitStack() as stack:
        if request.param == "memory":
            shared = InMemorySaver()
            yield lambda: shared
        elif request.param == "sqlite":
            def sqlite_saver() -> Any:
                conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
                stack.callback(conn.close)
                return SqliteSaver(conn)
            yield sqlite_saver
        else:
            from langgraph.checkpoint.postgres import PostgresSaver

            url = request.getfixturevalue("postgres_url")
            stack.enter_context(PostgresSaver.from_conn_string(url)).setup()
            yield lambda: stack.enter_context(PostgresSaver.from_conn_string(url))
