"""Lamar in a `CodeActAgent`: its turns with `LamarMemoryBlock`, and Lamar's search tool called by the
agent's code, which runs it synchronously (real agents, `Memory`, a scripted LLM)."""

from __future__ import annotations

from typing import Any

from llama_index.core.agent.workflow import CodeActAgent
from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool

from lamar import Experience, Lamar, Scope, Signal
from lamar_llamaindex import LamarMemoryBlock
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


async def test_the_result_of_a_code_act_agents_code_is_no_user_turn() -> None:
    # CodeActAgent stores its code's output as a message with the user's role: the block counted it as
    # the user's next turn, so the real next message seemed two turns later, and its outcome never
    # reached the turn it answered, which stayed pending.
    lam, build = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"},
                             outcome=lambda m: Signal.CORRECTED if "still" in str(m.content) else None)
    memory = Memory.from_defaults(session_id="c1", memory_blocks=[block], insert_method="user")
    script = Script("<execute>found = 6 * 7</execute>", "Cleared the cache.", "Then roll back.")
    agent = CodeActAgent(code_execute_fn=executor([]), tools=[], llm=script.llm())

    await agent.run(user_msg="fix the build", memory=memory)
    first = block.episode_id("c1")
    assert lam.stats()["episodes"] == 1  # the agent reads its memory again once the code has run
    assert lam.get(build).render() in str(script.seen[0])  # the lessons reached the model, in the user message
    await agent.run(user_msg="it still fails", memory=memory)
    assert lam.episode(first or "").signal == Signal.CORRECTED
    assert lam.stats()["episodes"] == 2 and [e.episode_id for e in lam.pending()] == [block.episode_id("c1")]
    assert any(m.role == "user" and "Result of executing" in str(m.content) for m in await memory.aget_all())
