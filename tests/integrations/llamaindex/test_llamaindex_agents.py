"""Lamar in LlamaIndex agents: `create_lamar_tools` as FunctionTools, `LamarMemoryBlock` in a
`Memory`, and a failed run, with a real `FunctionAgent` and a scripted function-calling LLM."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus
from llama_index.core.tools import FunctionTool, QueryEngineTool

from lamar import Experience, InvalidArgument, Lamar, Scope, Signal
from lamar.recall import FENCE_OPEN
from lamar_llamaindex import (
    LamarMemoryBlock,
    LamarPostprocessor,
    create_lamar_tools,
    episode_ids,
    lessons_to_nodes,
    report_response,
    track_episodes,
)


def engine() -> tuple[Lamar, str]:
    lam = Lamar(":memory:", k=2, seed=3, holdout=1e-9)
    exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    lam.add(Experience("the web page is blank", "rebuild the bundle", scope=Scope(project="web")))
    return lam, exp_id


class Script:
    """A scripted LLM turn by turn: each call answers with the next message and keeps what it saw."""

    def __init__(self, *replies: ChatMessage | str) -> None:
        self.replies = [r if isinstance(r, ChatMessage) else ChatMessage(role="assistant", content=r)
                        for r in replies]
        self.seen: list[list[ChatMessage]] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.seen.append(list(messages))
        if not self.replies:
            raise RuntimeError("the model is down")
        return self.replies.pop(0)

    def llm(self) -> MockFunctionCallingLLM:
        return MockFunctionCallingLLM(response_generator=self)


def call(name: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT,
                       blocks=[ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=kwargs)])


async def test_search_tool_output_carries_the_episode() -> None:
    lam, exp_id = engine()
    script = Script(call("lamar_search_lessons", query="the build fails"), "Cleared the cache.")
    agent = FunctionAgent(tools=create_lamar_tools(lam, context={"project": "trace"}), llm=script.llm())
    with track_episodes() as log:
        result = await agent.run(user_msg="fix the build")
    (tool_call,) = result.tool_calls
    document = tool_call.tool_output.raw_output
    episode_id = document.metadata["episode_id"]
    assert lam.episode(episode_id).injected == [exp_id] and document.metadata["experience_ids"] == [exp_id]
    assert log.ids == [episode_id]
    assert episode_id in tool_call.tool_output.content and lam.get(exp_id).render() in tool_call.tool_output.content


async def test_report_response_finds_the_episodes_of_an_agents_search_calls() -> None:
    # An agent's result has no source nodes and iterates as an empty mapping: report_response
    # returned [] and reported nothing, and the episode the agent's search logged stayed pending.
    lam, _ = engine()
    plain = FunctionTool.from_defaults(fn=lambda: "deployed", name="deploy", description="Deploy.")
    script = Script(call("lamar_search_lessons", query="the build fails"), call("deploy"), "Cleared the cache.")
    tools = [*create_lamar_tools(lam, context={"project": "trace"}), plain]
    result = await FunctionAgent(tools=tools, llm=script.llm()).run(user_msg="fix the build")
    search_call = result.tool_calls[0]
    episode_id = search_call.tool_output.raw_output.metadata["episode_id"]

    assert episode_ids(search_call) == [episode_id]  # one ToolCallResult, as stream_events yields it
    assert report_response(lam, result, Signal.SHIPPED) == [episode_id]  # the plain tool's text is no id
    assert lam.episode(episode_id).signal == "shipped" and lam.pending() == []


async def test_a_query_engine_tool_in_an_agent_is_an_episode_a_query_that_its_output_reports() -> None:
    # What the page says of a RAG agent: LamarPostprocessor chooses among the nodes its query retrieved,
    # an episode apart from the memory block's turn; the agent's output carries it for report_response.
    lam, exp_id = engine()
    post = LamarPostprocessor(lam, top_n=1, context={"project": "trace"})
    tool = QueryEngineTool.from_defaults(
        VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(similarity_top_k=5, node_postprocessors=[post]),
        name="docs", description="Search the build docs.")
    block = LamarMemoryBlock(lam, context={"project": "trace"})
    memory = Memory.from_defaults(session_id="q1", memory_blocks=[block])
    script = Script(call("docs", input="why does the build fail"), "Cleared the cache.")

    with track_episodes() as log:
        result = await FunctionAgent(tools=[tool], llm=script.llm()).run(user_msg="fix the build", memory=memory)
    assert log.ids == [block.episode_id("q1"), post.last_episode_id] and lam.episode(log.ids[1]).injected == [exp_id]
    assert report_response(lam, result, Signal.SHIPPED) == [post.last_episode_id]
    assert report_response(lam, log, Signal.SHIPPED, replace=True) == log.ids and lam.pending() == []


async def test_the_agent_reports_the_users_reaction() -> None:
    lam, exp_id = engine()
    tools = create_lamar_tools(lam, context={"project": "trace"}, report=True)
    assert "USER" in tools[1].metadata.fn_schema.model_json_schema()["properties"]["outcome"]["description"]
    search = Script(call("lamar_search_lessons", query="build"), "Done.")
    first = await FunctionAgent(tools=tools, llm=search.llm()).run(user_msg="fix the build")
    episode_id = first.tool_calls[0].tool_output.raw_output.metadata["episode_id"]
    report = Script(call("lamar_report_outcome", episode_id=episode_id, outcome="corrected",
                         evidence="user: that broke it"), "Noted.")
    await FunctionAgent(tools=tools, llm=report.llm()).run(user_msg="that broke it")
    assert lam.episode(episode_id).signal == "corrected" and lam.evidence(exp_id).injected == 1
    with pytest.raises(ValueError):
        tools[1].call(episode_id=episode_id, outcome="great", evidence="me")


async def test_a_bad_report_call_is_a_lamar_error_that_names_what_to_pass() -> None:
    """The model reads the tool's error: it names the field and the values allowed (a LamarError,
    still the ValueError and TypeError it was), never a validator's dump."""
    from lamar import InvalidArgument

    lam, _ = engine()
    search, report = create_lamar_tools(lam, context={"project": "trace"}, report=True)
    episode_id = search.call(query="build").raw_output.metadata["episode_id"]
    for arguments, words in [
        ({"episode_id": episode_id, "outcome": "great", "evidence": "me"}, "outcome must be one of shipped, accepted"),
        ({"episode_id": episode_id, "outcome": "shipped"}, "evidence must quote"),
        ({"outcome": "shipped", "evidence": "user: thanks"}, "episode_id must be the episode id"),
    ]:
        with pytest.raises(InvalidArgument, match=words):
            report.call(**arguments)
        with pytest.raises(InvalidArgument, match=words):
            await report.acall(**arguments)
    script = Script(call("lamar_report_outcome", episode_id=episode_id, outcome="great", evidence="me"), "Sorry.")
    result = await FunctionAgent(tools=[search, report], llm=script.llm()).run(user_msg="it is great")
    (tool_call,) = result.tool_calls
    assert tool_call.tool_output.is_error and "outcome must be one of shipped" in tool_call.tool_output.content
    assert "validation error" not in tool_call.tool_output.content
    assert lam.episode(episode_id).signal is None  # nothing was reported


