"""A review answered while Lamar's store is down: the warnings name the outcome and the call that records it, and
the next turn's recall records it once the store is back."""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from lamar import Experience, Lamar, Scope, StoreError
from lamar_langgraph import LamarState, recall_node, report_node

CONTEXT = {"project": "trace"}


class State(MessagesState, LamarState):
    pass


def reviewed_graph(lam: Lamar, checkpoints: Path) -> Any:
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("agent", lambda state: {"messages": [AIMessage("Cleared DerivedData.")]})
    graph.add_node("review", lambda state: {"lamar_outcome": interrupt("did it ship?")})
    graph.add_node("report", report_node(lam))
    for a, b in [(START, "recall"), ("recall", "agent"), ("agent", "review"), ("review", "report"), ("report", END)]:
        graph.add_edge(a, b)
    return graph.compile(checkpointer=SqliteSaver(sqlite3.connect(checkpoints, check_same_thread=False)))


def _store_down(*args: Any, **kwargs: Any) -> None:
    raise StoreError("cannot reach the store; nothing was sent, and the next call tries again")


def _first_turn(tmp_path: Path) -> tuple[Lamar, Any, Any, str]:
    """A thread of the reviewed graph waiting for its first review: the engine, the graph, its config and the
    turn's episode."""
    lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(project="trace")))
    app = reviewed_graph(lam, tmp_path / "checkpoints.db")
    config = {"configurable": {"thread_id": "1"}}
    first = app.invoke({"messages": [HumanMessage("the build broke")], "lamar_context": CONTEXT}, config)
    return lam, app, config, first["lamar_episode_id"]


def test_a_review_the_store_refused_is_named_with_its_call_and_recorded_by_the_next_turn(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # The reviewer's "shipped" reached no store. The report node's warning used to end with the
    # store's "the next call tries again", and the next turn's warning advised moving the report
    # node, which is no help here: the next outcome (another turn's) was then recorded for it.
    lam, app, config, episode = _first_turn(tmp_path)
    lam.report = _store_down  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="lamar_langgraph.nodes"):
        app.invoke(Command(resume="shipped"), config)  # the graph still answers
    del lam.report
    record = f"lam.report({episode!r}, 'shipped')"
    assert record in caplog.text, caplog.text

    # The store is back as the next turn starts: its recall records the refused outcome for the episode it
    # belongs to, before the thread's next outcome (this turn's "accepted") could reach it.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = app.invoke({"messages": [HumanMessage("and the tests?")], "lamar_context": CONTEXT}, config)
        app.invoke(Command(resume="accepted"), config)
    assert lam.episode(episode).signal == "shipped"
    assert lam.episode(second["lamar_episode_id"]).signal == "accepted"


def test_a_refused_outcome_still_unrecorded_as_the_next_turn_starts_is_named_with_its_call(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lam, app, config, episode = _first_turn(tmp_path)
    lam.report = _store_down  # type: ignore[method-assign]
    with caplog.at_level("WARNING", logger="lamar_langgraph.nodes"), warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        app.invoke(Command(resume="shipped"), config)
        app.invoke({"messages": [HumanMessage("and the tests?")], "lamar_context": CONTEXT}, config)
    del lam.report
    record = f"lam.report({episode!r}, 'shipped')"
    text = " ".join(str(w.message) for w in said)
    assert record in text and "the store refused" in text, text
    assert lam.episode(episode).signal is None
