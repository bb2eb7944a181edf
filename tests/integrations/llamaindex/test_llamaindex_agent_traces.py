"""`LamarTraceHandler` on agents and chat engines: one sleep trace per agent run or chat call,
with real agents, workflows and chat engines, a real `Memory` and a scripted function-calling LLM."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.chat_engine import CondensePlusContextChatEngine
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.span_handlers import NullSpanHandler
from llama_index.core.memory import Memory
from llama_index.core.query_engine import CustomQueryEngine
from llama_index.core.tools import FunctionTool, QueryEngineTool

from lamar import Experience, Lamar, Scope
from lamar.sleep.traces import load_traces
from lamar_llamaindex import (
    LamarMemoryBlock,
    LamarPostprocessor,
    LamarTraceHandler,
    create_lamar_tools,
    lessons_to_nodes,
)
from tests.integrations.llamaindex.test_llamaindex_agents import Script, call
from tests.integrations.llamaindex.test_llamaindex_workflows import handoff


@pytest.fixture
def traces_path(tmp_path: Path) -> Path:
    return tmp_path / "traces.jsonl"


@pytest.fixture
def handler(traces_path: Path) -> Iterator[LamarTraceHandler]:
    registered = LamarTraceHandler(traces_path, context=lambda bundle: {"asked": str(bundle)[:20]}).register()
    try:
        yield registered
    finally:
        registered.unregister()


def engine() -> tuple[Lamar, str]:
    lam = Lamar(":memory:", k=1, seed=3, holdout=1e-9)
    exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="build")))
    return lam, exp_id


def broken_tool() -> FunctionTool:
    def deploy(target: str) -> str:
        """Deploy a target."""
        raise RuntimeError(f"no credentials for {target}")

    return FunctionTool.from_defaults(fn=deploy)


async def test_an_agent_run_is_one_trace_with_its_turn_lessons_and_tool_errors(
        handler: LamarTraceHandler, traces_path: Path) -> None:
    # The handler heard only QueryStartEvent/QueryEndEvent: an agent's run left no trace at all.
    lam, exp_id = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    script = Script(call("deploy", target="prod"), call("lamar_search_lessons", query="build"), "Cleared the cache.")
    agent = FunctionAgent(tools=[broken_tool(), *create_lamar_tools(lam)], llm=script.llm())

    await agent.run(user_msg="fix the build", memory=memory)

    (trace,) = load_traces(traces_path)
    assert trace.input == "fix the build" and trace.output == "Cleared the cache."
    assert trace.episode_id == block.episode_id("s1") and trace.metadata["episode_ids"] == [trace.episode_id]
    assert trace.context == {"asked": "fix the build", "project": "build"}
    assert trace.attempted == (f"lesson {exp_id}: {lam.get(exp_id).render()}",)
    assert trace.tool_errors == ("deploy: no credentials for prod",)
    assert trace.metadata["kind"] == "agent" and trace.metadata["experience_ids"] == [exp_id]


async def test_a_workflow_of_agents_and_a_react_agent_write_one_trace_a_run(
        handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="u1", memory_blocks=[block])
    script = Script(handoff("fixer"), "Raised it.")
    workflow = AgentWorkflow(root_agent="triage", agents=[
        FunctionAgent(name="triage", description="sorts requests", llm=script.llm(), can_handoff_to=["fixer"]),
        FunctionAgent(name="fixer", description="fixes builds", llm=script.llm())])
    await workflow.run(user_msg="the build timed out", memory=memory)

    react = Script("Thought: I can answer.\nAnswer: Cleared it.")
    memory = Memory.from_defaults(session_id="r1", memory_blocks=[block], insert_method="user")
    await ReActAgent(tools=[], llm=react.llm()).run(user_msg="the build fails", memory=memory)

    first, second = load_traces(traces_path)
    assert (first.input, first.output, first.episode_id) == ("the build timed out", "Raised it.",
                                                                block.episode_id("u1"))
    assert (second.input, second.output, second.episode_id) == ("the build fails", "Cleared it.",
                                                                  block.episode_id("r1"))


def chat_engine(lam: Lamar) -> tuple[CondensePlusContextChatEngine, LamarPostprocessor]:
    post = LamarPostprocessor(lam, top_n=1, context={"project": "build"})
    index = VectorStoreIndex(lessons_to_nodes(lam))
    return CondensePlusContextChatEngine.from_defaults(index.as_retriever(), node_postprocessors=[post]), post


async def test_each_chat_call_is_one_trace(handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, exp_id = engine()
    chat, post = chat_engine(lam)

    answer = chat.chat("the build fails")
    episodes = [post.last_episode_id]
    await chat.achat("and again")
    episodes.append(post.last_episode_id)
    streamed = chat.stream_chat("a third time")
    episodes.append(post.last_episode_id)
    text = "".join(streamed.response_gen)

    traces = load_traces(traces_path)
    assert [t.input for t in traces] == ["the build fails", "and again", "a third time"]
    assert [t.episode_id for t in traces] == episodes and len(set(episodes)) == 3
    assert traces[0].output == str(answer) and "clear the cache" in traces[0].output
    assert traces[2].output == "" and "clear the cache" in text  # the stream was left whole for the caller
    assert all(t.attempted[0].startswith(f"lesson {exp_id}: ") and t.metadata["kind"] == "chat" for t in traces)


async def test_a_query_inside_an_agent_is_part_of_the_agents_trace(
        handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, exp_id = engine()
    post = LamarPostprocessor(lam, top_n=1, context={"project": "build"})
    tool = QueryEngineTool.from_defaults(
        VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(node_postprocessors=[post]),
        name="docs", description="Search the build docs.")
    script = Script(call("docs", input="why does the build fail"), "Cleared the cache.")

    await FunctionAgent(tools=[tool], llm=script.llm()).run(user_msg="fix the build")

    (trace,) = load_traces(traces_path)  # one trace: the agent's, not one more for its tool's query
    assert trace.input == "fix the build" and trace.episode_id == post.last_episode_id
    assert trace.metadata["experience_ids"] == [exp_id]


async def test_a_failed_agent_run_is_traced_with_its_error(handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    agent = FunctionAgent(tools=[], llm=Script().llm())  # no reply scripted: the model raises

    with pytest.raises(RuntimeError, match="the model is down"):
        await agent.run(user_msg="fix the build", memory=memory)

    (trace,) = load_traces(traces_path)
    assert trace.input == "fix the build" and trace.output == ""
    assert trace.episode_id == block.episode_id("s1") and "the model is down" in trace.tool_errors[0]


class Lessons(CustomQueryEngine):
    """A query engine of its own: it overrides `query`, which then emits no QueryStartEvent."""

    post: LamarPostprocessor
    index: VectorStoreIndex

    def custom_query(self, query_str: str) -> str:
        nodes = self.post.postprocess_nodes(self.index.as_retriever().retrieve(query_str), query_str=query_str)
        return " / ".join(n.node.get_content() for n in nodes)


def test_a_custom_query_engine_is_traced_too(handler: LamarTraceHandler, traces_path: Path) -> None:
    lam, exp_id = engine()
    post = LamarPostprocessor(lam, top_n=1, context={"project": "build"})
    answer = Lessons(post=post, index=VectorStoreIndex(lessons_to_nodes(lam))).query("the build fails")

    (trace,) = load_traces(traces_path)
    assert (trace.input, trace.output, trace.episode_id) == ("the build fails", str(answer), post.last_episode_id)
    assert trace.metadata["kind"] == "query" and trace.metadata["experience_ids"] == [exp_id]


class StreamDrained(NullSpanHandler):
    """Waits, at a chat span's end, for the thread that drains its stream: the race the trace must not depend on."""

    def span_exit(self, id_: str, bound_args: Any, instance: Any = None, result: Any = None, **kwargs: Any) -> None:
        thread = getattr(result, "write_response_to_history_thread", None)
        if thread is not None:
            thread.join()