async def test_a_report_the_store_refuses_tells_the_model_what_it_can_do_not_the_python_api(tmp_path) -> None:
    """A second report of an episode (the block's `outcome=` or the app reported it first) told the agent to
    "pass replace=True", which the tool does not take, and must not: a model would change the user's verdict."""
    from lamar import DuplicateReport, UnknownEpisode

    lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    lam.add(Experience("the build fails", "clear the cache"))
    search, report = create_lamar_tools(lam, report=True)
    episode_id = search.call(query="build").raw_output.metadata["episode_id"]
    lam.report(episode_id, Signal.ACCEPTED)  # the app, first
    script = Script(call("lamar_report_outcome", episode_id=episode_id, outcome="reverted", evidence="user: undo"),
                    call("lamar_report_outcome", episode_id="ep_0123456789abcdef", outcome="reverted",
                         evidence="user: undo"), "Noted.")
    result = await FunctionAgent(tools=[search, report], llm=script.llm()).run(user_msg="undo it")
    twice, unknown = (c.tool_output for c in result.tool_calls)
    assert twice.is_error and "already reported (accepted)" in twice.content
    assert "the first report stands" in twice.content and "replace" not in twice.content
    assert unknown.is_error and "ep_0123456789abcdef" in unknown.content
    assert "pass the episode id that the search tool returned" in unknown.content and "recall()" not in unknown.content
    assert lam.episode(episode_id).signal == "accepted"
    with pytest.raises(DuplicateReport, match="the first report stands"):  # still the error a Python caller catches
        report.call(episode_id=episode_id, outcome="shipped", evidence="user: thanks")
    with pytest.raises(UnknownEpisode, match="search tool returned"):
        await report.acall(episode_id="ep_0123456789abcdef", outcome="shipped", evidence="user: thanks")


