"""What a turn of an agent with `LamarMemoryBlock` is: one episode with the search tool too, whichever reads
first, and none started by a silent model's empty answer; real agents, workflows, `Memory`, a scripted LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, StartEvent, StopEvent, Workflow, step

from lamar import Experience, Lamar, Scope, Signal
from lamar_llamaindex import LamarMemoryBlock, create_lamar_tools, report_response, track_episodes
from tests.integrations.llamaindex.test_llamaindex_agents import Script, call


def engine() -> tuple[Lamar, str, str]:
    lam = Lamar(":memory:", k=1, seed=3, holdout=1e-9)
    build = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="build")))
    web = lam.add(Experience("the web page is blank", "rebuild the bundle", scope=Scope(project="web")))
    return lam, build, web


def episode_of(output: Any) -> str:
    return str(output.raw_output.metadata["episode_id"])


async def test_a_turn_with_the_memory_block_and_the_search_tool_is_one_episode() -> None:
    # Each recalled: the block at the turn's first read, the tool at each call, so a turn logged one
    # episode per piece and the block's report left the search's lessons pending.
    lam, build, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    script = Script(call("lamar_search_lessons", query="the build fails"),
                    call("lamar_search_lessons", query="still the build"), "Cleared the cache.", "Done.")
    agent = FunctionAgent(tools=create_lamar_tools(lam, context={"project": "web"}), llm=script.llm())

    with track_episodes() as log:
        result = await agent.run(user_msg="fix the build", memory=memory)
    turn = block.episode_id("s1")
    assert [episode_of(c.tool_output) for c in result.tool_calls] == [turn, turn]
    assert log.ids == [turn] and lam.stats()["episodes"] == 1
    assert lam.episode(turn or "").injected == [build]  # the turn's lessons, which the model has in memory
    assert all(lam.get(build).render() in c.tool_output.content for c in result.tool_calls)
    assert report_response(lam, result, Signal.SHIPPED) == [turn] and lam.pending() == []

    await agent.run(user_msg="and the next build", memory=memory)  # a new turn: one new episode
    assert lam.stats()["episodes"] == 2 and block.episode_id("s1") != turn


class SearchFirst(Workflow):
    """A workflow that calls the search tool before it reads its memory, as an app's own step may."""

    def __init__(self, search: FunctionTool, memory: Memory) -> None:
        super().__init__(timeout=30)
        self.search, self.memory = search, memory

    @step
    async def answer(self, ctx: Context, ev: StartEvent) -> StopEvent:
        await ctx.store.set("memory", self.memory)
        await self.memory.aput(ChatMessage(role="user", content=ev.user_msg))
        found = await self.search.acall(query=ev.user_msg, ctx=ctx)
        return StopEvent(result=(found, await self.memory.aget()))


async def test_a_search_before_the_memory_is_read_is_the_turns_episode_and_its_lessons() -> None:
    lam, _, web = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    (search,) = create_lamar_tools(lam, context={"project": "web"})

    found, messages = await SearchFirst(search, memory).run(user_msg="the page is blank")
    assert block.episode_id("s1") == episode_of(found) and lam.stats()["episodes"] == 1
    assert lam.get(web).render() in str(messages[0].content)  # the block shows the search's lessons
    assert block.report(Signal.SHIPPED, "s1") == episode_of(found) and lam.pending() == []


async def test_a_search_in_a_turn_whose_block_could_not_recall_becomes_the_turns_episode() -> None:
    lam, _, web = engine()

    def broken(messages: list[ChatMessage]) -> dict[str, str]:
        raise RuntimeError("no project here")

    block = LamarMemoryBlock(lam, context=broken)
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    script = Script(call("lamar_search_lessons", query="the page"), "Rebuilt.")
    agent = FunctionAgent(tools=create_lamar_tools(lam, context={"project": "web"}), llm=script.llm())

    result = await agent.run(user_msg="the page is blank", memory=memory)
    (tool_call,) = result.tool_calls
    assert block.episode_id("s1") == episode_of(tool_call.tool_output) and lam.stats()["episodes"] == 1
    assert lam.episode(episode_of(tool_call.tool_output)).injected == [web]
    assert lam.get(web).render() in str(script.seen[1][0].content)  # the next read shows what the search found