def test_a_streamed_chat_is_written_without_its_text_however_fast_the_stream_ends(traces_path: Path) -> None:
    lam, _ = engine()
    chat, _ = chat_engine(lam)
    root = get_dispatcher()
    first = StreamDrained()
    root.span_handlers = [first, *root.span_handlers]  # heard before the trace handler
    handler = LamarTraceHandler(traces_path).register()
    try:
        streamed = chat.stream_chat("the build fails")
    finally:
        handler.unregister()
        root.span_handlers = [h for h in root.span_handlers if h is not first]
    assert streamed.is_done and "clear the cache" in streamed.response  # the stream had ended
    (trace,) = load_traces(traces_path)
    assert trace.output == ""


async def test_a_trace_file_that_cannot_be_written_costs_an_agent_run_one_warning_not_the_run(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    handler = LamarTraceHandler(tmp_path).register()  # a folder, not a file: every write fails
    try:
        with caplog.at_level("WARNING", logger="lamar_llamaindex.instrumentation"):
            result = await FunctionAgent(tools=[], llm=Script("Done.").llm()).run(user_msg="fix the build")
    finally:
        handler.unregister()
    assert str(result) == "Done."
    (record,) = [r for r in caplog.records if r.name == "lamar_llamaindex.instrumentation"]
    assert record.levelname == "WARNING" and record.exc_info is None
    assert "could not record the end of FunctionAgent.run (the agent goes on)" in record.getMessage()
