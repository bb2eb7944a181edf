"""LamarCallbackHandler on LangGraph threads stopped by `interrupt(...)` and resumed with
`Command(resume=...)`: the resumed root run carries the interrupted run's unreported episodes."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from lamar import Experience, Lamar, Scope, Signal, UnknownEpisode
from lamar.sleep.traces import load_traces
from lamar_langchain import LamarCallbackHandler, LamarRetriever
from tests.integrations.langgraph.graphs import in_line


class Review(TypedDict, total=False):
    question: str
    lessons: list[Any]
    draft: str
    verdict: str
    answer: str


def engine() -> Lamar:
    lam = Lamar(":memory:", k=2, seed=9, holdout=1e-9)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    return lam


def review_graph(lam: Lamar, reviews: int = 1) -> Any:
    """recall -> draft -> review (interrupts `reviews` times) -> answer, checkpointed in memory."""
    retriever = LamarRetriever(lamar=lam, k=1, context={"project": "trace"})
    model = GenericFakeChatModel(messages=iter(f"draft {i}" for i in range(100)))

    def recall(state: Review) -> Review:
        return {"lessons": retriever.invoke(state["question"])}

    async def arecall(state: Review) -> Review:
        return {"lessons": await retriever.ainvoke(state["question"])}

    def draft(state: Review) -> Review:
        return {"draft": model.invoke(state["question"]).text}

    def review(state: Review) -> Review:
        verdicts = [interrupt({"draft": state["draft"], "round": i}) for i in range(reviews)]
        return {"verdict": verdicts[-1]}

    def answer(state: Review) -> Review:
        return {"answer": f"{state['draft']} ({state['verdict']})"}

    graph = in_line(Review,
                    ("recall", RunnableLambda(recall, afunc=arecall)),
                    ("draft", draft),
                    ("review", review),
                    ("answer", answer))
    return graph.compile(checkpointer=InMemorySaver())


async def run(graph: Any, value: Any, handler: LamarCallbackHandler, thread: Any, mode: str) -> tuple[uuid.UUID, Any]:
    run_id = uuid.uuid4()
    config = {"callbacks": [handler], "run_id": run_id, "configurable": {"thread_id": thread}}
    out = graph.invoke(value, config) if mode == "sync" else await graph.ainvoke(value, config)
    handler.flush()
    return run_id, out


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_resumed_run_reports_the_episode_recalled_before_the_interrupt(tmp_path: Path, mode: str) -> None:
    lam = engine()
    path = tmp_path / "traces.jsonl"
    handler = LamarCallbackHandler(lam, trace_path=path, raise_error=True)
    graph = review_graph(lam)
    first, paused = await run(graph, {"question": "why does the build fail?"}, handler, "t1", mode)
    assert paused["__interrupt__"][0].value["draft"] == "draft 0"
    episode = paused["lessons"][0].metadata["episode_id"]
    # An interrupt is no failure: the run ended, its trace is written and its episode stays open.
    assert handler.episodes(first) == [episode] and not handler.implicit_signals(first).failed
    assert lam.episode(episode).reports == 0

    resumed, done = await run(graph, Command(resume="approved"), handler, "t1", mode)
    assert done["answer"] == "draft 0 (approved)"
    assert handler.episodes(resumed) == [episode]
    assert handler.trace(resumed).episode_id == episode
    assert handler.report(resumed, Signal.SHIPPED) == [episode]
    assert lam.episode(episode).signal == "shipped"

    traces = load_traces(path)
    assert [t.id for t in traces] == [str(first), str(resumed)]
    assert [t.episode_id for t in traces] == [episode, episode]
    assert traces[1].metadata["resumes"] == str(first) and traces[1].output == "draft 0 (approved)"


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_interrupted_run_id_still_reports_and_is_not_reported_twice(mode: str) -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True, write_on="report")
    graph = review_graph(lam)
    first, paused = await run(graph, {"question": "q"}, handler, 42, mode)  # an int thread id
    episode = paused["lessons"][0].metadata["episode_id"]
    resumed, _ = await run(graph, Command(resume="approved"), handler, 42, mode)
    assert handler.report(first, Signal.SHIPPED) == [episode]
    assert handler.report(resumed, Signal.SHIPPED) == []  # carried, and reported already
    assert lam.episode(episode).reports == 1



@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("thread", [0, ""])
async def test_a_falsy_thread_id_is_resumed_too(mode: str, thread: Any) -> None:
    # LangGraph leaves a falsy thread_id out of the run metadata: the checkpoint links the runs.
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = review_graph(lam)
    _, paused = await run(graph, {"question": "q"}, handler, thread, mode)
    episode = paused["lessons"][0].metadata["episode_id"]
    resumed, done = await run(graph, Command(resume="approved"), handler, thread, mode)
    assert done["answer"] == "draft 0 (approved)"
    assert handler.episodes(resumed) == [episode]
    assert handler.report(resumed, Signal.SHIPPED) == [episode]
    assert lam.episode(episode).signal == "shipped"


async def test_threads_0_and_the_string_0_each_carry_their_own_episode() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = review_graph(lam)
    _, zero = await run(graph, {"question": "a"}, handler, 0, "sync")
    _, text = await run(graph, {"question": "b"}, handler, "0", "sync")
    resumed_text, _ = await run(graph, Command(resume="ok"), handler, "0", "sync")
    resumed_zero, _ = await run(graph, Command(resume="ok"), handler, 0, "sync")
    assert handler.episodes(resumed_zero) == [zero["lessons"][0].metadata["episode_id"]]
    assert handler.episodes(resumed_text) == [text["lessons"][0].metadata["episode_id"]]


@pytest.mark.parametrize(("paused_on", "resumed_on"), [(42, "42"), ("42", 42)],
                         ids=["int-then-str", "str-then-int"])
async def test_threads_42_and_the_string_42_are_one_thread_as_in_langgraph(paused_on: Any, resumed_on: Any) -> None:
    # LangGraph's loop checkpoints a truthy thread_id as str(thread_id): both name one thread.
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = review_graph(lam)
    _, paused = await run(graph, {"question": "q"}, handler, paused_on, "sync")
    resumed, done = await run(graph, Command(resume="approved"), handler, resumed_on, "sync")
    assert done["answer"] == "draft 0 (approved)"  # LangGraph resumed the paused thread
    assert handler.episodes(resumed) == [paused["lessons"][0].metadata["episode_id"]]


async def test_an_episode_reported_before_the_resume_is_not_carried() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = review_graph(lam)
    first, _ = await run(graph, {"question": "q"}, handler, "t1", "sync")
    handler.report(first, Signal.REVERTED)  # the reviewer turned it down
    resumed, _ = await run(graph, Command(resume="rejected"), handler, "t1", "sync")
    assert handler.episodes(resumed) == [] and handler.trace(resumed).episode_id is None
    with pytest.raises(UnknownEpisode):
        handler.report(resumed, Signal.SHIPPED)


async def test_interleaved_threads_each_carry_their_own_episode() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = review_graph(lam)
    _, a = await run(graph, {"question": "a"}, handler, "a", "sync")
    _, b = await run(graph, {"question": "b"}, handler, "b", "sync")
    resumed_b, _ = await run(graph, Command(resume="ok"), handler, "b", "sync")
    resumed_a, _ = await run(graph, Command(resume="ok"), handler, "a", "sync")
    assert handler.episodes(resumed_a) == [a["lessons"][0].metadata["episode_id"]]
    assert handler.episodes(resumed_b) == [b["lessons"][0].metadata["episode_id"]]


async def test_a_thread_interrupted_twice_carries_its_episode_to_the_last_run() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = review_graph(lam, reviews=2)
    _, paused = await run(graph, {"question": "q"}, handler, "t1", "sync")
    episode = paused["lessons"][0].metadata["episode_id"]
    second, again = await run(graph, Command(resume="not yet"), handler, "t1", "sync")
    assert again["__interrupt__"][0].value["round"] == 1
    last, done = await run(graph, Command(resume="approved"), handler, "t1", "sync")
    assert done["answer"] == "draft 0 (approved)"
    assert handler.episodes(second) == handler.episodes(last) == [episode]
    assert handler.report(last, 0.5) == [episode]
    assert handler.report(second, 0.5, replace=True) == [episode]  # each id of the thread still reaches it


async def test_runs_without_a_thread_or_with_fresh_input_carry_nothing() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True)
    graph = review_graph(lam)
    _, paused = await run(graph, {"question": "q"}, handler, "t1", "sync")
    fresh, out = await run(graph, {"question": "another"}, handler, "t1", "sync")  # a new turn, not a resume
    assert handler.episodes(fresh) == [out["lessons"][0].metadata["episode_id"]]
    assert paused["lessons"][0].metadata["episode_id"] not in handler.episodes(fresh)
    plain = uuid.uuid4()
    retriever = LamarRetriever(lamar=lam, k=1, context={"project": "trace"})
    docs = retriever.invoke("q", {"callbacks": [handler]}, run_id=plain)  # no thread: as before
    assert handler.episodes(plain) == [docs[0].metadata["episode_id"]]


async def test_interrupted_threads_are_bounded_by_max_runs() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True, max_runs=2)
    graph = review_graph(lam)
    for thread in ("a", "b", "c"):
        await run(graph, {"question": thread}, handler, thread, "sync")
    assert list(handler._interrupted) == ["b", "c"]  # the oldest thread waits no more
    resumed, _ = await run(graph, Command(resume="ok"), handler, "a", "sync")
    with pytest.raises(UnknownEpisode):
        handler.report(resumed, Signal.SHIPPED)


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_recall_in_the_interrupted_node_is_redone_not_carried(mode: str) -> None:
    """LangGraph runs the interrupted node again from its start: its first recall never reached
    the answer, the one made on resume did."""
    lam = engine()
    retriever = LamarRetriever(lamar=lam, k=1, context={"project": "trace"})

    async def ask(state: Review) -> Review:
        lessons = await retriever.ainvoke(state["question"])
        return {"lessons": lessons, "verdict": interrupt(lessons[0].page_content)}

    def ask_sync(state: Review) -> Review:
        lessons = retriever.invoke(state["question"])
        return {"lessons": lessons, "verdict": interrupt(lessons[0].page_content)}

    builder = in_line(Review, ("ask", RunnableLambda(ask_sync, afunc=ask)))
    graph = builder.compile(checkpointer=InMemorySaver())
    handler = LamarCallbackHandler(lam, raise_error=True)
    first, _ = await run(graph, {"question": "q"}, handler, "t1", mode)
    (before,) = handler.episodes(first)
    resumed, done = await run(graph, Command(resume="ok"), handler, "t1", mode)
    after = done["lessons"][0].metadata["episode_id"]
    assert after != before and handler.episodes(resumed) == [after]
    assert lam.episode(before).settled == "expired"  # no episode left pending
    assert handler.report(resumed, Signal.SHIPPED) == [after]


async def test_an_interrupt_inside_a_subgraph_carries_the_episode_of_its_earlier_node() -> None:
    lam = engine()
    retriever = LamarRetriever(lamar=lam, k=1, context={"project": "trace"})
    sub = in_line(Review,
                  ("recall", lambda state: {"lessons": retriever.invoke(state["question"])}),
                  ("review", lambda state: {"verdict": interrupt("ok?")}))
    builder = StateGraph(Review)
    builder.add_node("sub", sub.compile())  # the subgraph re-raises the interrupt after its node
    builder.add_edge(START, "sub")
    builder.add_edge("sub", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    handler = LamarCallbackHandler(lam, raise_error=True)
    first, _ = await run(graph, {"question": "q"}, handler, "t1", "sync")
    resumed, done = await run(graph, Command(resume="ok"), handler, "t1", "sync")
    assert done["verdict"] == "ok"
    assert handler.episodes(resumed) == handler.episodes(first) == [done["lessons"][0].metadata["episode_id"]]


async def test_with_write_on_report_the_interrupted_runs_trace_gets_the_outcome_too(tmp_path: Path) -> None:
    lam = engine()
    path = tmp_path / "traces.jsonl"
    handler = LamarCallbackHandler(lam, trace_path=path, raise_error=True, write_on="report")
    graph = review_graph(lam)
    first, resumed = uuid.uuid4(), uuid.uuid4()
    config = {"callbacks": [handler], "configurable": {"thread_id": "t1"}}
    await graph.ainvoke({"question": "q"}, {**config, "run_id": first})
    await graph.ainvoke(Command(resume="approved"), {**config, "run_id": resumed})
    await asyncio.to_thread(handler.report, resumed, Signal.SHIPPED)
    handler.flush()
    traces = load_traces(path)
    assert sorted(t.id for t in traces) == sorted([str(first), str(resumed)])
    assert {t.outcome for t in traces} == {"shipped"} and traces[0].episode_id == traces[1].episode_id
