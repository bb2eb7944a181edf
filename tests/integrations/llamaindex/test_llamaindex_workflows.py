"""Lamar in LlamaIndex agent workflows (a handoff inside one user turn, a ReActAgent), with real
workflows, a real `Memory` and a scripted function-calling LLM."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from lamar import Experience, InvalidArgument, Lamar, Scope, Signal
from lamar_llamaindex import (
    LamarMemoryBlock,
    areport_response,
    create_lamar_tools,
    report_response,
    track_episodes,
)
from tests.integrations.llamaindex.test_llamaindex_agents import Script, call


def handoff(to_agent: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[ToolCallBlock(
        tool_call_id=f"call-{to_agent}", tool_name="handoff", tool_kwargs={"to_agent": to_agent, "reason": "theirs"})])


async def test_a_handoff_inside_a_turn_is_one_episode_and_its_own_message_does_not_report_it() -> None:
    # After a handoff the workflow re-reads memory with the turn's user message appended again, the
    # handoff call and result between: that copy once started a new episode (three per turn), and
    # `outcome=` read the turn's own message as the verdict on the turn.
    lam = Lamar(":memory:", k=2, seed=3, holdout=1e-9)
    exp_id = lam.add(Experience("a deploy times out", "raise the grace period", scope=Scope(project="shop")))
    block = LamarMemoryBlock(lam, context={"project": "shop"},
                             outcome=lambda m: Signal.CORRECTED if "still" in str(m.content) else None)
    memory = Memory.from_defaults(session_id="u1", token_limit=40_000, memory_blocks=[block])
    script = Script(handoff("fixer"), "Raised it.", handoff("fixer"), "Rolled back.")
    llm = MockFunctionCallingLLM(response_generator=script)
    workflow = AgentWorkflow(root_agent="triage", agents=[
        FunctionAgent(name="triage", description="sorts requests", llm=llm, can_handoff_to=["fixer"]),
        FunctionAgent(name="fixer", description="fixes deploys", llm=llm)])

    with track_episodes(lamar=lam) as log:
        assert str(await workflow.run(user_msg="the deploy timed out", memory=memory)) == "Raised it."
    first = block.episode_id("u1")
    assert log.ids == [first] and lam.stats()["episodes"] == 1
    assert all(any(lam.get(exp_id).render() in str(m.content) for m in seen) for seen in script.seen)

    await workflow.run(user_msg="it still times out", memory=memory)
    second = block.episode_id("u1")
    assert lam.stats()["episodes"] == 2 and second != first
    assert lam.episode(first).signal == "corrected"  # the next message reported the first turn
    assert [p.episode_id for p in lam.pending()] == [second]  # and not its own turn


async def test_a_search_after_a_handoff_joins_the_turn_of_the_block() -> None:
    # The search finds the agent's memory through the Context of the step it runs in; the agent taking
    # over after a handoff runs its tools in steps of the same workflow, so its search is the turn's episode.
    lam = Lamar(":memory:", k=1, seed=3, holdout=1e-9)
    lam.add(Experience("a deploy times out", "raise the grace period", scope=Scope(project="shop")))
    block = LamarMemoryBlock(lam, context={"project": "shop"})
    memory = Memory.from_defaults(session_id="h1", memory_blocks=[block])
    script = Script(handoff("fixer"), call("lamar_search_lessons", query="deploy timeout"), "Raised it.")
    llm = MockFunctionCallingLLM(response_generator=script)
    workflow = AgentWorkflow(root_agent="triage", agents=[
        FunctionAgent(name="triage", description="sorts requests", llm=llm, can_handoff_to=["fixer"]),
        FunctionAgent(name="fixer", description="fixes deploys", llm=llm, tools=create_lamar_tools(lam))])

    with track_episodes() as log:
        result = await workflow.run(user_msg="the deploy timed out", memory=memory)
    searched = [c.tool_output.raw_output.metadata["episode_id"] for c in result.tool_calls
                if c.tool_name == "lamar_search_lessons"]
    assert searched == [block.episode_id("h1")] == log.ids and lam.stats()["episodes"] == 1


@pytest.mark.parametrize(("insert_method", "reaches"), [("system", False), ("user", True)])
async def test_a_react_agent_sees_the_lessons_only_in_the_user_message(insert_method: str, reaches: bool) -> None:
    # ReActAgent leaves out the system message it reads from memory; docs/llamaindex.md says to
    # give it insert_method="user", and this notices the day LlamaIndex keeps that message.
    lam = Lamar(":memory:", holdout=1e-9)
    exp_id = lam.add(Experience("a deploy times out", "raise the grace period"))
    script = Script("Thought: I can answer.\nAnswer: Raised it.", "Thought: I can answer.\nAnswer: Done.")
    memory = Memory.from_defaults(session_id="r1", memory_blocks=[LamarMemoryBlock(lam)], insert_method=insert_method)
    agent = ReActAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=script))
    assert str(await agent.run(user_msg="the deploy timed out", memory=memory)) == "Raised it."
    assert any(lam.get(exp_id).render() in str(m.content) for m in script.seen[0]) is reaches
    await agent.run(user_msg="and now?", memory=memory)
    assert lam.stats()["episodes"] == 2  # the lessons in the user message do not make a turn look new


async def test_reporting_an_agents_output_that_holds_no_episode_warns_and_names_the_ways_that_work() -> None:
    # The block's turn is never in the agent's output: report_response returned [] in silence, and
    # the turn stayed pending while the app believed it reported.
    lam = Lamar(":memory:", holdout=1e-9)
    lam.add(Experience("a deploy times out", "raise the grace period"))
    block = LamarMemoryBlock(lam)
    memory = Memory.from_defaults(session_id="w1", memory_blocks=[block])
    agent = FunctionAgent(llm=MockFunctionCallingLLM(response_generator=Script("Raised it.")))
    with track_episodes() as log:
        output = await agent.run(user_msg="the deploy timed out", memory=memory)
    said = r"no Lamar episode in this AgentOutput.*block\.report\(signal, session_id\)"
    with pytest.warns(UserWarning, match=said):
        assert report_response(lam, output, Signal.ACCEPTED) == []
    with pytest.warns(UserWarning, match=said):
        assert await areport_response(lam, output, Signal.ACCEPTED) == []
    assert [p.episode_id for p in lam.pending()] == log.ids == [block.episode_id("w1")]
    assert report_response(lam, log, Signal.ACCEPTED) == log.ids and lam.pending() == []


async def test_a_turn_is_not_reported_by_a_message_that_answers_a_turn_another_process_served(tmp_path: Any) -> None:
    # Two web workers, each with its own block, one Lamar file and one chat store: alice's requests
    # land on A, B, A. A's block took her third message for the reaction to her first turn.
    chats = f"sqlite+aiosqlite:///{tmp_path / 'chats.db'}"
    workers = []
    for _ in range(2):
        lam = Lamar(str(tmp_path / "lessons.db"), holdout=1e-9)
        lam.add(Experience("a deploy times out", "raise the grace period"))
        workers.append((lam, LamarMemoryBlock(lam, outcome=lambda m: Signal.CORRECTED if "still" in str(m.content)
                                              else None, silent_outcome=Signal.ACCEPTED)))

    async def request(worker: int, text: str) -> str | None:
        _, block = workers[worker]
        memory = Memory.from_defaults(session_id="alice", async_database_uri=chats, memory_blocks=[block])
        agent = FunctionAgent(llm=MockFunctionCallingLLM(response_generator=Script(f"re: {text}")))
        await agent.run(user_msg=text, memory=memory)
        return block.episode_id("alice")

    first = await request(0, "the deploy timed out")
    second = await request(1, "thanks, that worked")
    third = await request(0, "it still times out")  # about the second answer, not the first
    lam = workers[0][0]
    assert len({first, second, third}) == 3 and lam.episode(first or "").signal is None
    await request(0, "now it works")
    assert lam.episode(third or "").signal == "accepted"  # the next message in its own process still reports it


async def test_a_report_without_a_session_names_the_memorys_own() -> None:
    # Memory.from_defaults() without session_id= draws a random id: block.report(signal) was refused
    # with a list of ids the app never typed, and no word of where to find its own.
    lam = Lamar(":memory:", holdout=1e-9)
    lam.add(Experience("a deploy times out", "raise the grace period"))
    block = LamarMemoryBlock(lam)
    memory = Memory.from_defaults(memory_blocks=[block])
    await FunctionAgent(llm=MockFunctionCallingLLM(response_generator=Script("Raised it."))).run(
        user_msg="the deploy timed out", memory=memory)
    with pytest.raises(InvalidArgument, match=r"block\.report\(signal, memory\.session_id\)"):
        block.report(Signal.SHIPPED)
    assert block.report(Signal.SHIPPED, memory.session_id) == block.episode_id(memory.session_id) is not None
