"""Two reviewers resuming one interrupted sleep review at once, on real checkpointers: the first
decision stands, the thread's final state says what the store applied, and the later reviewer hears of it."""

from __future__ import annotations

import sqlite3
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

import lamar_langgraph.sleep_graph
from lamar import Experience, Lamar, Scope
from lamar_langgraph import build_sleep_graph

CONFIG = {"configurable": {"thread_id": "sleep-review"}}


def test_the_reviewer_who_answers_none_after_another_applied_all_is_told_and_the_thread_says_what_is_applied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, checkpoints = str(tmp_path / "store.db"), str(tmp_path / "reviews.db")
    lam = Lamar(store, seed=0)
    lam.add(Experience("the linter complains", "run the formatter", scope=Scope(task="lint")))
    lam.add(Experience("The linter complains!", "Run the formatter.", scope=Scope(task="lint")))
    engines, conns = [lam, Lamar(store, seed=1)], [sqlite3.connect(checkpoints, check_same_thread=False)
                                                  for _ in range(3)]
    first = build_sleep_graph(lam, checkpointer=SqliteSaver(conns[0]))
    paused = first.invoke({}, CONFIG)["__interrupt__"][0].value
    (merge,) = [p["id"] for p in paused["proposals"] if p["kind"] == "merge"]

    # The "none" reviewer read the interrupt and answered, but its run goes on only once the
    # "all" reviewer's run has applied and ended.
    # The "all" reviewer starts only once the "none" one has resumed the interrupted review: started
    # together, the "all" run could end before the other loaded the thread, which it then found done.
    none_resumed, all_done = threading.Event(), threading.Event()
    read_decision = lamar_langgraph.sleep_graph.read_decision

    def slow_none(answer: Any, ids: list[str]) -> Any:
        if answer == "none":
            none_resumed.set()
            assert all_done.wait(60)
        return read_decision(answer, ids)

    monkeypatch.setattr(lamar_langgraph.sleep_graph, "read_decision", slow_none)
    results: dict[str, Any] = {}

    def review(answer: str, engine: Lamar, conn: sqlite3.Connection) -> None:
        graph = build_sleep_graph(engine, checkpointer=SqliteSaver(conn))
        try:
            results[answer] = graph.invoke(Command(resume=answer), CONFIG)
        finally:
            if answer == "all":
                all_done.set()

    reviewers = [threading.Thread(target=review, args=args)
                 for args in (("none", engines[1], conns[1]), ("all", lam, conns[2]))]
    reviewers[0].start()
    assert none_resumed.wait(60)
    reviewers[1].start()
    for reviewer in reviewers:
        reviewer.join(120)
    assert set(results) == {"all", "none"}

    assert "merge" not in [p.kind for p in lam.sleep()]  # the store applied it
    final = build_sleep_graph(lam, checkpointer=SqliteSaver(conns[0])).get_state(CONFIG).values
    assert merge in final["applied"], f"the thread records {final.get('decision')}, applied {final['applied']}"
    assert merge in results["all"]["applied"] and results["all"].get("overtaken", "") == ""
    assert "another reviewer decided first" in results["none"].get("overtaken", "")
    assert merge in results["none"]["applied"]  # what the store holds, not what "none" chose
    for engine in engines:
        engine.close()
    for conn in conns:
        conn.close()


# (first reviewer's answer, second reviewer's answer); "one" approves the first proposal only.
DECISIONS = [("none", "all"), ("one", "all"), ("all", "one"), ("none", "one")]