async def test_a_react_agent_with_both_is_one_episode_a_turn() -> None:
    lam, build, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="r1", memory_blocks=[block], insert_method="user")
    script = Script('Thought: I look it up.\nAction: lamar_search_lessons\nAction Input: {"query": "build"}',
                    "Thought: I can answer.\nAnswer: Cleared the cache.")
    agent = ReActAgent(tools=create_lamar_tools(lam), llm=script.llm())

    with track_episodes() as log:
        result = await agent.run(user_msg="fix the build", memory=memory)
    (tool_call,) = result.tool_calls
    assert log.ids == [block.episode_id("r1")] == [episode_of(tool_call.tool_output)]
    assert lam.episode(log.ids[0]).injected == [build]


def test_the_search_tool_called_by_hand_is_still_one_episode_a_call() -> None:
    lam, _, web = engine()
    (search,) = create_lamar_tools(lam, context={"project": "web"})
    first, second = search.call(query="a"), search.call(query="b")
    assert episode_of(first) != episode_of(second) and lam.stats()["episodes"] == 2
    assert first.raw_output.metadata["experience_ids"] == [web]


class Silent(MockFunctionCallingLLM):
    """A model whose stream ends before its first chunk (a provider's empty reply)."""

    async def astream_chat(self, messages: Any, **kwargs: Any) -> AsyncIterator[ChatResponse]:  # type: ignore[override]
        async def nothing() -> AsyncIterator[ChatResponse]:
            return
            yield

        return nothing()


async def test_the_empty_answer_of_a_silent_model_is_no_new_turn() -> None:
    # FunctionAgent stores what the model streamed as its answer, a bare ChatMessage() (role user) when
    # nothing came: the block read it as the user's next message, gave the turn `silent_outcome` and
    # logged a second episode that no one would report.
    lam, _, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"}, outcome=lambda m: None, silent_outcome=Signal.ACCEPTED)
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])

    await FunctionAgent(tools=[], llm=Silent()).run(user_msg="fix the build", memory=memory)
    assert lam.stats()["episodes"] == 1 and lam.episode(block.episode_id("s1") or "").signal is None

    first = block.episode_id("s1")
    await FunctionAgent(tools=[], llm=Script("Cleared it.").llm()).run(user_msg="fix it please", memory=memory)
    assert lam.episode(first or "").signal == "accepted" and block.episode_id("s1") != first  # a real next turn


class SearchBeforeTheMessage(Workflow):
    """A workflow whose step searches before it puts the user's message into its memory and reads it."""

    def __init__(self, search: FunctionTool, memory: Memory, sync: bool) -> None:
        super().__init__(timeout=30)
        self.search, self.memory, self.sync = search, memory, sync

    @step
    async def answer(self, ctx: Context, ev: StartEvent) -> StopEvent:
        await ctx.store.set("memory", self.memory)
        found = self.search.call(query=ev.user_msg) if self.sync else await self.search.acall(query=ev.user_msg)
        await self.memory.aput(ChatMessage(role="user", content=ev.user_msg))
        messages = await self.memory.aget()
        await self.memory.aput(ChatMessage(role="assistant", content="Done."))
        return StopEvent(result=(found, messages))


@pytest.mark.parametrize("sync", [False, True])
async def test_a_search_before_the_turns_message_is_in_memory_starts_the_turns_episode(sync: bool) -> None:
    # The search saw the previous turn's history (the sync one the block's last turn): each later run
    # joined the previous turn's episode, and the first turn's read logged a second episode.
    lam, _, web = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"},
                             outcome=lambda m: Signal.CORRECTED if "still" in str(m.content) else None)
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    (search,) = create_lamar_tools(lam, context={"project": "web"})
    workflow = SearchBeforeTheMessage(search, memory, sync)

    episodes = []
    for turn in ("the page is blank", "it is still blank", "and the footer"):
        found, messages = await workflow.run(user_msg=turn)
        episodes.append(episode_of(found))
        assert block.episode_id("s1") == episodes[-1]  # the block's read joined the search's episode
        assert lam.get(web).render() in str(messages[0].content)
    assert len(set(episodes)) == 3 and lam.stats()["episodes"] == 3
    assert lam.episode(episodes[0]).signal == "corrected"  # the second turn's message answered the first
    assert lam.episode(episodes[1]).signal is None and [p.episode_id for p in lam.pending()] == episodes[1:]
