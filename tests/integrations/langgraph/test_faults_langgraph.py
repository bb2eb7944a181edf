"""LangGraph under store faults: a checkpointed graph START -> report -> recall -> answer, the outcome of each
turn sent with the next, over Lamar's own stores and over `LangGraphStore` on LangGraph's SqliteStore and
PostgresStore (tests/integrations/store_faults.py makes the faults)."""

from __future__ import annotations

import itertools
import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph.store.postgres import PostgresStore
from langgraph.store.sqlite import SqliteStore
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from lamar import Experience, ExperienceStore, Lamar, Scope
from lamar_langgraph import LamarState, LangGraphStore, recall_node, report_node
from tests.integrations import store_faults as faults
from tests.integrations.langgraph.graphs import in_line
from tests.integrations.store_faults import warned
from tests.store.test_postgres import unique_namespace


class State(MessagesState, LamarState):
    pass


def _engine(store: Any) -> Lamar:
    lam = Lamar(store, k=2, seed=3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="app")))
    return lam


def _graph(lam: Lamar) -> Callable[[], Any]:
    def answer(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("cleared it")]}

    graph = in_line(State, ("report", report_node(lam)), ("recall", recall_node(lam, context={"project": "app"})),
                    ("answer", answer)).compile(checkpointer=InMemorySaver())
    turns = itertools.count()

    def call() -> Any:
        turn = next(turns)
        result = graph.invoke({"messages": [HumanMessage("the build fails")], "lamar_outcome": "shipped"},
                              {"configurable": {"thread_id": "t"}})
        assert len(result["messages"]) == 2 * (turn + 1)
        return result["messages"][-1].text

    return call




@pytest.mark.parametrize(("kind", "fault"), faults.CASES, ids=faults.IDS)
def test_a_graph_with_report_and_recall_nodes_answers_under_a_store_fault(
        store_in: Callable[[str], str], kind: str, fault: str, caplog: pytest.LogCaptureFixture) -> None:
    location = store_in(kind)
    lam = _engine(ExperienceStore(location, timeout=faults.TIMEOUT))
    caplog.set_level(logging.WARNING)
    faults.survives(location, _graph(lam), faults.FAULTS[fault], warned(caplog), advice=faults.refused(kind, fault))
    lam.close()


def _over_sqlite(location: str) -> LangGraphStore:
    conn = sqlite3.connect(location, check_same_thread=False, isolation_level=None, timeout=faults.TIMEOUT)
    base = SqliteStore(conn)
    base.setup()
    return LangGraphStore(base, timeout=faults.TIMEOUT)


@contextmanager
def _lamar_lock_held(location: str) -> Iterator[None]:
    """Another writer holding the Lamar write lock in the BaseStore, alive (within its lease) past the timeout."""
    other = _over_sqlite(location)
    other._lock.acquire()
    try:
        yield
    finally:
        other._lock.release()
        other.store.conn.close()  # type: ignore[attr-defined]


# The faults of a SqliteStore file under a LangGraphStore, and what each warning says to do (None: an open
# connection may keep writing a file made read-only).
_BASE_FAULTS = {"read_only": (faults.read_only, None), "full_disk": (faults.full_disk, "free some space"),
                "locked": (faults.locked, "try again once that writer is done"),
                "slow": (_lamar_lock_held, "raise `timeout`")}


@pytest.mark.parametrize("fault", list(_BASE_FAULTS))
def test_a_graph_over_a_langgraph_sqlite_store_answers_under_a_fault(
        tmp_path: Path, fault: str, caplog: pytest.LogCaptureFixture) -> None:
    with faults.tiny_disk(tmp_path) as disk:
        location = str(disk / "langgraph.db")
        lam = _engine(_over_sqlite(location))

        def read() -> list[Any]:
            store = _over_sqlite(location)
            try:
                return [(e.seq, e.kind, e.key, e.data) for e in store.read(0)]
            finally:
                store.store.conn.close()  # type: ignore[attr-defined]

        caplog.set_level(logging.WARNING)
        make, advice = _BASE_FAULTS[fault]
        faults.survives(location, _graph(lam), make, warned(caplog), advice=advice, read=read)
        lam.close()


@pytest.mark.postgres
def test_a_graph_answers_when_postgres_ends_its_connection(postgres_url: str,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with faults.member_store(postgres_url, "fixfaults_lg") as (location, role):
        lam = _engine(ExperienceStore(location, timeout=faults.TIMEOUT))
        try:
            faults.survives(location, _graph(lam), faults.killed(postgres_url, role), warned(caplog), advice=None)
        finally:
            lam.close()


@pytest.mark.postgres
def test_a_graph_over_a_langgraph_postgres_store_answers_when_its_connection_is_ended(
        postgres_url: str, caplog: pytest.LogCaptureFixture) -> None:
    schema = unique_namespace("fixfaults_lg").replace("-", "_")
    caplog.set_level(logging.WARNING)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row, "application_name": schema,
                  "options": f"-c search_path={schema}"}
        with ConnectionPool(postgres_url, kwargs=kwargs, min_size=1, max_size=2) as pool:
            base = PostgresStore(pool)
            base.setup()
            store = LangGraphStore(base, timeout=faults.TIMEOUT)
            lam = _engine(store)
            faults.survives(postgres_url, _graph(lam), faults.killed(postgres_url, app=schema), warned(caplog),
                            advice=None, read=lambda: [(e.seq, e.kind, e.key, e.data) for e in store.read(0)])
            assert "the connection to PostgreSQL was lost" in warned(caplog)()
            lam.close()
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