@pytest.mark.parametrize(("first", "second"), DECISIONS)
def test_the_first_decision_stands_and_the_later_reviewer_of_the_same_interrupt_is_told(
        savers: Callable[[], Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: str, second: str) -> None:
    store = str(tmp_path / "store.db")
    lam = Lamar(store, seed=0)
    for task, (a, b) in {"lint": ("the linter complains", "run the formatter"),
                         "test": ("tests are flaky", "rerun them once")}.items():
        lam.add(Experience(a, b, scope=Scope(task=task)))
        lam.add(Experience(a.capitalize() + "!", b.capitalize() + ".", scope=Scope(task=task)))
    config = {"configurable": {"thread_id": f"review-{uuid.uuid4().hex}"}}
    paused = build_sleep_graph(lam, checkpointer=savers()).invoke({}, config)["__interrupt__"][0].value
    ids = [p["id"] for p in paused["proposals"]]
    assert len(ids) == 2
    choices = {"none": [], "one": ids[:1], "all": ids}
    answers = {"ana": {"approve": choices[first], "reviewer": "ana"},
               "bo": {"approve": choices[second], "reviewer": "bo"}}

    # Bo resumes the interrupt first, but his run reads his answer only once Ana's run has
    # resumed the same interrupt, decided and ended: two resumes of one review that overlap.
    bo_resumed, ana_done = threading.Event(), threading.Event()
    read_decision = lamar_langgraph.sleep_graph.read_decision

    def slow_bo(answer: Any, proposal_ids: list[str]) -> Any:
        if answer.get("reviewer") == "bo":
            bo_resumed.set()
            assert ana_done.wait(60)
        return read_decision(answer, proposal_ids)

    monkeypatch.setattr(lamar_langgraph.sleep_graph, "read_decision", slow_bo)
    results: dict[str, Any] = {}

    def review(reviewer: str, engine: Lamar) -> None:
        try:
            graph = build_sleep_graph(engine, checkpointer=savers())
            results[reviewer] = graph.invoke(Command(resume=answers[reviewer]), config)
        finally:
            if reviewer == "ana":
                ana_done.set()

    engines = {"ana": lam, "bo": Lamar(store, seed=1)}
    bo = threading.Thread(target=review, args=("bo", engines["bo"]))
    bo.start()
    assert bo_resumed.wait(60)
    review("ana", lam)
    bo.join(120)

    # Ana decided first: what she approved, and only that, is applied, whatever Bo approved.
    assert results["ana"]["applied"] == choices[first] and results["ana"]["overtaken"] == ""
    assert results["bo"]["applied"] == choices[first], results["bo"].get("overtaken")
    assert results["bo"]["approved"] == choices[first] and results["bo"]["decision"]["reviewer"] == "ana"
    said = {"none": "approve none", "one": f"approve {ids[0]}", "all": f"approve {', '.join(ids)}"}
    assert f"another reviewer decided first (ana: {said[first]})" in results["bo"]["overtaken"]
    assert f"this resume's decision (bo: {said[second]}) was not carried out" in results["bo"]["overtaken"]
    # The thread says so too, whichever run wrote its last checkpoint, and it is not stuck.
    state = build_sleep_graph(lam, checkpointer=savers()).get_state(config)
    assert state.next == () and state.values["decision"]["reviewer"] == "ana"
    assert state.values["applied"] == choices[first]
    again = build_sleep_graph(lam, checkpointer=savers()).invoke(Command(resume="all"), config)
    assert again["applied"] == choices[first]
    for engine in engines.values():
        engine.close()


def test_a_resume_from_the_interrupted_checkpoint_after_the_review_ended_replays_the_first_decision(
        savers: Callable[[], Any], tmp_path: Path) -> None:
    # LangGraph's time travel: the review's result is kept on the checkpoint it was interrupted
    # at, so a fork from there carries out the recorded decision and never reads the new answer.
    lam = Lamar(str(tmp_path / "store.db"), seed=0)
    lam.add(Experience("the linter complains", "run the formatter", scope=Scope(task="lint")))
    lam.add(Experience("The linter complains!", "Run the formatter.", scope=Scope(task="lint")))
    config = {"configurable": {"thread_id": f"review-{uuid.uuid4().hex}"}}
    graph = build_sleep_graph(lam, checkpointer=savers())
    graph.invoke({}, config)
    assert graph.invoke(Command(resume={"approve": [], "reviewer": "ana"}), config)["applied"] == []

    (interrupted,) = [s for s in graph.get_state_history(config) if any(t.interrupts for t in s.tasks)]
    fork = build_sleep_graph(lam, checkpointer=savers()).invoke(
        Command(resume={"approve_all": True, "reviewer": "bo"}), interrupted.config)
    assert fork["decision"]["reviewer"] == "ana" and fork["approved"] == [] and fork["applied"] == []
    assert "merge" in [p.kind for p in lam.sleep()]  # nothing of Bo's answer was applied
    lam.close()
