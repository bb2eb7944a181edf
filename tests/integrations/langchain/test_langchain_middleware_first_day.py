"""What a new `create_agent` user does on the first day with `LamarMiddleware`, followed from docs/langchain.md."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from lamar import Experience, Lamar, Scope
from lamar_langchain import LamarMiddleware


def engine() -> Lamar:
    lam = Lamar(":memory:", seed=0, holdout=1e-9)
    lam.add(Experience("a deploy times out", "raise the health-check grace period", scope=Scope(project="shop")))
    return lam


def said(text: str, **extra: Any) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}], **extra}


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_an_outcome_sent_to_an_agent_without_a_thread_says_how_to_report_the_earlier_run(
        chat_model: Callable[..., Any], mode: str) -> None:
    # The docs' first example has no checkpointer; the user then sends the outcome "with the next message".
    lam = engine()
    middleware = LamarMiddleware(lam, {"project": "shop"})
    agent = create_agent(chat_model("Raised it.", "Rolled back."), [], middleware=[middleware])

    def run(inputs: dict[str, Any]) -> dict[str, Any]:
        return asyncio.run(agent.ainvoke(inputs)) if mode == "ainvoke" else agent.invoke(inputs)

    first = run(said("the deploy timed out"))
    with pytest.warns(UserWarning, match=r"no earlier run's episode .* checkpointer=InMemorySaver\(\).*"
                                         r"'thread_id': \.\.\.\}\}, or report .*\.report\(result, 'corrected'\)"):
        second = run(said("that broke checkout", lamar_outcome="corrected"))
    assert second["lamar_episode_id"] != first["lamar_episode_id"]  # the turn goes on, with its own episode
    assert {p.episode_id for p in lam.pending()} == {first["lamar_episode_id"], second["lamar_episode_id"]}


def test_an_outcome_sent_on_a_thread_warns_of_nothing(chat_model: Callable[..., Any]) -> None:
    import warnings

    lam = engine()
    agent = create_agent(chat_model("Raised it.", "Rolled back."), [], checkpointer=InMemorySaver(),
                         middleware=[LamarMiddleware(lam, {"project": "shop"})])
    thread = {"configurable": {"thread_id": "t"}}
    first = agent.invoke(said("the deploy timed out"), thread)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent.invoke(said("that broke checkout", lamar_outcome="corrected"), thread)
    assert lam.episode(first["lamar_episode_id"]).signal == "corrected"


@pytest.mark.parametrize("argument", ["context", "outcome"])
def test_a_function_of_the_state_alone_is_refused_when_the_middleware_is_made(argument: str) -> None:
    # recall_node's context function takes the state alone; the middleware's takes (state, runtime). The
    # one-argument form failed the agent's first turn with a bare TypeError from inside LangGraph.
    from lamar import InvalidArgument

    with pytest.raises(InvalidArgument, match=rf"{argument} must be a function of \(state, runtime\).*"
                                              r"lambda state, runtime: "):
        LamarMiddleware(engine(), **{argument: lambda state: {"project": "shop"}})
    LamarMiddleware(engine(), **{argument: lambda state, runtime: None})  # the documented form
    LamarMiddleware(engine(), **{argument: lambda *args: None})


def test_a_context_function_of_state_and_runtime_recalls(chat_model: Callable[..., Any]) -> None:
    lam = engine()
    middleware = LamarMiddleware(lam, context=lambda state, runtime: {"project": "shop"})
    result = create_agent(chat_model("Raised it."), [], middleware=[middleware]).invoke(said("the deploy timed out"))
    assert len(result["lamar_experience_ids"]) == 1
