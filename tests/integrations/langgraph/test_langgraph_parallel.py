"""recall_node and report_node under LangGraph's parallel patterns: two recalls in one step,
`Send` fan-out, map-reduce over a worker subgraph, and a subgraph inside a turn."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import RetryPolicy, Send

from lamar import Experience, Lamar, Scope
from lamar_langgraph import LamarState, recall_node, report_node
from tests.integrations.langgraph.graphs import in_line


def engine() -> Lamar:
    lam = Lamar(":memory:", k=2, seed=5, holdout=1e-9)
    for project in ("api", "web", "app"):
        lam.add(Experience(f"the {project} build fails", f"clear the {project} cache", scope=Scope(project=project)))
    return lam


class State(LamarState, total=False):
    projects: list[str]
    results: Annotated[list[str], operator.add]


def test_two_recall_nodes_in_one_step_each_get_an_episode() -> None:
    lam = engine()
    graph = StateGraph(State)
    graph.add_node("api", recall_node(lam, context={"project": "api"}, name="recall_api"))
    graph.add_node("web", recall_node(lam, context={"project": "web"}, name="recall_web"))
    graph.add_node("report", report_node(lam))
    graph.add_edge(START, "api")
    graph.add_edge(START, "web")
    graph.add_edge(["api", "web"], "report")
    graph.add_edge("report", END)
    out = graph.compile().invoke({"lamar_outcome": "shipped"})
    # recall clears the outcome; the report node sees none, so both episodes stay open
    assert sorted(lam.episode(e).context["project"] for e in out["lamar_episodes"]) == ["api", "web"]
    assert set(out["lamar_episodes"].values()) == {"open"}
    assert out["lamar_episode_id"] in out["lamar_episodes"]


def fan_out(state: State) -> list[Send]:
    return [Send("recall", {"lamar_context": {"project": p}}) for p in state["projects"]]


def test_send_fan_out_gives_each_branch_its_own_reportable_episode() -> None:
    lam = engine()
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("decide", lambda state: {"lamar_outcome": "accepted"})
    graph.add_node("report", report_node(lam))
    graph.add_conditional_edges(START, fan_out, ["recall"])
    graph.add_edge("recall", "decide")
    graph.add_edge("decide", "report")
    graph.add_edge("report", END)
    out = graph.compile().invoke({"projects": ["api", "web", "app"]})
    episodes = list(out["lamar_episodes"])
    assert len(episodes) == 3
    assert sorted(lam.episode(e).context["project"] for e in episodes) == ["api", "app", "web"]
    assert set(out["lamar_episodes"].values()) == {"reported"}
    assert [lam.episode(e).signal for e in episodes] == ["accepted"] * 3
    assert lam.pending() == []


def test_a_send_fan_out_wider_than_a_hundred_branches_is_reported_whole() -> None:
    # A thread keeps at most 100 open episodes from turn to turn; one turn's 150 branches, each
    # merged into the parent's state, must not push its own oldest branches out before the report.
    lam = engine()
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("report", report_node(lam, outcome=lambda s: "accepted"))
    graph.add_conditional_edges(START, fan_out, ["recall"])
    graph.add_edge("recall", "report")
    graph.add_edge("report", END)
    app = graph.compile(checkpointer=InMemorySaver())
    out = app.invoke({"projects": ["api", "web", "app"] * 50}, {"configurable": {"thread_id": "wide"}})
    assert lam.stats()["episodes"] == 150 and lam.pending() == []
    assert lam.stats()["reports"] == 150 and list(out["lamar_episodes"].values()) == ["reported"] * 100


class WorkerState(LamarState, total=False):
    project: str
    results: Annotated[list[str], operator.add]


def _work(state: WorkerState) -> dict[str, Any]:
    """The web project's work is broken and reverted; the others' ships."""
    good = state["project"] != "web"
    return {"results": [f"{state['project']}:{'ok' if good else 'broken'}"],
            "lamar_outcome": "shipped" if good else "reverted"}


def worker_graph(lam: Lamar, work: Callable[[WorkerState], dict[str, Any]] = _work) -> Any:
    """recall -> work -> report, each branch with its own outcome."""
    graph = in_line(WorkerState,
                    ("recall", recall_node(lam, context=lambda s: {"project": s["project"]})),
                    ("work", work),
                    ("report", report_node(lam)))
    return graph.compile()


def test_map_reduce_over_a_worker_subgraph_reports_each_branch() -> None:
    lam = engine()
    graph = StateGraph(State)
    graph.add_node("worker", worker_graph(lam))
    graph.add_node("reduce", lambda state: {"results": [f"{len(state['results'])} done"]})
    graph.add_conditional_edges(START, lambda s: [Send("worker", {"project": p}) for p in s["projects"]],
                                ["worker"])
    graph.add_edge("worker", "reduce")
    graph.add_edge("reduce", END)
    out = graph.compile().invoke({"projects": ["api", "web", "app"]})
    assert out["results"][-1] == "3 done"
    signals = {lam.episode(e).context["project"]: lam.episode(e).signal for e in out["lamar_episodes"]}
    assert signals == {"api": "shipped", "web": "reverted", "app": "shipped"}
    assert set(out["lamar_episodes"].values()) == {"reported"} and lam.pending() == []


class Chat(MessagesState, LamarState):
    pass


def _recall_then_subgraph(lam: Lamar) -> StateGraph:
    """START -> a recall node (project api) -> a subgraph holding its own recall node (project web)."""
    sub = in_line(Chat, ("recall", recall_node(lam, context={"project": "web"})))
    graph = StateGraph(Chat)
    graph.add_node("recall", recall_node(lam, context={"project": "api"}))
    graph.add_node("sub", sub.compile())
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "sub")
    return graph


def test_a_subgraph_in_the_same_turn_gets_its_own_episode() -> None:
    lam = engine()
    graph = _recall_then_subgraph(lam)
    graph.add_node("report", report_node(lam))
    graph.add_edge("sub", "report")
    graph.add_edge("report", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"messages": [HumanMessage("ship it", id="m1")]}, config)
    projects = sorted(lam.episode(e).context["project"] for e in out["lamar_episodes"])
    assert projects == ["api", "web"]
    # the outcome arrives with the next message: both episodes of the turn are reported
    app.update_state(config, {"lamar_outcome": "shipped"}, as_node="sub")
    final = app.invoke(None, config)
    assert set(final["lamar_episodes"].values()) == {"reported"} and lam.pending() == []


def test_a_thread_with_a_subgraph_recalls_each_turn_once_when_run_again_or_looping_back() -> None:
    lam = engine()
    graph = _recall_then_subgraph(lam)
    graph.add_node("agent", lambda state: {"messages": [("ai", "again")]})
    graph.add_edge("sub", "agent")
    graph.add_conditional_edges("agent", lambda s: "recall" if len(s["messages"]) < 3 else END, ["recall", END])
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    first = app.invoke({"messages": [HumanMessage("ship it", id="m1")]}, config)  # loops back once
    again = app.invoke({}, config)  # the thread run again, no new human message
    assert len(first["lamar_episodes"]) == len(again["lamar_episodes"]) == 2
    assert len(lam.pending()) == 2


def test_a_store_that_cannot_be_written_costs_the_lessons_not_the_run(tmp_path: Any) -> None:
    import sqlite3

    from lamar.store.sqlite import SqliteStore

    path = tmp_path / "s.db"
    lam = Lamar(SqliteStore(path, timeout=0.05), seed=1)
    lam.add(Experience("the api build fails", "clear the api cache", scope=Scope(project="api")))
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam, context={"project": "api"}))
    graph.add_node("answer", lambda state: {"results": [f"prompt={state.get('lamar_prompt')!r}"],
                                            "lamar_outcome": "shipped"})
    graph.add_node("report", report_node(lam))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "answer")
    graph.add_edge("answer", "report")
    graph.add_edge("report", END)
    app = graph.compile()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        out = app.invoke({"projects": []})
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert out["results"] == ["prompt=''"] and out.get("lamar_episode_id") is None
    assert lam.stats()["episodes"] == 0
    # once the store is writable, the next run recalls and reports as usual
    again = app.invoke({"projects": []})
    assert set(again["lamar_episodes"].values()) == {"reported"} and lam.pending() == []


def test_a_report_the_store_refuses_leaves_the_episode_open(tmp_path: Any) -> None:
    import sqlite3

    from lamar.store.sqlite import SqliteStore

    path = tmp_path / "s.db"
    lam = Lamar(SqliteStore(path, timeout=0.05), seed=1)
    lam.add(Experience("the api build fails", "clear the api cache", scope=Scope(project="api")))
    locks: list[sqlite3.Connection] = []

    def answer(state: State) -> dict[str, Any]:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN EXCLUSIVE")  # the store becomes unwritable between recall and report
        locks.append(other)
        return {"lamar_outcome": "shipped"}

    graph = in_line(State,
                    ("recall", recall_node(lam, context={"project": "api"})),
                    ("answer", answer),
                    ("report", report_node(lam)))
    try:
        out = graph.compile().invoke({"projects": []})
    finally:
        for other in locks:
            other.execute("ROLLBACK")
            other.close()
    assert list(out["lamar_episodes"].values()) == ["open"]
    assert [p.episode_id for p in lam.pending()] == list(out["lamar_episodes"])


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_worker_subgraph_retried_by_a_retry_policy_keeps_one_episode_per_branch(mode: str) -> None:
    # LangGraph runs a retried subgraph again from its start, recall node included, and the
    # failed attempt's state is gone: the retry must take over its episode, not leave it pending.
    lam = engine()
    failed: set[str] = set()

    def flaky(state: WorkerState) -> dict[str, Any]:
        if state["project"] not in failed:
            failed.add(state["project"])
            raise ConnectionError("the model timed out")
        return {"results": [state["project"]], "lamar_outcome": "shipped"}

    graph = StateGraph(State)
    graph.add_node("worker", worker_graph(lam, flaky), retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01))
    graph.add_conditional_edges(START, lambda s: [Send("worker", {"project": p}) for p in s["projects"]],
                                ["worker"])
    graph.add_edge("worker", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "retried"}}
    start = {"projects": ["api", "web", "app"]}
    out = await app.ainvoke(start, config) if mode == "ainvoke" else app.invoke(start, config)
    assert sorted(out["results"]) == ["api", "app", "web"]
    assert lam.stats()["episodes"] == 3 and lam.pending() == []
    assert set(out["lamar_episodes"].values()) == {"reported"} and len(out["lamar_episodes"]) == 3


class BranchState(MessagesState, LamarState, total=False):
    seen: Annotated[list[str], operator.add]


@pytest.mark.parametrize("shape", ["one-subgraph-added-twice", "send-fan-out"])
@pytest.mark.parametrize("turn", ["none", "a-human-message"])
def test_two_branches_alike_inside_a_retried_subgraph_keep_their_own_episodes(shape: str, turn: str) -> None:
    # Both branches recall for the same context in the same turn; the retry of the subgraph
    # around them must hand each its own earlier episode, not one episode to both.
    lam = engine()
    branch = in_line(BranchState,
                     ("recall", recall_node(lam, context={"project": "api"})),
                     ("note", lambda state: {"seen": [state["lamar_episode_id"]]}))
    compiled = branch.compile()
    failed: list[int] = []

    def flaky(state: BranchState) -> dict[str, Any]:
        if not failed:
            failed.append(1)
            raise ConnectionError("the model timed out")
        return {}

    outer = StateGraph(BranchState)
    outer.add_node("flaky", flaky)
    if shape == "send-fan-out":
        outer.add_node("a", compiled)
        outer.add_conditional_edges(START, lambda state: [Send("a", dict(state)), Send("a", dict(state))], ["a"])
        outer.add_edge("a", "flaky")
    else:
        outer.add_node("a", compiled)
        outer.add_node("b", compiled)
        outer.add_edge(START, "a")
        outer.add_edge(START, "b")
        outer.add_edge(["a", "b"], "flaky")
    outer.add_edge("flaky", END)
    graph = StateGraph(BranchState)
    graph.add_node("outer", outer.compile(), retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01))
    graph.add_edge(START, "outer")
    graph.add_edge("outer", END)
    start = {"messages": [HumanMessage("ship it", id="m1")]} if turn == "a-human-message" else {}
    out = graph.compile(checkpointer=InMemorySaver()).invoke(start, {"configurable": {"thread_id": "alike"}})
    assert len(out["seen"]) == 2 and len(set(out["seen"])) == 2  # one episode each, none shared
    assert lam.stats()["episodes"] == 2  # the retry took over the failed attempt's two
    assert sorted(p.episode_id for p in lam.pending()) == sorted(out["seen"])


class Turns(MessagesState, LamarState, total=False):
    verdict: str | None


@pytest.mark.parametrize("payload", ["context alone", "with the parent's state", "with its turn"])
def test_send_branches_given_the_parents_state_leave_a_silent_turn_without_the_next_ones_outcome(
        payload: str, tmp_path: Any) -> None:
    """A parent whose recalls all run in `Send` branches has no recall of its own to start a turn: branches sent
    the context alone leave a silent turn's episodes open for the next turn's outcome; branches sent the parent's
    state start the turn as a recall in the parent does, and leave them pending in the store."""
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.sqlite import SqliteStore

    from lamar_langgraph import LangGraphStore

    conn = sqlite3.connect(tmp_path / "lg.db", check_same_thread=False, isolation_level=None)
    base = SqliteStore(conn)
    base.setup()
    lam = Lamar(LangGraphStore(base), k=2, seed=5, holdout=1e-9)
    for project in ("api", "web"):
        lam.add(Experience(f"the {project} build fails", f"clear the {project} cache", scope=Scope(project=project)))

    def fan(state: Turns) -> list[Send]:
        given = dict(state) if payload == "with the parent's state" else {}
        if payload == "with its turn":  # what marks the turn alone: Lamar's keys and the person's message
            given = {**{k: v for k, v in state.items() if k.startswith("lamar_")}, "messages": state["messages"][-1:]}
        return [Send("recall", {**given, "lamar_context": {"project": p}}) for p in ("api", "web")]

    graph = StateGraph(Turns)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("work", lambda state: {"lamar_outcome": state.get("verdict")})
    graph.add_node("report", report_node(lam))
    graph.add_conditional_edges(START, fan, ["recall"])
    graph.add_edge("recall", "work")
    graph.add_edge("work", "report")
    graph.add_edge("report", END)
    with SqliteSaver.from_conn_string(str(tmp_path / "threads.db")) as saver:
        app = graph.compile(checkpointer=saver)
        thread = {"configurable": {"thread_id": "t"}}
        silent = list(app.invoke({"messages": [HumanMessage("one", id="m1")], "verdict": None}, thread)
                      ["lamar_episodes"])
        out = app.invoke({"messages": [HumanMessage("two", id="m2")], "verdict": "shipped"}, thread)
    this_turn = [e for e in out["lamar_episodes"] if e not in silent]
    assert len(silent) == 2 and len(this_turn) == 2
    assert [lam.episode(e).signal for e in this_turn] == ["shipped", "shipped"]
    if payload == "context alone":  # what docs/langgraph.md says of this pattern: the next turn's outcome
        assert [lam.episode(e).signal for e in silent] == ["shipped", "shipped"]
    else:  # the branches of the new turn forget the silent one's episodes, which stay pending in the store
        assert [lam.episode(e).signal for e in silent] == [None, None]
        assert sorted(p.episode_id for p in lam.pending()) == sorted(silent)
        assert set(out["lamar_episodes"]) == set(this_turn)
    lam.close()
    conn.close()
