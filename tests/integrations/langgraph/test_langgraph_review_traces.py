"""A thread reviewed through `interrupt` traced by LamarCallbackHandler: the run that stopped and the
resume are one session to sleep, whose question is what the user asked, not the reviewer's answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from lamar import Experience, Lamar, Scope
from lamar.models import ScriptedModel
from lamar.sleep.traces import load_traces
from lamar_langchain import LamarCallbackHandler
from lamar_langgraph import LamarState, recall_node, report_node

from .conftest import Savers

CONTEXT = {"project": "trace"}


class State(MessagesState, LamarState):
    pass


def _reviewed(lam: Lamar, saver: Any) -> Any:
    """recall -> agent -> a person's verdict (interrupt) -> report."""
    graph: StateGraph[Any] = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("agent", lambda state: {"messages": [AIMessage("Cleared the cache; the build passes.")]})
    graph.add_node("review", lambda state: {"lamar_outcome": interrupt({"answer": state["messages"][-1].text})})
    graph.add_node("report", report_node(lam))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "agent")
    graph.add_edge("agent", "review")
    graph.add_edge("review", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=saver)


def _session(lam: Lamar, savers: Savers, path: Path, thread: str, *, same_handler: bool) -> str:
    """Ask, then resume with the reviewer's answer (in another process when not `same_handler`)."""
    first = LamarCallbackHandler(lam, trace_path=str(path))
    config: Any = {"configurable": {"thread_id": thread}, "callbacks": [first]}
    out = _reviewed(lam, savers()).invoke({"messages": [HumanMessage("the build broke after a bump")],
                                           "lamar_context": CONTEXT}, config)
    first.flush()
    second = first if same_handler else LamarCallbackHandler(lam, trace_path=str(path))
    _reviewed(lam, savers()).invoke(Command(resume="reverted"), {**config, "callbacks": [second]})
    second.flush()
    return str(out["lamar_episode_id"])


def _engine(tmp_path: Path) -> Lamar:
    lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    return lam


def test_a_resumed_review_is_traced_with_the_question_not_the_answer(tmp_path: Path, savers: Savers) -> None:
    lam, path = _engine(tmp_path), tmp_path / "traces.jsonl"
    _session(lam, savers, path, "here", same_handler=True)
    _session(lam, savers, path, "elsewhere", same_handler=False)
    inputs = [trace.input for trace in load_traces(str(path))]
    # The handler that saw the question gives it to the resume; one in another process knows none.
    assert inputs == ["the build broke after a bump"] * 3 + [""]
    lam.close()


def test_one_reviewed_session_never_mints_a_lesson(tmp_path: Path, savers: Savers) -> None:
    lam, path = _engine(tmp_path), tmp_path / "traces.jsonl"
    episode = _session(lam, savers, path, "t1", same_handler=True)
    traces = load_traces(str(path))
    assert [t.episode_id for t in traces] == [episode, episode]
    reply = json.dumps([{"precondition": "the build breaks after a bump", "action": "run a clean build first",
                         "rationale": "the cache survived", "scope": CONTEXT, "trace_ids": [t.id for t in traces]}])
    report = lam.sleep(traces=traces, model=ScriptedModel([reply]))
    assert report.of_kind("candidate") == []
    assert [d.reason.split(" (")[0] for d in report.dropped] == ["supported by 2 traces of 1 session"]
    lam.close()
