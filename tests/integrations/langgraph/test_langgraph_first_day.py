"""What a developer meets on a first day with the nodes: an outcome spelt as the docs spell it, and a
state schema that leaves out LamarState's keys."""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt
from pydantic import BaseModel

from lamar import Experience, Lamar, Scope, Signal, UnknownEpisode
from lamar_langgraph import LamarState, recall_node, report_node

CONTEXT = {"project": "trace"}


@pytest.fixture
def lam(tmp_path: Path) -> Any:
    engine = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    engine.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    yield engine
    engine.close()


def _graph(lam: Lamar, schema: Any, middle: Any, context: Any = None) -> StateGraph[Any]:
    """recall -> middle -> report, the layout of the docs' first example."""
    graph: StateGraph[Any] = StateGraph(schema)
    graph.add_node("recall", recall_node(lam, context=context))
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


class Bare(MessagesState):  # the keys the app writes, without LamarState's bookkeeping
    lamar_context: dict[str, str]
    lamar_prompt: str
    lamar_outcome: str


class Model(BaseModel):
    lamar_context: dict[str, str] = {}
    lamar_prompt: str = ""
    lamar_outcome: str | None = None


@dataclasses.dataclass
class Record:
    lamar_context: dict[str, str] = dataclasses.field(default_factory=dict)
    lamar_prompt: str = ""
    lamar_outcome: str | None = None


@pytest.mark.parametrize("schema", [Bare, Model, Record], ids=["typeddict", "pydantic", "dataclass"])
def test_a_state_without_lamar_state_warns_that_the_outcome_reached_no_episode(lam: Lamar, schema: Any) -> None:
    # LangGraph drops the recall's episode keys that the schema does not declare: the outcome then
    # finds no episode, and the episode would stay pending without a word.
    app = _graph(lam, schema, lambda state: {"lamar_outcome": "shipped"}).compile()
    said = _warned(app, {"messages": [HumanMessage("it broke")], "lamar_context": CONTEXT} if schema is Bare
                   else {"lamar_context": CONTEXT})
    assert len(lam.pending()) == 1
    assert len(said) == 1 and "Mix LamarState into the graph's state" in said[0] and "'shipped'" in said[0]


def test_a_state_with_lamar_state_reports_without_that_warning(lam: Lamar) -> None:
    app = _graph(lam, State, lambda state: {"lamar_outcome": "shipped"}).compile()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = app.invoke({"messages": [HumanMessage("it broke")], "lamar_context": CONTEXT})
    assert lam.episode(out["lamar_episode_id"]).signal == "shipped"


