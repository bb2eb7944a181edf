"""A thread of 120 turns: its checkpoint keeps only the turns and episodes still needed, and
every episode is still reported once."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send

from lamar import Experience, ExperienceStore, Lamar, Scope
from lamar_langgraph import LamarState, recall_node, report_node
from tests.integrations.langgraph.graphs import in_line
from tests.integrations.langgraph.test_langgraph_own_outcome import Before
from tests.tools import load_tool

CONTEXT = {"project": "trace"}
TURNS = 120  # 2 episodes a turn: more than twice the KEPT reported episodes a state keeps
KEPT = 100  # reported, and open, episodes a thread's state keeps


class State(MessagesState, LamarState):
    pass


def sub_graph(lam: Lamar) -> Any:
    """A subgraph with its own recall: its turn is kept beside the parent's."""
    graph = in_line(State, ("recall", recall_node(lam)))
    return graph.compile()


def long_thread_graph(lam: Lamar, checkpointer: Any) -> Any:
    def agent(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage(f"done {len(state['messages'])}")]}

    def outcome(state: State) -> str | None:
        # Every fifth turn gets no outcome: its episodes stay pending, and the next turn's outcome is not theirs.
        asked = [m for m in state["messages"] if m.type == "human"][-1]
        return None if int(str(asked.id)[1:]) % 5 == 2 else "shipped"

    graph = in_line(State,
                    ("recall", recall_node(lam)),
                    ("sub", sub_graph(lam)),
                    ("agent", agent),
                    ("report", report_node(lam, outcome=outcome)))
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
    # This turn's two recalls (the graph's and the subgraph's): never more, however long the thread runs.
    assert max(sizes) == sizes[-1] == (2, 2)
    silent = sum(n % 5 == 2 for n in range(TURNS))
    stats = lam.stats()
    assert stats["episodes"] == 2 * TURNS and stats["reports"] == 2 * (TURNS - silent)
    assert stats["unreported"] == len(lam.pending()) == 2 * silent
    assert all(lam.episode(e).reports == 1 for e in state["lamar_episodes"])
    conn.close()


class Parent(MessagesState, LamarState, total=False):
    projects: list[str]


class Worker(LamarState, total=False):
    project: str


def _worker(lam: Lamar) -> Any:
    """A worker subgraph that recalls, works and reports inside its `Send` branch."""
    graph = in_line(Worker,
                    ("recall", recall_node(lam, context=lambda s: {"project": s["project"]})),
                    ("work", lambda state: {"lamar_outcome": "shipped"}),
                    ("report", report_node(lam)))
    return graph.compile()


def send_only_graph(lam: Lamar, checkpointer: Any, worker: bool) -> Any:
    """A parent with no recall of its own: `Send` branches recall (into a report node after the
    join, or inside a worker subgraph that reports too)."""
    def fan_out(state: Parent) -> list[Send]:
        return [Send("branch", {"project": p} if worker else {"lamar_context": {"project": p}})
                for p in state["projects"]]

    graph = StateGraph(Parent)
    graph.add_node("branch", _worker(lam) if worker else recall_node(lam))
    graph.add_conditional_edges(START, fan_out, ["branch"])
    if worker:
        graph.add_edge("branch", END)
    else:
        graph.add_node("report", report_node(lam, outcome=lambda s: "shipped"))
        graph.add_edge("branch", "report")
        graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)


@pytest.mark.parametrize("worker", [False, True], ids=["send-to-recall", "send-to-worker"])
def test_a_parent_that_recalls_only_in_send_branches_keeps_a_bounded_checkpoint(tmp_path: Path,
                                                                                 worker: bool) -> None:
    lam = Lamar(":memory:", seed=3)
    for project in ("api", "web"):
        lam.add(Experience(f"the {project} build fails", "clear the cache", scope=Scope(project=project)))
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    app = send_only_graph(lam, SqliteSaver(conn), worker)
    config = {"configurable": {"thread_id": "send"}}
    sizes = []
    for n in range(TURNS):
        state = app.invoke({"messages": [HumanMessage(f"turn {n}", id=f"m{n}")], "projects": ["api", "web"]}, config)
        assert {state["lamar_episodes"][e] for e in list(state["lamar_episodes"])[-2:]} == {"reported"}
        sizes.append(len(state["lamar_episodes"]) + len(state.get("lamar_turns", {})))
    assert max(sizes) <= KEPT  # the newest reported episodes, however long the thread runs
    stats = lam.stats()
    assert stats["episodes"] == 2 * TURNS and stats["reports"] == 2 * TURNS and stats["unreported"] == 0
    assert all(lam.episode(e).reports == 1 for e in state["lamar_episodes"])
    conn.close()


