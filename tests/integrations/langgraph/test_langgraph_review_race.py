"""Two reviewers resuming one interrupted thread at once, on real checkpointers: one outcome is
recorded, the other resume is refused with `DuplicateReport`, and the thread goes on."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState
from langgraph.types import Command, interrupt

from lamar import DuplicateReport, Experience, Lamar, Scope
from lamar_langgraph import LamarState, recall_node, report_node
from tests.integrations.langgraph.graphs import in_line

CONTEXT = {"project": "trace"}


class State(MessagesState, LamarState):
    pass


def reviewed_graph(lam: Lamar, checkpointer: Any, gate: threading.Barrier | None) -> Any:
    def review(state: State) -> dict[str, Any]:
        answer = interrupt({"question": "how did it go?"})
        if gate is not None:
            gate.wait()  # both reviewers are past the interrupt before either reports
        return {"lamar_outcome": answer}

    graph = in_line(State, ("recall", recall_node(lam)), ("review", review), ("report", report_node(lam)))
    return graph.compile(checkpointer=checkpointer)


def test_two_reviewers_resuming_at_once_record_one_outcome_and_refuse_the_other(
        savers: Callable[[], Any], tmp_path: Path) -> None:
    # Two engines on one SQLite file: each reviewer could as well be its own process.
    engines = [Lamar(str(tmp_path / "lessons.db"), seed=1) for _ in range(2)]
    engines[0].add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    config = {"configurable": {"thread_id": f"review-{uuid.uuid4().hex}"}}
    paused = reviewed_graph(engines[0], savers(), None).invoke(
        {"messages": [HumanMessage("the build fails", id="m1")], "lamar_context": CONTEXT}, config)
    episode = paused["lamar_episode_id"]
    assert paused["__interrupt__"] and engines[0].episode(episode).reports == 0

    gate = threading.Barrier(2, timeout=120)
    results: dict[str, Any] = {}

    def resume(lam: Lamar, answer: str) -> None:
        try:
            results[answer] = reviewed_graph(lam, savers(), gate).invoke(Command(resume=answer), config)
        except DuplicateReport as exc:
            results[answer] = exc

    reviewers = [threading.Thread(target=resume, args=(lam, answer))
                 for lam, answer in zip(engines, ("shipped", "reverted"), strict=True)]
    for reviewer in reviewers:
        reviewer.start()
    for reviewer in reviewers:
        reviewer.join()

    recorded = Lamar(str(tmp_path / "lessons.db")).episode(episode)
    assert recorded.reports == 1 and recorded.signal in ("shipped", "reverted")
    refused = "reverted" if recorded.signal == "shipped" else "shipped"
    # The reviewer whose outcome stands is told so; the other is told it was not recorded.
    assert results[recorded.signal]["lamar_outcome"] == recorded.signal
    error = results[refused]
    assert isinstance(error, DuplicateReport)
    assert f"already has the outcome {recorded.signal}" in str(error)
    assert f"lam.report('{episode}', '{refused}', replace=True)" in str(error)

    # The thread is not stuck on the refusal: its next turn recalls and reports as usual.
    after = reviewed_graph(engines[0], savers(), None)
    after.invoke({"messages": [HumanMessage("it fails again", id="m2")]}, config)
    done = after.invoke(Command(resume="shipped"), config)
    assert done["lamar_episode_id"] != episode
    assert engines[0].episode(done["lamar_episode_id"]).signal == "shipped"
    assert Lamar(str(tmp_path / "lessons.db")).episode(episode).signal == recorded.signal
    for lam in engines:
        lam.close()


def test_a_replayed_report_of_the_same_outcome_is_no_conflict() -> None:
    lam = Lamar(":memory:", seed=1)
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "replay"}}
    graph = reviewed_graph(lam, saver, None)
    graph.invoke({"messages": [HumanMessage("the build fails", id="m1")], "lamar_context": CONTEXT}, config)
    done = graph.invoke(Command(resume=0.5), config)
    # Replaying the report step (a run whose later checkpoint was lost) reports the same outcome again.
    before_report = next(s for s in graph.get_state_history(config) if s.next == ("report",))
    graph.invoke(None, before_report.config)
    assert lam.episode(done["lamar_episode_id"]).reward == 0.5 and lam.episode(done["lamar_episode_id"]).reports == 1


async def test_two_reviewers_resuming_under_ainvoke_record_one_outcome_and_refuse_the_other() -> None:
    lam = Lamar(":memory:", seed=1)
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "async-review"}}
    await reviewed_graph(lam, saver, None).ainvoke(
        {"messages": [HumanMessage("the build fails", id="m1")], "lamar_context": CONTEXT}, config)
    gate = threading.Barrier(2, timeout=120)  # the review node is sync: each runs on a worker thread
    results = await asyncio.gather(
        *(reviewed_graph(lam, saver, gate).ainvoke(Command(resume=answer), config) for answer in (1.0, -0.5)),
        return_exceptions=True)
    refused = [r for r in results if isinstance(r, BaseException)]
    assert len(refused) == 1 and isinstance(refused[0], DuplicateReport)
    (kept,) = [r for r in results if not isinstance(r, BaseException)]
    recorded = lam.episode(kept["lamar_episode_id"])
    assert recorded.reports == 1 and recorded.reward == kept["lamar_outcome"]
    assert "replace=True" in str(refused[0]) and f"{recorded.reward:g}" in str(refused[0])