async def test_the_report_tool_reads_an_outcome_as_its_description_spells_it() -> None:
    """The outcome's description says "re-asked the same thing", and a model copies it: the tool refused
    're-asked' (and 'Shipped'), which every other entry point reads as the signal."""
    lam, _ = engine()
    search, report = create_lamar_tools(lam, context={"project": "trace"}, report=True)
    assert "re-asked" in report.metadata.fn_schema.model_json_schema()["properties"]["outcome"]["description"]
    for said, signal in (("re-asked", "reasked"), ("Shipped", "shipped"), (" Accepted ", "accepted")):
        episode_id = search.call(query="build").raw_output.metadata["episode_id"]
        script = Script(call("lamar_report_outcome", episode_id=episode_id, outcome=said, evidence="user: again"),
                        "Noted.")
        result = await FunctionAgent(tools=[search, report], llm=script.llm()).run(user_msg="same thing again")
        (tool_call,) = result.tool_calls
        assert not tool_call.tool_output.is_error, tool_call.tool_output.content
        assert tool_call.tool_output.content == f"Recorded {signal} for {episode_id}."
        assert lam.episode(episode_id).signal == signal
    with pytest.raises(InvalidArgument, match=re.escape("got 'revrted' (did you mean 'reverted'?)")):
        report.call(episode_id=episode_id, outcome="revrted", evidence="user: undo")


def build_tool() -> FunctionTool:
    def build(target: str) -> str:
        """Build a target."""
        return f"built {target}"

    return FunctionTool.from_defaults(fn=build)


async def test_memory_block_is_one_episode_per_turn_and_the_next_message_reports_it() -> None:
    lam, exp_id = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"},
                             outcome=lambda m: Signal.CORRECTED if "broke" in str(m.content) else None,
                             silent_outcome=Signal.ACCEPTED)
    memory = Memory.from_defaults(session_id="s1", token_limit=40_000, memory_blocks=[block])
    script = Script(call("build", target="app"), "Built it.", "Sorry, reverting.", "Glad it works.")
    agent = FunctionAgent(tools=[build_tool()], llm=script.llm())

    await agent.run(user_msg="build the app", memory=memory)  # two model calls in this turn
    assert lam.stats()["episodes"] == 1
    first = block.episode_id("s1")
    assert len(script.seen) == 2
    for messages in script.seen:  # the lessons reached the model on both calls
        assert any(FENCE_OPEN in str(m.content) and lam.get(exp_id).render() in str(m.content) for m in messages)

    await agent.run(user_msg="that broke the build", memory=memory)
    second = block.episode_id("s1")
    assert second != first and lam.episode(first).signal == "corrected"
    await agent.run(user_msg="thanks, all good now", memory=memory)
    assert lam.episode(second).signal == "accepted"  # the next message said nothing: silent_outcome
    assert [p.episode_id for p in lam.pending()] == [block.episode_id("s1")]
    assert block.report(Signal.SHIPPED, "s1") == block.episode_id("s1") and lam.pending() == []



LONG = {"project": "trace", "log": "x" * 5_000}  # a value of 5,000 characters on one turn


def one_warning(seen: list[warnings.WarningMessage]) -> None:
    said = [str(w.message) for w in seen if issubclass(w.category, UserWarning)]
    assert len(said) == 1 and "left out 'log' (5,000 characters)" in said[0] and "4,000" in said[0], said


