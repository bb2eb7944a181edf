"""The sync search called on a running event loop, with and without nest_asyncio (which patches asyncio for
the whole process, so each case runs in a process of its own): it answers, and the turn stays one episode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = """
import asyncio, sys
if sys.argv[1] != "none":
    __import__(sys.argv[1]).apply()
from llama_index.core.agent.workflow import CodeActAgent
from llama_index.core.memory import Memory
from lamar_llamaindex import LamarMemoryBlock, create_lamar_tools
from tests.integrations.llamaindex.test_llamaindex_agents import Script
from tests.integrations.llamaindex.test_llamaindex_codeact import engine, executor

async def turn(where):
    lam, _ = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="n1", memory_blocks=[block], insert_method="user")
    tools = create_lamar_tools(lam, context={"project": "web"})
    run_code = executor(tools)
    async def run_code_on_the_loop(code):  # the loop waits on the sync search, which must not wait on it
        return str(run_code(code))
    script = Script('<execute>found = lamar_search_lessons(query="the build fails")</execute>', "Done.")
    agent = CodeActAgent(code_execute_fn=run_code_on_the_loop if where == "loop" else run_code,
                         tools=tools, llm=script.llm())
    result = await agent.run(user_msg="fix the build", memory=memory)
    joined = f"Episode {block.episode_id('n1')}." in result.tool_calls[0].tool_output.content
    print(where, lam.stats()["episodes"], joined)

for where in ("loop", "thread"):
    asyncio.run(turn(where))
"""


@pytest.mark.parametrize("patch", ["none", "nest_asyncio"])
def test_a_sync_search_on_a_running_loop_answers_and_joins_the_turn(patch: str) -> None:
    # Called on the agent's own event loop, the search cannot await that loop, which waits on it: it reads
    # the workflow's Context on a loop of its own in a helper thread, and that read takes no lock the agent's
    # loop could hold (the in-memory state store reads without one once seeded, which the agent's own
    # reads did before any tool ran), nor the chat store. So it cannot
    # deadlock; a hang here would end at the subprocess's timeout instead of stalling the suite.
    if patch != "none":
        pytest.importorskip(patch)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    done = subprocess.run([sys.executable, "-c", SCRIPT, patch], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == ["loop 1 True", "thread 1 True"]
