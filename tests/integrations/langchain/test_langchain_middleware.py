"""LamarMiddleware in a real `create_agent` agent (only the chat model is scripted)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import dynamic_prompt
from langchain_core.messages import AIMessage, SystemMessage
from langchain_core.tools import tool

from lamar import Experience, Lamar, Scope, Signal
from lamar.recall import FENCE_OPEN, render_prompt
from lamar_langchain import LamarMiddleware

CONTEXT = {"project": "trace", "language": "swift"}


@tool
def build(target: str) -> str:
    """Build a target and say how it went."""
    return f"built {target}"


def engine(seed: int = 4) -> tuple[Lamar, dict[str, str]]:
    # the holdout is pinned so the seeded coins (and the held-out lesson below) do not move
    # when the engine's default changes
    lam = Lamar(":memory:", k=3, seed=seed, holdout=0.2)
    lessons = {
        "derived": lam.add(Experience("the Xcode build fails after a dependency bump",
                                      "clear DerivedData before rebuilding", "stale module maps survive",
                                      scope=Scope(project="trace"))),
        "resolve": lam.add(Experience("a Swift package does not resolve", "reset the package caches",
                                      scope=Scope(language="swift"))),
        "other": lam.add(Experience("the web build fails", "clear the bundler cache",
                                    scope=Scope(project="web"))),
    }
    return lam, lessons


def tool_then_answer() -> list[AIMessage]:
    return [AIMessage(content="", tool_calls=[{"name": "build", "args": {"target": "app"}, "id": "call_1"}]),
            AIMessage(content="The app builds now.")]


def check_run(lam: Lamar, result: dict[str, Any], model: Any, system_prompt: str | None) -> None:
    """The lessons the episode injected, and only those, are in every model call's system message."""
    episode = lam.episode(result["lamar_episode_id"])
    assert result["lamar_experience_ids"] == episode.injected
    assert episode.injected, "the seeded run should inject at least one lesson"
    assert len(model.received) == 2  # one call before the tool, one after
    for messages in model.received:
        system = messages[0]
        assert isinstance(system, SystemMessage)
        if system_prompt:
            assert system.text.startswith(system_prompt)
        for exp_id in episode.injected:
            assert lam.get(exp_id).render() in system.text
        for exp_id in set(episode.eligible) - set(episode.injected):
            assert lam.get(exp_id).render() not in system.text
        assert all(FENCE_OPEN not in m.text for m in messages[1:])
    # The lessons never enter the conversation the agent keeps.
    assert all(FENCE_OPEN not in m.text for m in result["messages"])
    assert "lamar_lessons" not in result


def test_sync_agent_sees_lessons_and_reports_through_state(chat_model: Any) -> None:
    lam, lessons = engine()
    model = chat_model(*tool_then_answer())
    middleware = LamarMiddleware(lam, CONTEXT)
    agent = create_agent(model, [build], system_prompt="You fix builds.", middleware=[middleware])

    result = agent.invoke({"messages": [{"role": "user", "content": "the build broke"}]})

    check_run(lam, result, model, "You fix builds.")
    assert lam.stats()["episodes"] == 1  # one recall per run, not per model call
    episode = lam.episode(result["lamar_episode_id"])
    assert lessons["other"] not in episode.eligible  # scope: project web does not match
    assert episode.held_out, "seed 4 holds one lesson out: absent from the prompt, still in the control group"
    before = {i: lam.evidence(i) for i in episode.eligible}
    assert all(ev.eligible == 0 for ev in before.values())

    assert middleware.report(result, Signal.SHIPPED) == result["lamar_episode_id"]

    for exp_id in episode.eligible:
        after = lam.evidence(exp_id)
        assert after.eligible == 1
        assert after.injected == (1 if exp_id in episode.injected else 0)
    assert lam.episode(result["lamar_episode_id"]).reward == Signal.SHIPPED.reward


async def test_async_agent_sees_lessons_and_reports_through_state(chat_model: Any) -> None:
    lam, _ = engine()
    model = chat_model(*tool_then_answer())
    middleware = LamarMiddleware(lam, CONTEXT)
    agent = create_agent(model, [build], system_prompt="You fix builds.", middleware=[middleware])

    result = await agent.ainvoke({"messages": [{"role": "user", "content": "the build broke"}]})

    check_run(lam, result, model, "You fix builds.")
    injected = result["lamar_experience_ids"][0]
    await middleware.areport(result, Signal.REVERTED)
    assert lam.evidence(injected).injected == 1
    assert lam.episode(result["lamar_episode_id"]).signal == "reverted"