async def test_a_long_value_from_the_context_function_is_left_out_and_the_turn_learns() -> None:
    lam, exp_id = engine()
    block = LamarMemoryBlock(lam, context=lambda messages: LONG)
    memory = Memory.from_defaults(session_id="s1", token_limit=40_000, memory_blocks=[block])
    search = Script(call("lamar_search_lessons", query="the build fails"), "Cleared the cache.")
    searching = FunctionAgent(tools=create_lamar_tools(lam, context=lambda query: LONG), llm=search.llm())
    script = Script("Built it.")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        answered = await FunctionAgent(tools=[build_tool()], llm=script.llm()).run(user_msg="build", memory=memory)
    one_warning(seen)
    assert str(answered) == "Built it." and lam.episode(block.episode_id("s1") or "").injected == [exp_id]
    assert any(lam.get(exp_id).render() in str(m.content) for m in script.seen[0])
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = await searching.run(user_msg="fix the build")
    one_warning(seen)
    (tool_call,) = result.tool_calls
    episode = lam.episode(tool_call.tool_output.raw_output.metadata["episode_id"])
    assert episode.context == {"project": "trace"} and episode.injected == [exp_id]
    assert str(result) == "Cleared the cache." and lam.get(exp_id).render() in tool_call.tool_output.content

async def test_memory_block_reads_many_times_recall_once() -> None:
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"})
    history = [ChatMessage(role="user", content="fix it")]
    texts = {await block.aget(history, session_id="a") for _ in range(5)}
    assert len(texts) == 1 and lam.stats()["episodes"] == 1
    await block.aget(history, session_id="b")  # another session: its own turn
    await block.aget([*history, ChatMessage(role="assistant", content="ok"),
                      ChatMessage(role="user", content="again")], session_id="a")
    assert lam.stats()["episodes"] == 3


async def test_a_report_for_a_session_with_no_turn_names_the_sessions_and_the_argument_order() -> None:
    """Every other report takes (id, signal); block.report("ticket-7", "shipped") said only "no turn
    yet in session 'shipped'", and block.report(signal) with no session "no turn yet in session None"."""
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"})
    with pytest.raises(InvalidArgument, match="no session has had a turn yet"):
        block.report(Signal.SHIPPED, "ticket-7")
    agent = FunctionAgent(tools=[], llm=Script("Cleared the cache.").llm())
    await agent.run(user_msg="the build fails", memory=Memory.from_defaults(session_id="ticket-7",
                                                                            memory_blocks=[block]))
    with pytest.raises(InvalidArgument, match=r"the signal comes first: block.report\(signal, 'ticket-7'\)"):
        block.report("ticket-7", "shipped")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"no turn yet in session None.*sessions with a turn are \['ticket-7'\]"):
        block.report(Signal.SHIPPED)
    assert lam.stats()["reports"] == 0
    assert block.report(Signal.SHIPPED, "ticket-7") == block.episode_id("ticket-7") is not None
    assert lam.stats()["reports"] == 1


class _Counted(OrderedDict[str, Any]):
    """The block's sessions, counting each one read by a walk over them."""

    read = 0

    def __iter__(self) -> Iterator[str]:
        for key in super().__iter__():
            _Counted.read += 1
            yield key

    def __reversed__(self) -> Iterator[str]:
        for key in super().__reversed__():
            _Counted.read += 1
            yield key


async def test_a_report_reads_its_own_session_not_every_session_the_block_holds() -> None:
    # Each report copied the key of every session the block holds, to name a few in a refusal it
    # seldom makes: a report of each of N sessions read N * N keys.
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"})
    sessions = [f"ticket-{i}" for i in range(200)]
    for session in sessions:
        await block.aget([ChatMessage(role="user", content="fix it")], session_id=session)
    block._turns = _Counted(block._turns)
    _Counted.read = 0
    for session in sessions:
        block.report(Signal.SHIPPED, session)
    assert lam.stats()["reports"] == len(sessions) and _Counted.read == 0
    with pytest.raises(InvalidArgument, match=r"sessions with a turn are \['ticket-195', .*'ticket-199'\]"):
        block.report(Signal.SHIPPED, "ticket-200")
    assert _Counted.read == 5  # the refusal names the latest five
    with pytest.raises(InvalidArgument, match=r"the signal comes first: block.report\(signal, 'ticket-3'\)"):
        block.report("ticket-3", "shipped")  # type: ignore[arg-type]  # a session older than the latest five


