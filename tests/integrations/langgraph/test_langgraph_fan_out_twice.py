"""A parent that fans out to worker branches more than once a turn (plan -> workers -> review -> workers):
each branch recalls for its own task, and each round's outcome reaches its own episodes."""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Send

from lamar import Experience, Lamar, Scope
from lamar_langgraph import LamarState, recall_node, report_node

TASKS = ("parse", "test", "docs", "lint")


def engine() -> Lamar:
    lam = Lamar(":memory:", k=2, seed=5, holdout=1e-9)
    for task in TASKS:
        lam.add(Experience(f"the {task} task", f"do the {task} step carefully", scope=Scope(task=task)))
    return lam


class Worker(MessagesState, LamarState, total=False):
    task: str
    seen: Annotated[list[tuple[str, str | None, str]], operator.add]


class Parent(MessagesState, LamarState, total=False):
    round: int
    seen: Annotated[list[tuple[str, str | None, str]], operator.add]


def worker(lam: Lamar) -> Any:
    """recall -> work: the work notes its task, its episode and the lesson it was given."""
    def work(state: Worker) -> dict[str, Any]:
        given = next((task for task in TASKS if f"the {task} step" in state.get("lamar_prompt", "")), "")
        return {"seen": [(state["task"], state.get("lamar_episode_id"), given)]}

    graph = StateGraph(Worker)
    graph.add_node("recall", recall_node(lam, context=lambda state: {"task": state["task"]}))
    graph.add_node("work", work)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "work")
    graph.add_edge("work", END)
    return graph.compile()


def fan_out(rounds: dict[int, tuple[str, ...]]) -> Any:
    """The docs' recipe: each branch gets Lamar's keys, the person's message and its task."""
    def send(state: Parent) -> list[Send]:
        keys = {key: value for key, value in state.items() if key.startswith("lamar_")}
        return [Send("worker", {**keys, "messages": state["messages"][-1:], "task": task})
                for task in rounds[state["round"]]]
    return send


def two_rounds(lam: Lamar, rounds: dict[int, tuple[str, ...]], *, report_between: bool) -> Any:
    """plan -> workers -> review -> (report) -> workers -> judge -> report."""
    graph = StateGraph(Parent)
    graph.add_node("plan", lambda state: {"round": 1})
    graph.add_node("worker", worker(lam))
    graph.add_node("review", lambda state: {"round": 2, "lamar_outcome": "corrected" if report_between else None})
    graph.add_node("report_round_one", report_node(lam, name="report_round_one"))
    graph.add_node("judge", lambda state: {"lamar_outcome": "shipped"})
    graph.add_node("report", report_node(lam))
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", fan_out(rounds), ["worker"])
    graph.add_conditional_edges("worker", lambda state: "review" if state["round"] == 1 else "judge",
                                ["review", "judge"])
    graph.add_edge("review", "report_round_one")
    graph.add_conditional_edges("report_round_one", fan_out(rounds), ["worker"])
    graph.add_edge("judge", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=InMemorySaver())


def run(app: Any, thread: str = "t") -> dict[str, Any]:
    return app.invoke({"messages": [HumanMessage("fix the parser, then the docs", id="h1")]},
                      {"configurable": {"thread_id": thread}})


@pytest.mark.parametrize("report_between", [True, False], ids=["reported-between", "one-report"])
def test_a_second_fan_out_in_the_same_turn_recalls_for_its_own_tasks(report_between: bool) -> None:
    lam = engine()
    out = run(two_rounds(lam, {1: ("parse", "test"), 2: ("docs", "lint")}, report_between=report_between))
    assert sorted(task for task, _, given in out["seen"] if given == task) == sorted(TASKS)  # its own lesson each
    episodes = {task: episode for task, episode, _ in out["seen"]}
    assert len(set(episodes.values())) == 4 and lam.stats()["episodes"] == 4
    first = "corrected" if report_between else "shipped"
    assert {task: lam.episode(e).signal for task, e in episodes.items()} == {
        "parse": first, "test": first, "docs": "shipped", "lint": "shipped"}
    assert lam.pending() == []


def test_the_same_tasks_sent_back_after_a_reported_review_get_new_episodes() -> None:
    lam = engine()
    out = run(two_rounds(lam, {1: ("parse", "test"), 2: ("parse", "test")}, report_between=True))
    assert all(task == given for task, _, given in out["seen"]) and len(out["seen"]) == 4
    assert lam.stats()["episodes"] == 4 and lam.pending() == []
    signals = sorted((task, lam.episode(e).signal) for task, e, _ in out["seen"])
    assert signals == [("parse", "corrected"), ("parse", "shipped"), ("test", "corrected"), ("test", "shipped")]


def test_the_same_tasks_sent_back_before_any_outcome_keep_their_episodes_and_lessons() -> None:
    lam = engine()
    out = run(two_rounds(lam, {1: ("parse", "test"), 2: ("parse", "test")}, report_between=False))
    assert all(task == given for task, _, given in out["seen"]) and len(out["seen"]) == 4
    by_task: dict[str, set[str | None]] = {}
    for task, episode, _ in out["seen"]:
        by_task.setdefault(task, set()).add(episode)
    assert all(len(episodes) == 1 for episodes in by_task.values())  # one open episode a task and turn
    assert lam.stats()["episodes"] == 2 and lam.pending() == []


def planned(lam: Lamar, person: bool) -> Any:
    """A planner answers with an AI message, then the workers fan out twice and one report credits both rounds;
    each branch is sent the last message, or the person's last message."""
    def send(state: Parent) -> list[Send]:
        keys = {key: value for key, value in state.items() if key.startswith("lamar_")}
        said = [m for m in state["messages"] if m.type == "human"][-1:] if person else state["messages"][-1:]
        tasks = ("parse", "test") if state["round"] == 1 else ("docs", "lint")
        return [Send("worker", {**keys, "messages": said, "task": task}) for task in tasks]

    graph = StateGraph(Parent)
    graph.add_node("plan", lambda state: {"round": 1, "messages": [AIMessage("parse and test first", id="a1")]})
    graph.add_node("worker", worker(lam))
    graph.add_node("again", lambda state: {"round": 2})
    graph.add_node("judge", lambda state: {"lamar_outcome": "shipped"})
    graph.add_node("report", report_node(lam))
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", send, ["worker"])
    graph.add_conditional_edges("worker", lambda state: "again" if state["round"] == 1 else "judge", ["again", "judge"])
    graph.add_conditional_edges("again", send, ["worker"])
    graph.add_edge("judge", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=InMemorySaver())


def test_a_fan_out_after_an_ai_message_sent_only_that_message_is_told_to_send_the_persons() -> None:
    lam = engine()
    with pytest.warns(UserWarning, match=r"Send the person's last message instead: .*m.type == \"human\""):
        run(planned(lam, person=False))  # the second round's branches warn: they hold the first's keys
    assert lam.stats()["episodes"] == 4


def test_a_fan_out_after_an_ai_message_sent_the_persons_message_credits_both_rounds() -> None:
    import warnings

    lam = engine()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = run(planned(lam, person=True))
    assert sorted(task for task, _, given in out["seen"] if task == given) == sorted(TASKS)
    assert lam.stats()["episodes"] == 4 and lam.pending() == []
