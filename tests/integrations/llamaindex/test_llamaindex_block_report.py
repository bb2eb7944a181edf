"""The report tool in an agent whose lessons come from `LamarMemoryBlock` alone: the model never sees an episode
id, so a report without one is the user's reaction to the previous answer, the session's turn before this one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from lamar import Experience, InvalidArgument, Lamar, Scope
from lamar_llamaindex import LamarMemoryBlock, create_lamar_tools


class Script:
    """A scripted LLM: each call answers with the next message and keeps the tool results it was shown."""

    def __init__(self, *replies: ChatMessage | str) -> None:
        self.replies = [r if isinstance(r, ChatMessage) else ChatMessage(role="assistant", content=r) for r in replies]
        self.tool_results: list[str] = []

    def __call__(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.tool_results += [str(m.content) for m in messages if m.role == MessageRole.TOOL]
        return self.replies.pop(0)


def report(**kwargs: Any) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
        ToolCallBlock(tool_call_id="call-report", tool_name="lamar_report_outcome", tool_kwargs=kwargs)])


def setup() -> tuple[Lamar, LamarMemoryBlock, Memory, list[Any]]:
    lam = Lamar(":memory:", k=2, seed=3, holdout=1e-9)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    block = LamarMemoryBlock(lam, context={"project": "trace"})
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    return lam, block, memory, create_lamar_tools(lam, context={"project": "trace"}, report=True)


async def test_a_report_without_an_episode_id_reports_the_blocks_previous_turn() -> None:
    lam, block, memory, tools = setup()
    script = Script("Cleared the cache.",
                    report(outcome="corrected", evidence="user: that broke the build"), "Sorry, reverting.")
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=script))
    await agent.run(user_msg="fix the build", memory=memory)
    first = block.episode_id("s1")
    await agent.run(user_msg="that broke the build", memory=memory)
    second = block.episode_id("s1")
    assert first is not None and second != first
    assert script.tool_results == [f"Recorded corrected for {first}."]
    assert lam.episode(first).signal == "corrected" and [p.episode_id for p in lam.pending()] == [second]
    assert "episode_id" not in tools[1].metadata.fn_schema.model_json_schema().get("required", [])


async def test_a_report_without_an_episode_id_in_the_first_turn_names_what_to_pass() -> None:
    lam, block, memory, tools = setup()
    script = Script(report(outcome="shipped", evidence="user: ship it"), "Done.")
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=script))
    await agent.run(user_msg="fix the build", memory=memory)
    (said,) = script.tool_results
    assert "no earlier answer to report" in said and "episode_id" in said, said
    assert [p.episode_id for p in lam.pending()] == [block.episode_id("s1")]


def test_a_report_without_an_episode_id_outside_an_agent_with_the_block_is_refused() -> None:
    _, _, _, tools = setup()
    with pytest.raises(InvalidArgument, match="episode_id must be the episode id the search tool returned"):
        tools[1].call(outcome="shipped", evidence="user: ship it")
