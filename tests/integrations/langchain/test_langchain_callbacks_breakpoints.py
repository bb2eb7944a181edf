"""LamarCallbackHandler on LangGraph threads stopped at a static breakpoint (`interrupt_before`,
`interrupt_after`) and resumed with `None`: the resumed root run carries the stopped run's episodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langgraph.checkpoint.memory import InMemorySaver

from lamar import Lamar, Signal
from lamar.sleep.traces import load_traces
from lamar_langchain import LamarCallbackHandler, LamarRetriever
from tests.integrations.langchain.test_langchain_callbacks_resume import Review, engine, run
from tests.integrations.langgraph.graphs import in_line

BREAKPOINTS = [{"interrupt_before": ["answer"]}, {"interrupt_after": ["draft"]}]


def approval_graph(lam: Lamar, **breakpoint: list[str]) -> Any:
    """recall -> draft -> answer, stopped at a breakpoint for a person to approve the draft."""
    retriever = LamarRetriever(lamar=lam, k=1, context={"project": "trace"})
    model = GenericFakeChatModel(messages=iter(f"draft {i}" for i in range(100)))
    graph = in_line(Review,
                    ("recall", lambda state: {"lessons": retriever.invoke(state["question"])}),
                    ("draft", lambda state: {"draft": model.invoke(state["question"]).text}),
                    ("answer", lambda state: {"answer": f"{state['draft']} ({state.get('verdict', 'as is')})"}))
    return graph.compile(checkpointer=InMemorySaver(), **breakpoint)


@pytest.mark.parametrize("breakpoint", BREAKPOINTS, ids=["before", "after"])
@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_run_resumed_past_a_breakpoint_reports_the_episode(
        tmp_path: Path, mode: str, breakpoint: dict[str, list[str]]) -> None:
    lam = engine()
    path = tmp_path / "traces.jsonl"
    handler = LamarCallbackHandler(lam, trace_path=path, raise_error=True)
    graph = approval_graph(lam, **breakpoint)
    first, paused = await run(graph, {"question": "why does the build fail?"}, handler, "t1", mode)
    config = {"configurable": {"thread_id": "t1"}}
    assert graph.get_state(config).next == ("answer",) and "answer" not in paused
    episode = paused["lessons"][0].metadata["episode_id"]
    assert handler.episodes(first) == [episode] and lam.episode(episode).reports == 0

    resumed, done = await run(graph, None, handler, "t1", mode)
    assert done["answer"] == "draft 0 (as is)"
    assert handler.episodes(resumed) == [episode]
    assert handler.trace(resumed).episode_id == episode
    # The thread is done: running it again resumes nothing and takes nothing over.
    again, _ = await run(graph, None, handler, "t1", mode)
    assert handler.episodes(again) == []
    assert handler.report(resumed, Signal.SHIPPED) == [episode]
    assert lam.episode(episode).signal == "shipped"
    traces = load_traces(path)
    assert [t.id for t in traces[:2]] == [str(first), str(resumed)]
    assert traces[1].metadata["resumes"] == str(first) and traces[1].episode_id == episode


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_state_edited_at_the_breakpoint_still_carries_and_the_stopped_id_reports(mode: str) -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True, write_on="report")
    graph = approval_graph(lam, interrupt_before=["answer"])
    first, paused = await run(graph, {"question": "q"}, handler, "t1", mode)
    episode = paused["lessons"][0].metadata["episode_id"]
    config = {"configurable": {"thread_id": "t1"}}
    graph.update_state(config, {"verdict": "edited"})  # the reviewer amends the state
    resumed, done = await run(graph, None, handler, "t1", mode)
    assert done["answer"] == "draft 0 (edited)" and handler.episodes(resumed) == [episode]
    assert handler.report(first, Signal.SHIPPED) == [episode]
    assert handler.report(resumed, Signal.SHIPPED) == []  # carried, and reported already
    assert lam.episode(episode).reports == 1


async def test_a_breakpoint_inside_a_subgraph_carries_its_earlier_nodes_episode() -> None:
    """LangGraph resumes the subgraph from its own checkpoint: the node before the breakpoint
    does not run again, so its episode is carried, not expired."""
    lam = engine()
    retriever = LamarRetriever(lamar=lam, k=1, context={"project": "trace"})
    sub = in_line(Review,
                  ("recall", lambda state: {"lessons": retriever.invoke(state["question"])}),
                  ("answer", lambda state: {"answer": "done"}))
    builder = in_line(Review, ("sub", sub.compile(interrupt_before=["answer"])))
    graph = builder.compile(checkpointer=InMemorySaver())
    handler = LamarCallbackHandler(lam, raise_error=True)
    first, _ = await run(graph, {"question": "q"}, handler, "t1", "sync")
    (episode,) = handler.episodes(first)
    resumed, done = await run(graph, None, handler, "t1", "sync")
    assert done["answer"] == "done" and done["lessons"][0].metadata["episode_id"] == episode
    assert handler.episodes(resumed) == [episode] and lam.episode(episode).settled is None
    assert handler.report(resumed, Signal.SHIPPED) == [episode]


async def test_breakpoint_threads_never_resumed_stay_pending_bounded_by_max_runs() -> None:
    lam = engine()
    handler = LamarCallbackHandler(lam, raise_error=True, max_runs=2)
    graph = approval_graph(lam, interrupt_after=["draft"])
    stopped = {thread: await run(graph, {"question": thread}, handler, thread, "sync") for thread in "abc"}
    assert list(handler._interrupted) == ["b", "c"]  # the oldest thread waits no more
    for _, out in stopped.values():
        record = lam.episode(out["lessons"][0].metadata["episode_id"])
        assert record.reports == 0 and record.settled is None  # pending, for `pending_after` to settle
    run_c, out_c = stopped["c"]
    assert handler.report(run_c, Signal.SHIPPED) == [out_c["lessons"][0].metadata["episode_id"]]