async def test_concurrent_reads_of_one_turn_recall_once() -> None:
    """Two reads of a session's memory at once (parallel steps of one workflow) in the same turn:
    both find no episode yet; the recalls are held at a barrier, so without one recall per turn
    both would log an episode and the first would be left pending for good."""
    lam, _ = engine()
    recall = lam.recall
    both = threading.Barrier(2)

    def meeting(*args: Any, **kwargs: Any) -> Any:
        with contextlib.suppress(threading.BrokenBarrierError):  # alone at the barrier: one recall per turn
            both.wait(timeout=0.5)
        return recall(*args, **kwargs)

    lam.recall = meeting  # type: ignore[method-assign]
    memory = Memory.from_defaults(session_id="s", memory_blocks=[LamarMemoryBlock(lam, context={"project": "trace"})])
    await memory.aput(ChatMessage(role="user", content="fix it"))
    first, second = await asyncio.gather(memory.aget(), memory.aget())
    assert lam.stats()["episodes"] == 1 and len(lam.pending()) == 1
    assert str(first) == str(second)


@pytest.mark.parametrize("where", ["memory", "tools"])
async def test_a_failed_agent_run_leaves_no_pending_episode(where: str) -> None:
    lam, _ = engine()
    script = Script(call("build", target="app"))  # the second model call raises
    tools = [build_tool()]
    memory = None
    if where == "memory":
        memory = Memory.from_defaults(session_id="s",
                                      memory_blocks=[LamarMemoryBlock(lam, context={"project": "trace"})])
    else:
        script = Script(call("lamar_search_lessons", query="q"))
        tools += create_lamar_tools(lam, context={"project": "trace"})
    agent = FunctionAgent(tools=tools, llm=script.llm())
    with pytest.raises(RuntimeError, match="model is down"), track_episodes(lamar=lam) as log:
        await agent.run(user_msg="build the app", memory=memory)
    assert len(log) == 1 and lam.stats()["episodes"] == 1
    assert lam.pending() == []
    (event,) = [e for e in lam.store.read(0) if e.kind == "outcome"]
    assert event.data["expired"] is True and "RuntimeError" in event.data["reason"]


def test_module_examples_run() -> None:
    import doctest

    import lamar_llamaindex.tools

    result = doctest.testmod(lamar_llamaindex.tools)
    assert result.attempted > 0 and result.failed == 0


