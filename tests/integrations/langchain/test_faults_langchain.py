"""LangChain's pieces under store faults: an LCEL chain with `LamarRetriever` and `LamarCallbackHandler` (a
trace file beside the store), and a checkpointed `create_agent` agent with `LamarMiddleware` reporting each
turn's outcome with the next; every fault of tests/integrations/store_faults.py, on the backends it applies to."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langgraph.checkpoint.memory import InMemorySaver

from lamar import Experience, ExperienceStore, Lamar, Scope
from lamar_langchain import LamarCallbackHandler, LamarMiddleware, LamarRetriever
from tests.integrations import store_faults as faults
from tests.integrations.store_faults import warned


def _engine(location: str) -> Lamar:
    lam = Lamar(ExperienceStore(location, timeout=faults.TIMEOUT), k=2, seed=3)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="app")))
    return lam


def _chain(lam: Lamar, traces: Path) -> Callable[[], Any]:
    retriever = LamarRetriever(lamar=lam, k=2, context={"project": "app"})
    prompt = ChatPromptTemplate.from_messages([("system", "{notes}"), ("human", "{q}")])
    notes = (lambda x: x["q"]) | retriever | (lambda docs: "\n".join(d.page_content for d in docs))
    chain = {"notes": notes, "q": lambda x: x["q"]} | prompt | FakeListChatModel(responses=["cleared it"]) \
        | StrOutputParser()
    handler = LamarCallbackHandler(lam, traces)

    def call() -> Any:
        answer = chain.invoke({"q": "the build fails"}, config={"callbacks": [handler]})
        handler.flush()
        return answer, handler.traces()[-1].output

    return call


def _agent(lam: Lamar) -> Callable[[], Any]:
    agent = create_agent(FakeListChatModel(responses=["cleared it"]), [],
                         middleware=[LamarMiddleware(lam, {"project": "app"})], checkpointer=InMemorySaver())
    turns = itertools.count()

    def call() -> Any:
        turn = next(turns)
        result = agent.invoke({"messages": [HumanMessage("the build fails")], "lamar_outcome": "shipped"},
                              config={"configurable": {"thread_id": "t"}})
        assert len(result["messages"]) == 2 * (turn + 1)
        return result["messages"][-1].text

    return call



@pytest.mark.parametrize(("kind", "fault"), faults.CASES, ids=faults.IDS)
def test_a_chain_with_retriever_and_handler_answers_under_a_store_fault(
        store_in: Callable[[str], str], kind: str, fault: str, caplog: pytest.LogCaptureFixture) -> None:
    location = store_in(kind)
    lam = _engine(location)
    caplog.set_level(logging.WARNING)
    faults.survives(location, _chain(lam, Path(location).with_suffix(".traces.jsonl")), faults.FAULTS[fault],
                    warned(caplog), advice=faults.refused(kind, fault))
    assert location in warned(caplog)() or (kind, fault) == ("db", "read_only")
    lam.close()


@pytest.mark.parametrize(("kind", "fault"), faults.CASES, ids=faults.IDS)
def test_an_agent_with_middleware_answers_under_a_store_fault(
        store_in: Callable[[str], str], kind: str, fault: str, caplog: pytest.LogCaptureFixture) -> None:
    location = store_in(kind)
    lam = _engine(location)
    caplog.set_level(logging.WARNING)
    faults.survives(location, _agent(lam), faults.FAULTS[fault], warned(caplog), advice=faults.refused(kind, fault))
    lam.close()


@pytest.mark.postgres
def test_a_chain_and_an_agent_answer_when_postgres_ends_their_connection(
        postgres_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with faults.member_store(postgres_url, "fixfaults_lc") as (location, role):
        lam = _engine(location)
        try:
            faults.survives(location, _chain(lam, tmp_path / "traces.jsonl"), faults.killed(postgres_url, role),
                            warned(caplog), advice=None)
            faults.survives(location, _agent(lam), faults.killed(postgres_url, role), warned(caplog), advice=None)
        finally:
            lam.close()


def test_a_trace_file_made_read_only_mid_run_is_one_warning_with_what_to_do(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    lam, traces = _engine(str(tmp_path / "lessons.db")), tmp_path / "traces.jsonl"
    call = _chain(lam, traces)
    answer = call()
    caplog.set_level(logging.WARNING)
    with faults.read_only(str(traces)):
        assert call() == answer  # the trace kept in memory names the answer too
    [record] = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert record.exc_info is None, "a traceback buries what to do"
    assert f"cannot append a trace to {traces}" in record.getMessage()
    assert "open a writable copy" in record.getMessage()
    assert len(traces.read_text().splitlines()) == 1
    lam.close()
