"""Lamar in a `CodeActAgent`: its turns with `LamarMemoryBlock`, and Lamar's search tool called by the
agent's code, which runs it synchronously (real agents, `Memory`, a scripted LLM)."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.agent.workflow import CodeActAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, Event, StartEvent, StopEvent, Workflow, step

from lamar import Experience, Lamar, Scope, Signal
from lamar_llamaindex import LamarMemoryBlock, create_lamar_tools, report_response, track_episodes
from tests.integrations.llamaindex.test_llamaindex_agents import Script


def engine() -> tuple[Lamar, str]:
    lam = Lamar(":memory:", k=1, seed=3, holdout=1e-9)
    build = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="build")))
    lam.add(Experience("the web page is blank", "rebuild the bundle", scope=Scope(project="web")))
    return lam, build


def executor(tools: list[FunctionTool]) -> Any:
    """A CodeAct app's sandbox, reduced to `exec` with each tool as a plain function under its name."""
    def execute(code: str) -> str:
        names: dict[str, Any] = {tool.metadata.name: tool.fn for tool in tools}
        exec(code, names)  # noqa: S102 - the test's own scripted code
        return str(names["found"].text if hasattr(names["found"], "text") else names["found"])
    return execute


class RewordedCodeActAgent(CodeActAgent):
    """A CodeActAgent whose words before its code's output are not today's: the block must not rely on them."""

    async def handle_tool_call_results(self, ctx: Context, results: list[Any], memory: Any) -> None:
        await super().handle_tool_call_results(ctx, results, memory)
        pad = await ctx.store.get(self.scratchpad_key, default=[])
        pad[-1] = ChatMessage(role="user", content="Output:" + str(pad[-1].content).split(":", 1)[1])
        await ctx.store.set(self.scratchpad_key, pad)


@pytest.mark.parametrize("agent_class", [CodeActAgent, RewordedCodeActAgent])
async def test_the_result_of_a_code_act_agents_code_is_no_user_turn(agent_class: type[CodeActAgent]) -> None:
    # CodeActAgent stores its code's output as a message with the user's role: the block counted it as
    # the user's next turn, so the real next message seemed two turns later, and its outcome never
    # reached the turn it answered, which stayed pending.
    lam, build = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"},
                             outcome=lambda m: Signal.CORRECTED if "still" in str(m.content) else None)
    memory = Memory.from_defaults(session_id="c1", memory_blocks=[block], insert_method="user")
    script = Script("<execute>found = 6 * 7</execute>", "Cleared the cache.", "Then roll back.")
    agent = agent_class(code_execute_fn=executor([]), tools=[], llm=script.llm())

    await agent.run(user_msg="fix the build", memory=memory)
    first = block.episode_id("c1")
    assert lam.stats()["episodes"] == 1  # the agent reads its memory again once the code has run
    assert lam.get(build).render() in str(script.seen[0])  # the lessons reached the model, in the user message
    await agent.run(user_msg="it still fails", memory=memory)
    assert lam.episode(first or "").signal == Signal.CORRECTED
    assert lam.stats()["episodes"] == 2 and [e.episode_id for e in lam.pending()] == [block.episode_id("c1")]
    words = "Result of executing" if agent_class is CodeActAgent else "Output:"
    assert any(m.role == "user" and str(m.content).startswith(words) for m in await memory.aget_all())


async def test_a_code_act_agent_takes_the_search_tool_and_its_turn_is_one_episode() -> None:
    # The search declared a workflow `Context` parameter, so CodeActAgent refused it ("requires context");
    # and the sync search, which code calls, recalled an episode of its own beside the block's turn.
    lam, build = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="c1", memory_blocks=[block], insert_method="user")
    tools = create_lamar_tools(lam, context={"project": "web"}, report=True)
    script = Script('<execute>found = lamar_search_lessons(query="the build fails")</execute>', "Cleared the cache.")
    agent = CodeActAgent(code_execute_fn=executor(tools), tools=tools, llm=script.llm())

    with track_episodes() as log:
        result = await agent.run(user_msg="fix the build", memory=memory)
    turn = block.episode_id("c1")
    assert log.ids == [turn] and lam.stats()["episodes"] == 1
    (code_call,) = result.tool_calls
    assert f"Episode {turn}." in code_call.tool_output.content  # the code read the turn's episode
    assert lam.get(build).render() in code_call.tool_output.content
    prompt = str(script.seen[0][0].content)  # the tools as the agent's code sees them: named as the tools are
    assert "def lamar_search_lessons(query: str)" in prompt and "def lamar_report_outcome(" in prompt
    assert lam.get(build).render() in str(script.seen[0])  # the block's lessons reached the model
    assert block.report(Signal.SHIPPED, "c1") == turn and lam.pending() == []


class Looked(Event):
    query: str


