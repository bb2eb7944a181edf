"""LlamaIndex under store faults: a query engine re-ranked by `LamarPostprocessor`, and a `FunctionAgent` whose
`Memory` holds a `LamarMemoryBlock` that reports each turn's outcome from the next user message
(tests/integrations/store_faults.py makes the faults)."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms import MockFunctionCallingLLM, MockLLM
from llama_index.core.memory import Memory

from lamar import Experience, ExperienceStore, Lamar, Scope, Signal
from lamar_llamaindex import LamarMemoryBlock, LamarPostprocessor, lessons_to_nodes
from tests.integrations import store_faults as faults
from tests.integrations.store_faults import warned


def _engine(location: str) -> Lamar:
    lam = Lamar(ExperienceStore(location, timeout=faults.TIMEOUT), k=2, seed=3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="app")))
    lam.add(Experience("the build is slow", "warm the cache", scope=Scope(project="app")))
    return lam


def _query(lam: Lamar) -> Callable[[], Any]:
    post = LamarPostprocessor(lam, top_n=1, context={"project": "app"})
    engine = VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(
        similarity_top_k=2, node_postprocessors=[post], llm=MockLLM(max_tokens=3))  # the same words whatever it is sent

    def call() -> Any:
        response = engine.query("the build fails")
        return str(response), len(response.source_nodes)

    return call


def _agent(lam: Lamar) -> Callable[[], Any]:
    def answer(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        return ChatMessage(role="assistant", content="cleared it")

    block = LamarMemoryBlock(lam, context={"project": "app"}, outcome=lambda message: Signal.SHIPPED)
    memory = Memory.from_defaults(session_id="s", memory_blocks=[block])
    agent = FunctionAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=answer))
    turns = itertools.count()

    async def run(turn: int) -> Any:
        return await agent.run(user_msg=f"the build fails (turn {turn})", memory=memory)

    def call() -> Any:
        return str(asyncio.run(run(next(turns))).response.content)

    return call




@pytest.mark.parametrize("piece", ["query", "agent"])
@pytest.mark.parametrize(("kind", "fault"), faults.CASES, ids=faults.IDS)
def test_a_query_engine_and_an_agent_answer_under_a_store_fault(
        store_in: Callable[[str], str], kind: str, fault: str, piece: str, caplog: pytest.LogCaptureFixture) -> None:
    location = store_in(kind)
    lam = _engine(location)
    caplog.set_level(logging.WARNING)
    call = _query(lam) if piece == "query" else _agent(lam)
    faults.survives(location, call, faults.FAULTS[fault], warned(caplog), advice=faults.refused(kind, fault))
    lam.close()


@pytest.mark.postgres
def test_a_query_engine_and_an_agent_answer_when_postgres_ends_their_connection(
        postgres_url: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with faults.member_store(postgres_url, "fixfaults_li") as (location, role):
        lam = _engine(location)
        try:
            for call in (_query(lam), _agent(lam)):
                faults.survives(location, call, faults.killed(postgres_url, role), warned(caplog), advice=None)
        finally:
            lam.close()