async def test_the_typed_output_of_invoke_version_v2_reports_like_the_state(chat_model: Any) -> None:
    # invoke(..., version="v2") returns a GraphOutput, not a mapping: report refused it, saying
    # the middleware was perhaps not in the list, though the episode was in its .value.
    lam, _ = engine()
    middleware = LamarMiddleware(lam, CONTEXT)
    agent = create_agent(chat_model("one", "two"), [], middleware=[middleware])
    ask = {"messages": [{"role": "user", "content": "the build broke"}]}

    first, second = agent.invoke(ask, version="v2"), await agent.ainvoke(ask, version="v2")

    assert middleware.report(first, Signal.SHIPPED) == first.value["lamar_episode_id"]
    assert await middleware.areport(second, Signal.REVERTED) == second.value["lamar_episode_id"]
    assert [lam.episode(r.value["lamar_episode_id"]).signal for r in (first, second)] == ["shipped", "reverted"]


def test_without_a_system_prompt_the_lessons_are_the_system_message(chat_model: Any) -> None:
    lam, _ = engine()
    model = chat_model("done")
    agent = create_agent(model, [], middleware=[LamarMiddleware(lam, CONTEXT, k=1)])
    result = agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    assert len(result["lamar_experience_ids"]) <= 1
    system = model.received[0][0]
    assert isinstance(system, SystemMessage) and system.text.startswith(FENCE_OPEN)


def test_each_run_recalls_anew_with_the_context_of_the_call(chat_model: Any) -> None:
    lam, lessons = engine(seed=2)
    model = chat_model("ok")
    middleware = LamarMiddleware(lam, lambda state, runtime: {"project": "trace"})
    agent = create_agent(model, [], middleware=[middleware])

    first = agent.invoke({"messages": [{"role": "user", "content": "a"}]})
    second = agent.invoke({"messages": [{"role": "user", "content": "b"}]},
                          config={"metadata": {"lamar_context": {"project": "web"}}})

    assert first["lamar_episode_id"] != second["lamar_episode_id"]
    assert lam.episode(first["lamar_episode_id"]).eligible == [lessons["derived"]]
    assert lam.episode(second["lamar_episode_id"]).context == {"project": "web"}
    assert lam.episode(second["lamar_episode_id"]).eligible == [lessons["other"]]


def test_report_needs_an_episode(chat_model: Any) -> None:
    lam, _ = engine()
    with pytest.raises(ValueError, match="lamar_episode_id"):
        LamarMiddleware(lam).report({"messages": []}, Signal.SHIPPED)


def test_a_system_message_of_content_blocks_gets_one_more_block(chat_model: Any) -> None:
    lam, _ = engine(seed=0)
    model = chat_model("ok")
    base = SystemMessage(content=[{"type": "text", "text": "You fix builds."}])
    agent = create_agent(model, [], system_prompt=base, middleware=[LamarMiddleware(lam, CONTEXT)])
    result = agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    injected = [lam.get(i) for i in result["lamar_experience_ids"]]
    assert injected
    assert model.received[0][0].content == [{"type": "text", "text": "You fix builds."},
                                            {"type": "text", "text": render_prompt(injected)}]


@dynamic_prompt
def persona(request: Any) -> str:
    return "You are the release assistant."


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_middleware_after_lamar_that_replaces_the_system_message_is_named_once(
        chat_model: Any, mode: str) -> None:
    """A prompt middleware listed after Lamar wraps the model call inside it and replaces the
    system message, lessons included: the model never sees them, so Lamar says so, once."""
    lam, _ = engine(seed=0)
    model = chat_model("one", "two")
    agent = create_agent(model, [], middleware=[LamarMiddleware(lam, CONTEXT), persona])
    message = {"messages": [{"role": "user", "content": "hi"}]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            result = agent.invoke(message) if mode == "invoke" else await agent.ainvoke(message)
            assert result["lamar_experience_ids"]
    assert all(FENCE_OPEN not in m[0].text for m in model.received)
    said = [str(w.message) for w in caught if "LamarMiddleware" in str(w.message)]
    assert len(said) == 1 and "before LamarMiddleware" in said[0]


def test_a_prompt_middleware_listed_before_lamar_keeps_the_lessons(chat_model: Any) -> None:
    lam, _ = engine(seed=0)
    model = chat_model("one")
    agent = create_agent(model, [], middleware=[persona, LamarMiddleware(lam, CONTEXT)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    system = model.received[0][0].text
    assert system.startswith("You are the release assistant.")
    assert all(lam.get(i).render() in system for i in result["lamar_experience_ids"])
