"""Lamar's sync search in a `CodeActAgent` whose `Memory` keeps its chat in PostgreSQL through asyncpg,
a driver whose connections belong to the event loop that opened them (real agent, store and server)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core.agent.workflow import CodeActAgent
from llama_index.core.memory import Memory

from lamar_llamaindex import LamarMemoryBlock, create_lamar_tools, track_episodes
from tests.integrations.llamaindex.test_llamaindex_agents import Script
from tests.integrations.llamaindex.test_llamaindex_codeact import engine, executor

pytest.importorskip("asyncpg")


@pytest.fixture
def asyncpg_memory(postgres_url: str) -> Iterator[dict[str, Any]]:
    """The `Memory.from_defaults` arguments of a chat store in a schema of its own, dropped afterwards."""
    import psycopg
    from sqlalchemy.ext.asyncio import create_async_engine

    schema = f"lamar_llama_{uuid.uuid4().hex[:8]}"
    url = postgres_url.replace("postgresql://", "postgresql+asyncpg://", 1)
    # Named, so that the drop can end them: a read that failed leaves a connection inside a transaction.
    async_engine = create_async_engine(url, connect_args={"server_settings": {"application_name": schema}})
    yield {"async_engine": async_engine, "db_schema": schema, "table_name": "chat"}
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", (schema,))
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.mark.parametrize("executes", ["in a worker thread", "on the event loop"])
async def test_a_sync_search_joins_the_turn_when_the_chat_store_is_bound_to_the_agents_loop(
        asyncpg_memory: dict[str, Any], executes: str) -> None:
    # The sync search read the chat on an event loop of its own: asyncpg's connections, opened on the
    # agent's loop, refuse it ("attached to a different loop"), and the search logged a second episode.
    lam, build = engine()
    block = LamarMemoryBlock(lam, context={"project": "build"})
    memory = Memory.from_defaults(session_id="pg1", memory_blocks=[block], insert_method="user", **asyncpg_memory)
    tools = create_lamar_tools(lam, context={"project": "web"})
    run_code = executor(tools)

    async def run_code_on_the_loop(code: str) -> str:  # an async sandbox that runs the code in place
        return str(run_code(code))

    script = Script('<execute>found = lamar_search_lessons(query="the build fails")</execute>', "Cleared the cache.")
    agent = CodeActAgent(code_execute_fn=run_code if executes == "in a worker thread" else run_code_on_the_loop,
                         tools=tools, llm=script.llm())
    with track_episodes() as log:
        result = await agent.run(user_msg="fix the build", memory=memory)
    turn = block.episode_id("pg1")
    assert log.ids == [turn] and lam.stats()["episodes"] == 1
    assert f"Episode {turn}." in result.tool_calls[0].tool_output.content
    assert lam.episode(turn or "").injected == [build]