def test_the_cli_on_a_langgraph_sqlite_store_says_how_to_reach_its_lessons(tmp_path: Path) -> None:
    from langgraph.store.sqlite import SqliteStore

    from lamar import ExperienceStore
    from lamar.store.transfer import transfer
    from lamar_langgraph import LangGraphStore

    path = tmp_path / "app-store.db"
    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30))
    store.setup()
    Lamar(LangGraphStore(store, namespace=("lamar", "prod"))).add(Experience("the build fails", "read the first error"))
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(path), "ls"], check=False,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "It looks like a LangGraph SqliteStore" in done.stderr and "transfer(LangGraphStore(store" in done.stderr
    # what it says to do works, and the file was left as it was
    transfer(LangGraphStore(store, namespace=("lamar", "prod")), ExperienceStore(str(tmp_path / "copy.db")))
    listed = subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(tmp_path / "copy.db"), "ls"],
                            check=False, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "read the first error" in listed.stdout
    names = {row[0] for row in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert names == {"store", "store_migrations"}


def test_the_whole_state_passed_to_report_is_told_its_episode(lam: Lamar) -> None:
    app = _graph(lam, State, lambda state: {}).compile()
    state = app.invoke({"messages": [HumanMessage("it broke")], "lamar_context": CONTEXT})
    for call in (lambda: lam.report(state, "shipped"), lambda: lam.episode(state)):
        said = f"pass the state's lamar_episode_id \\('{state['lamar_episode_id']}'\\)"
        with pytest.raises(UnknownEpisode, match=said):
            call()
    lam.report(state["lamar_episode_id"], "shipped")
    assert lam.pending() == []


def test_the_result_of_a_v2_invoke_passed_to_report_is_told_its_episode(lam: Lamar) -> None:
    # invoke(..., version="v2") returns a GraphOutput, the state in its `value`: passed whole, it was
    # refused as an id the store does not hold (its whole repr), naming no episode.
    app = _graph(lam, State, lambda state: {}).compile()
    out = app.invoke({"messages": [HumanMessage("it broke")], "lamar_context": CONTEXT}, version="v2")
    episode = out.value["lamar_episode_id"]
    for call in (lambda: lam.report(out, "shipped"), lambda: lam.episode(out)):
        said = f"pass the result's value\\['lamar_episode_id'\\] \\('{episode}'\\)"
        with pytest.raises(UnknownEpisode, match=said):
            call()
    lam.report(episode, "shipped")
    assert lam.pending() == []

def test_a_signal_written_to_the_state_is_checkpointed_as_its_name(lam: Lamar, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    # The docs and the report node take a Signal; LangGraph's serializer reads an enum of another package
    # back with "Deserializing unregistered type lamar.signals.Signal" (blocked under LANGGRAPH_STRICT_MSGPACK).
    def judge(state: State) -> dict[str, Any]:
        return {"lamar_outcome": Signal.SHIPPED}

    def pause(state: State) -> dict[str, Any]:
        interrupt("anything to add?")
        return {}

    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("judge", judge)
    graph.add_node("pause", pause)  # the run stops here with the Signal in its checkpoint
    graph.add_node("report", report_node(lam))
    for a, b in [(START, "recall"), ("recall", "judge"), ("judge", "pause"), ("pause", "report"), ("report", END)]:
        graph.add_edge(a, b)
    path = tmp_path / "threads.db"
    config: Any = {"configurable": {"thread_id": "t"}}
    first = sqlite3.connect(path, check_same_thread=False)
    out = graph.compile(checkpointer=SqliteSaver(first)).invoke(
        {"messages": [HumanMessage("it broke")], "lamar_context": CONTEXT}, config)
    later = sqlite3.connect(path, check_same_thread=False)  # another process reads the thread back
    app = graph.compile(checkpointer=SqliteSaver(later))
    with caplog.at_level("WARNING"):
        stored = app.get_state(config).values["lamar_outcome"]
        app.invoke(Command(resume="no"), config)
    assert type(stored) is str and stored == "shipped"
    assert not [r for r in caplog.records if "lamar.signals" in r.getMessage()]
    assert lam.episode(out["lamar_episode_id"]).signal == "shipped"
    first.close()
    later.close()


@pytest.mark.parametrize("strict", [False, True])
def test_a_signal_written_beside_an_interrupt_is_read_back_without_a_warning(
        lam: Lamar, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
        strict: bool) -> None:
    # A judge in the same step as a node that interrupts: LangGraph keeps the judge's write as it was written, in
    # the checkpoint the thread resumes from, so no reducer turns the Signal into its name. Read back elsewhere, the
    # serializer warns of a class missing from its safe list (strict: blocks it, to its value, the name Lamar reads).
    from langgraph.checkpoint.serde import jsonplus

    monkeypatch.setattr(jsonplus, "_warned_unregistered_types", set())  # it warns once per process
    monkeypatch.setattr(jsonplus, "_warned_blocked_types", set())
    serde = jsonplus.JsonPlusSerializer(allowed_msgpack_modules=None if strict else True)

    def pause(state: State) -> dict[str, Any]:
        interrupt("merge it?")
        return {}

    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("judge", lambda state: {"lamar_outcome": Signal.SHIPPED})
    graph.add_node("pause", pause)
    graph.add_node("report", report_node(lam))
    for a, b in [(START, "recall"), ("recall", "judge"), ("recall", "pause"), ("report", END)]:
        graph.add_edge(a, b)
    graph.add_edge(["judge", "pause"], "report")
    path, config = tmp_path / "threads.db", {"configurable": {"thread_id": "t"}}
    with sqlite3.connect(path, check_same_thread=False) as first:
        out = graph.compile(checkpointer=SqliteSaver(first, serde=serde)).invoke(
            {"messages": [HumanMessage("it broke")], "lamar_context": CONTEXT}, config)
    with sqlite3.connect(path, check_same_thread=False) as later, caplog.at_level("WARNING"):
        graph.compile(checkpointer=SqliteSaver(later, serde=serde)).invoke(Command(resume="yes"), config)
    assert not [r.getMessage() for r in caplog.records if "lamar.signals" in r.getMessage()]
    assert lam.episode(out["lamar_episode_id"]).signal == "shipped"


class Plain(MessagesState):  # LamarState forgotten altogether: even the judge's outcome is dropped
    pass


def _warned(app: Any, value: Any, config: Any = None) -> list[str]:
    """The UserWarnings one run of `app` gives, each as its message."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        app.invoke(value, config)
    return [str(w.message) for w in seen if issubclass(w.category, UserWarning)]


def test_a_schema_without_any_of_lamars_keys_is_told_so_in_a_checkpointed_thread(lam: Lamar) -> None:
    # Without lamar_outcome in the schema the report node sees no outcome, so the warning above never
    # came: every turn's episode stayed pending and the model got no lessons, without a word.
    judged = _graph(lam, Plain, lambda state: {"lamar_outcome": "shipped"}, context=CONTEXT)
    app = judged.compile(checkpointer=InMemorySaver())
    told = [_warned(app, {"messages": [HumanMessage(turn)]}, {"configurable": {"thread_id": thread}})
            for thread, turn in (("plain", "it broke"), ("plain", "it broke again"), ("other", "it broke"))]
    assert [len(said) for said in told] == [1, 0, 1], told  # once a thread, on its first turn already
    assert "Mix LamarState into the graph's state" in told[0][0] and "stay pending" in told[0][0]
    assert len(lam.pending()) == 3


def test_a_thread_with_lamar_state_is_not_told_so_whatever_the_layout(lam: Lamar) -> None:
    # The report node first (the outcome comes with the next message) meets a state without
    # Lamar's keys on the thread's first turn, before any recall: that is no dropped key.
    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("report", report_node(lam))
    graph.add_node("recall", recall_node(lam, context=CONTEXT))
    graph.add_edge(START, "report")
    graph.add_edge("report", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "first"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        app.invoke({"messages": [HumanMessage("it broke")]}, config)
        app.invoke({"messages": [HumanMessage("that broke it")], "lamar_outcome": "corrected"}, config)
    assert len(lam.pending()) == 1


def test_a_subgraph_that_recalls_and_reports_inside_a_parent_without_lamar_state_is_not_told_so(
        lam: Lamar) -> None:
    # The subgraph's own state holds the keys for its run; its parent need not keep them across turns.
    inner = _graph(lam, State, lambda state: {"lamar_outcome": "shipped"}, context=CONTEXT)
    outer: StateGraph[Any] = StateGraph(Plain)
    outer.add_node("worker", inner.compile())
    outer.add_edge(START, "worker")
    outer.add_edge("worker", END)
    app = outer.compile(checkpointer=InMemorySaver())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for turn in ("it broke", "it broke again"):
            app.invoke({"messages": [HumanMessage(turn)]}, {"configurable": {"thread_id": "sub"}})
    assert lam.pending() == []


def test_an_outcome_sent_with_the_next_message_past_a_recall_first_graph_is_recorded_for_the_turn_before(
        lam: Lamar) -> None:
    # The natural "that broke it" on the next message, in the layout of the docs' first example
    # (recall -> agent -> report): the new turn's recall cleared the outcome before the report node
    # ran, and both turns' episodes stayed pending (later: with a warning). The recall node records it
    # for the open episode it speaks of before it clears it.
    agent = lambda state: {"messages": [("ai", "done")]}
    app = _graph(lam, State, agent, context=CONTEXT).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "next"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = app.invoke({"messages": [HumanMessage("fix the build")]}, config)
        second = app.invoke({"messages": [HumanMessage("that broke it")], "lamar_outcome": "corrected"}, config)
    assert lam.episode(first["lamar_episode_id"]).signal == "corrected"
    assert [p.episode_id for p in lam.pending()] == [second["lamar_episode_id"]]



def test_a_next_message_outcome_that_is_none_is_cleared_with_a_warning_that_says_so(lam: Lamar) -> None:
    agent = lambda state: {"messages": [("ai", "done")]}
    app = _graph(lam, State, agent, context=CONTEXT).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "typo"}}
    first = app.invoke({"messages": [HumanMessage("fix the build")]}, config)
    said = _warned(app, {"messages": [HumanMessage("that broke it")], "lamar_outcome": "broke"}, config)
    assert len(said) == 1 and "'broke', which is not an outcome" in said[0], said
    assert first["lamar_episode_id"] in said[0] and "lam.report(" not in said[0]  # no call that would fail too
    assert len(lam.pending()) == 2

def test_an_outcome_reported_in_its_own_turn_is_cleared_quietly_by_the_next(lam: Lamar) -> None:
    app = _graph(lam, State, lambda state: {"lamar_outcome": "shipped"}).compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "judged"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for turn in ("it broke", "it broke again"):
            app.invoke({"messages": [HumanMessage(turn)], "lamar_context": CONTEXT}, config)
    assert lam.pending() == []


def test_send_branches_and_an_episode_reported_elsewhere_are_not_told_so(lam: Lamar) -> None:
    # A Send's task gets the Send's payload, not the thread's state: no keys of the thread is no
    # dropped key. An episode open in the state that the app reported meanwhile waits for nothing.
    from langgraph.types import Send

    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("agent", lambda state: {"messages": [("ai", "done")]})
    graph.add_conditional_edges(START, lambda state: [Send("recall", {"lamar_context": CONTEXT})], ["recall"])
    graph.add_edge("recall", "agent")
    graph.add_edge("agent", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "fan"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = app.invoke({"messages": [HumanMessage("fix the build")]}, config)
        for episode in first["lamar_episodes"]:
            lam.report(episode, Signal.SHIPPED)  # the app, from outside the graph
        app.invoke({"messages": [HumanMessage("and the tests")], "lamar_outcome": "shipped"}, config)
    assert len(lam.pending()) == 1


def test_a_schema_without_any_of_lamars_keys_is_told_so_once_without_a_checkpointer(lam: Lamar) -> None:
    # Compiled without a checkpointer a run has no thread: the keys the recall node wrote were
    # dropped before the report node, every episode stayed pending and nothing was said.
    app = _graph(lam, Plain, lambda state: {"lamar_outcome": "shipped"}, context=CONTEXT).compile()
    told = [_warned(app, {"messages": [HumanMessage(turn)]}) for turn in ("it broke", "it broke again")]
    assert [len(said) for said in told] == [1, 0], told  # once, on the first run already
    assert "Mix LamarState into the graph's state" in told[0][0] and "stay pending" in told[0][0]
    assert len(lam.pending()) == 2


def test_a_run_without_a_checkpointer_that_reports_before_it_recalls_is_not_told_so(lam: Lamar) -> None:
    # The report node first meets no keys in a run before its recall: that is no dropped key.
    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("report", report_node(lam))
    graph.add_node("recall", recall_node(lam, context=CONTEXT))
    graph.add_node("agent", lambda state: {"messages": [("ai", state["lamar_prompt"] or "no lessons")]})
    graph.add_edge(START, "report")
    graph.add_edge("report", "recall")
    graph.add_edge("recall", "agent")
    graph.add_edge("agent", END)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = graph.compile().invoke({"messages": [HumanMessage("it broke")]})
    assert "clear the cache" in out["messages"][-1].content
    assert [p.episode_id for p in lam.pending()] == [out["lamar_episode_id"]]