async def test_a_store_that_cannot_be_written_costs_the_lessons_not_the_turn(tmp_path: Any) -> None:
    import sqlite3

    from lamar.store.sqlite import SqliteStore

    path = tmp_path / "s.db"
    lam = Lamar(SqliteStore(path, timeout=0.05), seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    memory = Memory.from_defaults(session_id="s", memory_blocks=[LamarMemoryBlock(lam, context={"project": "trace"})])
    script = Script("Answered without lessons.")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        result = await FunctionAgent(tools=[], llm=script.llm()).run(user_msg="hi", memory=memory)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert str(result.response.content) == "Answered without lessons."
    assert all(FENCE_OPEN not in str(m.content) for m in script.seen[0])
    assert lam.stats()["episodes"] == 0


async def test_a_previous_turn_that_sleep_compacted_costs_nothing() -> None:
    # The app reported turn 1 itself, then sleep compacted it: settling it finds no episode.
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"}, silent_outcome=Signal.ACCEPTED)
    memory = Memory.from_defaults(session_id="s1", token_limit=40_000, memory_blocks=[block])
    agent = FunctionAgent(tools=[], llm=Script("Cleared it.", "You're welcome.").llm())
    await agent.run(user_msg="the build fails", memory=memory)
    first = block.episode_id("s1")
    lam.report(first, Signal.SHIPPED)
    report = lam.sleep(keep_last=0)
    assert lam.apply(report, only=[p.id for p in report.of_kind("compact")]).applied
    answer = await agent.run(user_msg="thanks", memory=memory)
    assert "welcome" in str(answer) and block.episode_id("s1") != first


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_search_on_a_store_that_cannot_be_written_tells_the_model_to_go_on(tmp_path: Any, mode: str) -> None:
    import sqlite3

    from lamar.store.sqlite import SqliteStore

    path = tmp_path / "s.db"
    lam = Lamar(SqliteStore(path, timeout=0.05), seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    (search,) = create_lamar_tools(lam, context={"project": "trace"})
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another process holds the write lock: recall cannot log its episode
    try:
        if mode == "sync":
            output = search.call(query="the build fails")
        else:
            script = Script(call("lamar_search_lessons", query="the build fails"), "Fixed it without lessons.")
            result = await FunctionAgent(tools=[search], llm=script.llm()).run(user_msg="fix the build")
            assert str(result.response.content) == "Fixed it without lessons."
            (tool_call,) = result.tool_calls
            output = tool_call.tool_output
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert not output.is_error and output.content.startswith("no lessons this time (go on without them)")
    assert "episode_id" not in output.raw_output.metadata and output.raw_output.metadata["experience_ids"] == []
    assert lam.stats()["episodes"] == 0


def _context_service_down(query: str) -> dict[str, str]:
    raise RuntimeError("the context service is down")


@pytest.mark.parametrize("mode", ["sync", "async", "with the block"])
@pytest.mark.parametrize("context", [_context_service_down, lambda query: None])
async def test_a_search_whose_context_function_fails_tells_the_model_to_go_on(
        tmp_path: Any, mode: str, context: Any, caplog: Any) -> None:
    # The app's function runs inside the agent's tool call: its error reached the model as the tool's,
    # where a store that fails tells the model to go on without lessons.
    lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
    lam.add(Experience("the build fails", "clear the cache"))
    (search,) = create_lamar_tools(lam, context=context)
    with caplog.at_level("WARNING", logger="lamar_llamaindex.tools"):
        if mode == "sync":
            output = search.call(query="the build fails")
        else:
            script = Script(call("lamar_search_lessons", query="the build fails"), "Fixed it without lessons.")
            memory = Memory.from_defaults(session_id="s1", memory_blocks=[LamarMemoryBlock(lam, context={})])
            result = await FunctionAgent(tools=[search], llm=script.llm()).run(
                user_msg="fix the build", memory=memory if mode == "with the block" else None)
            assert str(result.response.content) == "Fixed it without lessons."
            (tool_call,) = result.tool_calls
            output = tool_call.tool_output
    if mode == "with the block":  # the block recalled first: the search joins its turn
        assert not output.is_error and lam.stats()["episodes"] == 1
        return
    assert not output.is_error and output.content.startswith("no lessons this time (go on without them)")
    assert "episode_id" not in output.raw_output.metadata and lam.stats()["episodes"] == 0
    assert any("context function" in r.getMessage() for r in caplog.records if r.name == "lamar_llamaindex.tools")



@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_report_on_a_store_gone_away_is_the_tools_error_and_one_warning(
        tmp_path: Any, mode: str, caplog: pytest.LogCaptureFixture) -> None:
    """The agent reads the tool's error and goes on; the app's log must say it too, or a store gone
    away goes unnoticed while every report the agent makes is lost."""
    from lamar import StoreError

    path = tmp_path / "lessons.db"
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("the build fails", "clear the cache"))
    _, report = create_lamar_tools(lam, report=True)
    path.unlink()
    arguments = {"episode_id": "ep_1", "outcome": "accepted", "evidence": "user: thanks"}
    with caplog.at_level("WARNING", logger="lamar_llamaindex.tools"), pytest.raises(StoreError, match="deleted"):
        if mode == "sync":
            report.call(**arguments)
        else:
            await report.acall(**arguments)
    (record,) = [r for r in caplog.records if r.name == "lamar_llamaindex.tools"]
    assert record.levelname == "WARNING" and "ep_1" in record.getMessage() and "deleted" in record.getMessage()

def test_a_silent_outcome_that_is_no_outcome_is_refused_when_the_block_is_made() -> None:
    from lamar import InvalidArgument, InvalidReward

    lam, _ = engine()
    with pytest.raises(InvalidReward, match="silent_outcome: unknown signal 'great'"):
        LamarMemoryBlock(lam, context={"project": "trace"}, silent_outcome="great")
    with pytest.raises(InvalidArgument, match="outcome must be a function"):
        LamarMemoryBlock(lam, context={"project": "trace"}, outcome="corrected")


async def test_an_outcome_that_is_no_outcome_costs_its_report_not_the_session(
        caplog: pytest.LogCaptureFixture) -> None:
    """The turn stays unreported when the outcome is refused: raising would fail every later turn
    of the session, each trying to settle the same turn again."""
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"}, outcome=lambda message: "great job")
    memory = Memory.from_defaults(session_id="ticket-3", memory_blocks=[block])
    script = Script("one", "two", "three")
    agent = FunctionAgent(tools=[], llm=script.llm())
    episodes = []
    with caplog.at_level("WARNING", logger="lamar_llamaindex.memory"):
        for message in ("the build fails", "still failing", "and now?"):
            await agent.run(user_msg=message, memory=memory)
            episodes.append(block.episode_id("ticket-3"))
    assert len(set(episodes)) == 3 and len(script.seen) == 3
    assert "ignored the outcome" in caplog.text and "great job" in caplog.text
    assert [p.episode_id for p in lam.pending()] == episodes


async def test_a_memory_that_flushes_old_messages_keeps_one_episode_per_turn() -> None:
    """A small `token_limit` makes `Memory` move old messages out of the chat history at the end
    of a turn; the agent reads its memory once more after that, and the turn must still be the
    same one: no second episode, and the turn not settled by its own user message."""
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"}, silent_outcome=Signal.ACCEPTED)
    memory = Memory.from_defaults(session_id="s1", token_limit=300, memory_blocks=[block])
    turns = []
    for i in range(6):
        script = Script("Done. " + "word " * 40)
        await FunctionAgent(tools=[], llm=script.llm()).run(user_msg=f"turn {i} " + "x " * 30, memory=memory)
        turns.append(block.episode_id("s1"))
        assert lam.episode(turns[-1]).signal is None  # the current turn waits for the next message
    assert len(await memory.aget_all()) > len(await memory.aget_all(status=MessageStatus.ACTIVE))  # it flushed
    assert lam.stats()["episodes"] == 6 and len(set(turns)) == 6
    assert [lam.episode(e).signal for e in turns[:-1]] == ["accepted"] * 5


@pytest.mark.parametrize("how", ["cancel", "wait_for"])
async def test_a_cancelled_agent_run_leaves_no_pending_episode(how: str) -> None:
    """A run cancelled mid-tool (`task.cancel()`, `asyncio.wait_for` timing out) raises
    CancelledError, which is no Exception: the block must settle its episode all the same."""
    lam, _ = engine()

    async def slow(target: str) -> str:
        """Build a target, slowly."""
        await asyncio.sleep(30)
        return "built"

    script = Script(call("lamar_search_lessons", query="q"), call("slow", target="app"), "Done.")
    tools = [*create_lamar_tools(lam, context={"project": "trace"}), FunctionTool.from_defaults(async_fn=slow)]

    async def run() -> None:
        with track_episodes(lamar=lam):
            await FunctionAgent(tools=tools, llm=script.llm()).run(user_msg="build the app")

    if how == "cancel":
        task = asyncio.create_task(run())
        while lam.stats()["episodes"] == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    else:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(run(), 0.5)
    assert lam.stats()["episodes"] == 1 and lam.pending() == []
    (event,) = [e for e in lam.store.read(0) if e.kind == "outcome"]
    assert event.data["expired"] is True and "CancelledError" in event.data["reason"]


@pytest.mark.parametrize("broken", ["outcome", "context"])
async def test_an_outcome_or_context_function_that_raises_costs_its_part_not_the_turn(
        broken: str, caplog: pytest.LogCaptureFixture) -> None:
    """The user's function runs inside the agent's turn: its error is logged once, and the turn goes
    on, without that outcome (the turn stays pending) or without lessons (no episode is logged)."""
    lam, _ = engine()

    def fails(_: object) -> Any:
        raise KeyError("ticket")

    block = LamarMemoryBlock(lam, context=fails if broken == "context" else {"project": "trace"},
                             outcome=fails if broken == "outcome" else None)
    memory = Memory.from_defaults(session_id="s", memory_blocks=[block])
    script = Script(call("build", target="app"), "Built it.", "Done again.")
    agent = FunctionAgent(tools=[build_tool()], llm=script.llm())
    with caplog.at_level("WARNING", logger="lamar_llamaindex.memory"):
        await agent.run(user_msg="build the app", memory=memory)  # two reads of the memory in this turn
        first = block.episode_id("s")
        answer = await agent.run(user_msg="and again", memory=memory)
    assert "Done again." in str(answer)
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == (1 if broken == "outcome" else 2)  # one per turn the function failed in
    assert "KeyError" in warnings[0].getMessage() and "ticket" in warnings[0].getMessage()
    if broken == "outcome":
        assert first is not None and lam.episode(first).signal is None  # left pending, not reported
        assert len(lam.pending()) == 2
    else:
        assert first is None and lam.stats()["episodes"] == 0
        assert all(FENCE_OPEN not in str(m.content) for seen in script.seen for m in seen)
        assert block.report(Signal.SHIPPED, "s") is None  # no episode this turn: nothing to report


async def test_a_store_error_at_recall_is_tried_once_per_turn_not_at_every_read(
        caplog: pytest.LogCaptureFixture) -> None:
    """An agent reads its memory at every step of a turn; a recall that failed is not tried again
    at each of them (each try may wait out a lock), nor does a later read start the turn's episode."""
    from lamar import StoreError

    lam, _ = engine()
    tries = []

    def locked(*args: Any, **kwargs: Any) -> Any:
        tries.append(args)
        raise StoreError("cannot write s.db: another connection holds its lock")

    recall = lam.recall
    lam.recall = locked  # type: ignore[method-assign]
    block = LamarMemoryBlock(lam, context={"project": "trace"}, silent_outcome=Signal.ACCEPTED)
    memory = Memory.from_defaults(session_id="s", memory_blocks=[block])
    script = Script(call("build", target="app"), call("build", target="lib"), "Built both.", "Next.")
    agent = FunctionAgent(tools=[build_tool()], llm=script.llm())
    with caplog.at_level("WARNING", logger="lamar_llamaindex.memory"):
        await agent.run(user_msg="build everything", memory=memory)  # three model calls, three reads
    assert len(script.seen) == 3 and len(tries) == 1
    assert len([r for r in caplog.records if r.levelname == "WARNING"]) == 1
    lam.recall = recall  # type: ignore[method-assign]
    await agent.run(user_msg="now the docs", memory=memory)  # the next turn recalls again
    assert lam.stats()["episodes"] == 1 and lam.stats()["reports"] == 0


async def test_a_failed_turn_is_not_given_the_silent_outcome_by_the_next_message() -> None:
    """A run that raised was settled as expired by `track_episodes`; the next user message brings no
    outcome, and silence after a turn that never answered is no acceptance."""
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"}, silent_outcome=Signal.ACCEPTED,
                             outcome=lambda m: Signal.CORRECTED if "wrong" in str(m.content) else None)
    memory = Memory.from_defaults(session_id="s1", token_limit=40_000, memory_blocks=[block])
    script = Script(call("build", target="app"))  # the second model call raises
    agent = FunctionAgent(tools=[build_tool()], llm=script.llm())
    with pytest.raises(RuntimeError, match="model is down"), track_episodes(lamar=lam):
        await agent.run(user_msg="build the app", memory=memory)
    failed = block.episode_id("s1")
    assert failed is not None and lam.episode(failed).settled == "expired"
    script.replies += [ChatMessage(role="assistant", content="Built it."), ChatMessage(role="assistant", content="Ok.")]
    await agent.run(user_msg="try again please", memory=memory)
    assert lam.episode(failed).settled == "expired" and lam.episode(failed).signal is None
    answered = block.episode_id("s1")
    await agent.run(user_msg="thanks", memory=memory)
    assert lam.episode(answered).signal == "accepted"  # a turn that answered: silence accepts it


