"""What a developer meets on a first day with the nodes: an outcome spelt as the docs spell it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from lamar import Experience, Lamar, Scope, Signal
from lamar_langgraph import LamarState, recall_node, report_node

CONTEXT = {"project": "trace"}


@pytest.fixture
def lam(tmp_path: Path) -> Any:
    engine = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    engine.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    yield engine
    engine.close()


def _graph(lam: Lamar, schema: Any, middle: Any) -> StateGraph[Any]:
    graph: StateGraph[Any] = StateGraph(schema)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("middle", middle)
    graph.add_node("report", report_node(lam))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "middle")
    graph.add_edge("middle", "report")
    graph.add_edge("report", END)
    return graph


class State(MessagesState, LamarState):
    pass


@pytest.mark.parametrize("answer", ["re-asked", "Re-asked", "re_asked", "re asked"])
def test_a_review_answered_re_asked_as_the_docs_spell_it_is_reported(lam: Lamar, tmp_path: Path,
                                                                      answer: str) -> None:
    def review(state: State) -> dict[str, Any]:
        return {"lamar_outcome": interrupt("how did the user react?")}

    conn = sqlite3.connect(tmp_path / "threads.db", check_same_thread=False)
    app = _graph(lam, State, review).compile(checkpointer=SqliteSaver(conn))
    config: Any = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": [HumanMessage("it broke")], "lamar_context": CONTEXT}, config)
    app.invoke(Command(resume=answer), config)
    assert lam.episode(out["lamar_episode_id"]).signal == Signal.REASKED.value
    assert lam.pending() == []
    conn.close()


def test_the_engine_and_the_cli_take_the_same_spelling(lam: Lamar, tmp_path: Path) -> None:
    rec = lam.recall(CONTEXT)
    lam.report(rec.episode_id, "re-asked")
    assert lam.episode(rec.episode_id).reward == Signal.REASKED.reward
    later = lam.recall(CONTEXT).episode_id
    lam.close()
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(tmp_path / "lessons.db"), "report", later,
                           "Re-asked"], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert Lamar(str(tmp_path / "lessons.db")).episode(later).signal == Signal.REASKED.value