def worked_graph(lam: Lamar, schema: Any = State) -> Any:
    """recall -> agent -> report, where only the person's "that worked" is an outcome (shipped)."""
    def outcome(state: State) -> str | None:  # the last human message says how it went
        return "shipped" if state["messages"][-2].content == "that worked" else None

    graph = in_line(schema,
                    ("recall", recall_node(lam)),
                    ("agent", lambda state: {"messages": [AIMessage("done")]}),
                    ("report", report_node(lam, outcome=outcome)))
    return graph


def test_a_thread_without_outcomes_forgets_the_episodes_the_pending_policy_settled(tmp_path: Path) -> None:
    # A thread whose checkpoints predate lamar_waiting keeps its turns without an outcome open (a thread on
    # LamarState forgets them at the next turn), until the store says the pending policy settled them.
    lam = Lamar(":memory:", seed=3, pending_after=60.0)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    app = worked_graph(lam, Before).compile(checkpointer=SqliteSaver(conn))
    config = {"configurable": {"thread_id": "silent"}}
    sizes = []
    for n in range(TURNS):
        text = "that worked" if n == TURNS - 1 else f"turn {n}"
        state = app.invoke({"messages": [HumanMessage(text, id=f"m{n}")], "lamar_context": CONTEXT}, config)
        sizes.append(len(state["lamar_episodes"]))
        lam.settle_pending(now=time.time() + 120.0)  # as a cron job would, once the turn is old enough
    assert max(sizes) <= 2  # this turn's episode, and the last one while the policy has not settled it
    ids = [e.data["id"] for e in lam.store.read() if e.kind == "episode"]
    assert len(ids) == TURNS and all(lam.episode(e).reports == 1 for e in ids)
    assert [lam.episode(e).settled for e in ids[:-1]] == ["expired"] * (TURNS - 1)
    assert lam.episode(ids[-1]).signal == "shipped"  # the one outcome went to the turn it was about
    conn.close()


def counted_store(location: str) -> tuple[Any, list[int]]:
    """The store at `location`, every call to its methods (and to its lesson rows, in PostgreSQL's
    fold mode) counted as tools/langgraph_turn.py counts them for docs/speed.md."""
    turn = load_tool("langgraph_turn")
    store = ExperienceStore(location)
    calls = [0, 0]  # calls, and how deep inside one the store is now
    turn.counted(store, turn.STORE_CALLS, calls)
    rows = getattr(store, "rows", None)
    if rows is not None:
        turn.counted(rows, turn.ROW_CALLS, calls)
    return store, calls


def test_a_thread_without_outcomes_or_policy_reads_the_store_a_few_times_per_turn(
        tmp_path: Path, store_location: str) -> None:
    # Each turn asks the store once which of the thread's open episodes were settled elsewhere,
    # not once per open episode: a round trip each on PostgreSQL, a hundred a turn. A thread whose
    # checkpoints predate lamar_waiting keeps its turns without an outcome open, up to a hundred.
    store, calls = counted_store(store_location)
    lam = Lamar(store, seed=3)  # no pending_after: nothing in the store settles the turns
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    app = worked_graph(lam, Before).compile(checkpointer=SqliteSaver(conn))
    config = {"configurable": {"thread_id": "open"}}
    per_turn, sizes = [], []
    for n in range(KEPT + 10):
        before = calls[0]
        state = app.invoke({"messages": [HumanMessage(f"turn {n}", id=f"m{n}")], "lamar_context": CONTEXT}, config)
        per_turn.append(calls[0] - before)
        sizes.append(len(state["lamar_episodes"]))
    # As many store calls with 100 open episodes in the state as with one.
    assert max(sizes) == KEPT and max(per_turn[KEPT:]) <= per_turn[1] <= 6
    with pytest.warns(UserWarning, match="missing from lamar_waiting"):
        app.invoke({"messages": [HumanMessage("that worked", id="last")], "lamar_context": CONTEXT}, config)
    ids = [e.data["id"] for e in lam.store.read() if e.kind == "episode"]
    reported = [e for e in ids if lam.episode(e).reports]
    assert reported == ids[-KEPT:] and all(lam.episode(e).reports == 1 for e in reported)
    assert [p.episode_id for p in lam.pending()] == ids[:-KEPT]  # left to the store's pending policy
    lam.close()
    conn.close()
