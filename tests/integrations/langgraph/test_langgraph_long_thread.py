"""A thread of 200 turns: its checkpoint keeps only the turns and episodes still needed, and
every episode is still reported once."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from lamar import Experience, Lamar, Scope
from lamar_langgraph import LamarState, recall_node, report_node

CONTEXT = {"project": "trace"}
TURNS = 200


class State(MessagesState, LamarState):
    pass


def sub_graph(lam: Lamar) -> Any:
    """A subgraph with its own recall: its turn is kept beside the parent's."""
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", END)
    return graph.compile()


def long_thread_graph(lam: Lamar, checkpointer: Any) -> Any:
    def agent(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"done {len(state['messages'])}")]}

    def outcome(state: State) -> str | None:
        # Every fifth turn gets no outcome of its own: its episodes wait for the next one.
        asked = [m for m in state["messages"] if m.type == "human"][-1]
        return None if int(str(asked.id)[1:]) % 5 == 2 else "shipped"

    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("sub", sub_graph(lam))
    graph.add_node("agent", agent)
    graph.add_node("report", report_node(lam, outcome=outcome))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "sub")
    graph.add_edge("sub", "agent")
    graph.add_edge("agent", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)


def test_a_long_threads_checkpoint_stays_bounded_and_every_episode_is_reported_once(tmp_path: Path) -> None:
    lam = Lamar(":memory:", seed=3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    app = long_thread_graph(lam, SqliteSaver(conn))
    config = {"configurable": {"thread_id": "long"}}
    sizes = []
    for n in range(TURNS):
        state = app.invoke({"messages": [HumanMessage(f"turn {n}", id=f"m{n}")], "lamar_context": CONTEXT}, config)
        if n % 50 == 7:  # the thread run again without a new message: the turn keeps its episodes
            again = app.invoke({"lamar_context": CONTEXT}, config)
            assert again["lamar_turns"] == state["lamar_turns"]
        sizes.append((len(state["lamar_turns"]), len(state["lamar_episodes"])))
    # This turn's two recalls (the graph's and the subgraph's), plus an earlier turn's two
    # while they wait for an outcome: never more, however long the thread runs.
    assert max(turns for turns, _ in sizes) <= 4 and max(episodes for _, episodes in sizes) <= 4
    assert sizes[-1] == (2, 2)
    stats = lam.stats()
    assert stats["episodes"] == 2 * TURNS and stats["reports"] == 2 * TURNS and stats["unreported"] == 0
    assert all(lam.episode(e).reports == 1 for e in state["lamar_episodes"])
    conn.close()