async def test_a_memory_reset_starts_a_new_turn_even_with_the_same_first_message() -> None:
    """`Memory.reset()` (a chat engine's `reset()`) empties the history without telling the blocks:
    a new conversation that opens with the message the last one opened with is a new turn, with
    its own episode, and the old turn gets its silent outcome."""
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"}, silent_outcome=Signal.ACCEPTED)
    memory = Memory.from_defaults(session_id="s1", token_limit=40_000, memory_blocks=[block])
    await FunctionAgent(tools=[], llm=Script("Cleared.").llm()).run(user_msg="the build fails", memory=memory)
    first = block.episode_id("s1")
    await memory.areset()
    await FunctionAgent(tools=[], llm=Script("Cleared.").llm()).run(user_msg="the build fails", memory=memory)
    assert block.episode_id("s1") != first and lam.stats()["episodes"] == 2
    assert lam.episode(first).signal == "accepted"


async def test_a_flushed_message_is_not_kept_whole() -> None:
    """The block counts a session's flushed turns (up to 4096 sessions) and tells the last one's words from
    another's by a digest: a kept copy of each would hold every session's last long paste in memory."""
    import gc
    import tracemalloc

    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "trace"})
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(40):
            paste = [ChatMessage(role=MessageRole.USER, content=f"{i} " + "a long pasted log line\n" * 4500)]
            await block.aput(paste, from_short_term_memory=True, session_id=f"s{i}")
            del paste
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept < 1_000_000, kept  # 40 pastes of about 100 kB: 4 MB when kept whole