@pytest.mark.parametrize("where", ["sync step", "async step"])
async def test_a_sync_search_in_a_workflow_step_joins_the_turn(where: str) -> None:
    # The sync search ignored the workflow's Context, so inside a turn it logged an episode of its own.
    # A sync step runs in a worker thread; an async one calls it on the event loop's own thread.
    lam, build = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    (search,) = create_lamar_tools(lam, context={"project": "web"})

    class Read(Workflow):
        @step
        async def read(self, ctx: Context, ev: StartEvent) -> Looked:
            await ctx.store.set("memory", memory)  # where an agent keeps its memory
            await memory.aput(ChatMessage(role="user", content=ev.user_msg))
            await memory.aget()  # the turn's first read: the block recalls
            return Looked(query=ev.user_msg)

    class SyncLook(Read):
        @step
        def look(self, ev: Looked) -> StopEvent:
            return StopEvent(result=search.call(query=ev.query))

    class AsyncLook(Read):
        @step
        async def look(self, ev: Looked) -> StopEvent:
            return StopEvent(result=search.call(query=ev.query))

    found = await (SyncLook if where == "sync step" else AsyncLook)(timeout=30).run(user_msg="the build fails")
    turn = block.episode_id("s1")
    assert found.raw_output.metadata["episode_id"] == turn and lam.stats()["episodes"] == 1
    assert found.raw_output.metadata["experience_ids"] == [build]


async def test_a_code_act_agents_output_holds_no_episode_and_report_response_says_so() -> None:
    # The page says to report a CodeActAgent's turn through the block or a log: its output is the code's text.
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="c1", memory_blocks=[block], insert_method="user")
    tools = create_lamar_tools(lam)
    script = Script('<execute>found = lamar_search_lessons(query="the build fails")</execute>', "Cleared the cache.")
    result = await CodeActAgent(code_execute_fn=executor(tools), tools=tools, llm=script.llm()).run(
        user_msg="fix the build", memory=memory)
    with pytest.warns(UserWarning, match="block.report"):
        assert report_response(lam, result, Signal.SHIPPED) == []
    assert block.report(Signal.SHIPPED, "c1") is not None and lam.pending() == []


async def test_with_a_workflows_package_older_than_get_step_context_an_agents_search_still_joins_the_turn(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # llama-index-core 0.14 runs on llama-index-workflows releases without Context.get_step_context: there
    # the tool asks for the Context by its parameter, as the agents hand it, and the turn stays one episode.
    from llama_index.core.agent.workflow import FunctionAgent

    from tests.integrations.llamaindex.test_llamaindex_agents import call

    monkeypatch.delattr(Context, "get_step_context")
    lam, build = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="o1", memory_blocks=[block])
    (search,) = create_lamar_tools(lam, context={"project": "web"})
    script = Script(call("lamar_search_lessons", query="the build fails"), "Cleared the cache.")

    result = await FunctionAgent(tools=[search], llm=script.llm()).run(user_msg="fix the build", memory=memory)
    (tool_call,) = result.tool_calls
    assert tool_call.tool_output.raw_output.metadata["episode_id"] == block.episode_id("o1")
    assert lam.episode(block.episode_id("o1") or "").injected == [build]
    assert lam.stats()["episodes"] == 1 and search.call(query="by hand").raw_output.metadata["experience_ids"]


@pytest.mark.parametrize("agent_class", [CodeActAgent, RewordedCodeActAgent])
async def test_a_code_result_that_opens_the_history_after_a_flush_is_no_user_turn(
        agent_class: type[CodeActAgent]) -> None:
    # Under a token limit Memory moves old messages out until the history opens with a user-role message,
    # which can be a code result: its code's answer gone, the block took it for a user turn, and every
    # turn logged a second episode, never reported.
    from llama_index.core.storage.chat_store.base_db import MessageStatus

    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"},
                             outcome=lambda m: Signal.CORRECTED if "still" in str(m.content) else None)
    memory = Memory.from_defaults(session_id="f1", memory_blocks=[block], insert_method="user",
                                  token_limit=200, token_flush_size=50)
    script = Script(*["<execute>found = 6 * 7</execute>", "Tried it."] * 3)

    def execute(code: str) -> str:
        return "build log line\n" * 60  # a long output: it fills the history past the limit

    agent = agent_class(code_execute_fn=execute, tools=[], llm=script.llm())
    episodes = []
    for message in ("the build fails", "it still fails", "it still fails again"):
        await agent.run(user_msg=message, memory=memory)
        episodes.append(block.episode_id("f1"))
    active = await memory.aget_all(status=MessageStatus.ACTIVE)
    words = "Result of executing" if agent_class is CodeActAgent else "Output:"
    assert str(active[0].content).startswith(words)  # the case: the history opens with one
    assert lam.stats()["episodes"] == 3 and len(set(episodes)) == 3
    assert [lam.episode(e or "").signal for e in episodes[:2]] == [Signal.CORRECTED] * 2
