"""create_lamar_tools in a real create_agent agent (only the chat model is scripted)."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool

from lamar import Experience, Lamar, Scope
from lamar_langchain import LamarCallbackHandler, ReportOutcome, create_lamar_tools


@dataclasses.dataclass
class Ctx:
    project: str


def engine() -> tuple[Lamar, str]:
    lam = Lamar(":memory:", k=2, seed=3, holdout=1e-9)
    exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    lam.add(Experience("the web page is blank", "rebuild the bundle", scope=Scope(project="web")))
    return lam, exp_id


def search_call(query: str = "the build fails") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": "lamar_search_lessons", "args": {"query": query},
                                              "id": "s1"}])


def test_search_tool_keeps_the_episode_in_its_artifact_and_reads_the_runtime_context(chat_model: Any) -> None:
    lam, exp_id = engine()
    tools = create_lamar_tools(lam)
    agent = create_agent(chat_model(search_call(), "Cleared the cache."), tools, context_schema=Ctx)
    result = agent.invoke({"messages": [{"role": "user", "content": "fix the build"}]}, context=Ctx("trace"))
    (message,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    episode_id = message.artifact["lamar_episode_id"]
    episode = lam.episode(episode_id)
    assert episode.context == {"project": "trace"} and episode.injected == [exp_id]
    assert message.artifact["experience_ids"] == [exp_id]
    assert episode_id in message.text and lam.get(exp_id).render() in message.text



@dataclasses.dataclass
class CtxForLamar:
    lamar_context: dict[str, str]


@pytest.mark.parametrize("source", ["function", "lamar_context"])
def test_a_long_value_in_a_context_the_app_gives_is_left_out_and_the_search_answers(chat_model: Any,
                                                                                    source: str) -> None:
    lam, exp_id = engine()
    long = {"project": "trace", "log": "x" * 5_000}  # a value of 5,000 characters on one search
    tools = create_lamar_tools(lam, context=(lambda q: long) if source == "function" else None)
    agent = create_agent(chat_model(search_call(), "Cleared the cache."), tools, context_schema=CtxForLamar)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = agent.invoke({"messages": [{"role": "user", "content": "fix the build"}]},
                              context=CtxForLamar(long if source == "lamar_context" else {"project": "trace"}))
    said = [str(w.message) for w in seen if issubclass(w.category, UserWarning)]
    assert len(said) == 1 and "left out 'log' (5,000 characters)" in said[0] and "4,000" in said[0], said
    (message,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    episode = lam.episode(message.artifact["lamar_episode_id"])
    assert episode.context == {"project": "trace"} and episode.injected == [exp_id]
    assert lam.get(exp_id).render() in message.text and result["messages"][-1].content == "Cleared the cache."

def test_report_tool_schema_says_only_the_users_reaction_counts(chat_model: Any) -> None:
    schema = ReportOutcome.model_json_schema()
    assert set(schema["required"]) == {"episode_id", "outcome", "evidence"}
    assert "USER" in schema["properties"]["outcome"]["description"]
    assert "never" in create_lamar_tools(Lamar(":memory:"), report=True)[1].description


async def _search_then_report(lam: Lamar, chat_model: Any, outcome: str, reaction: str) -> tuple[str, ToolMessage]:
    """One turn whose agent searches Lamar, then the next, where the user reacts and the agent calls the report
    tool with that turn's episode id and `outcome`: the episode id and the report tool's answer."""
    first = create_agent(chat_model(search_call(), "Cleared the cache."), create_lamar_tools(lam, report=True),
                         context_schema=Ctx)
    result = await first.ainvoke({"messages": [{"role": "user", "content": "fix the build"}]},
                                 context=Ctx("trace"))
    episode_id = next(m for m in result["messages"] if isinstance(m, ToolMessage)).artifact["lamar_episode_id"]
    report = AIMessage(content="", tool_calls=[{"name": "lamar_report_outcome", "id": "r1", "args": {
        "episode_id": episode_id, "outcome": outcome, "evidence": f"user: {reaction}"}}])
    second = create_agent(chat_model(report, "Noted."), create_lamar_tools(lam, report=True), context_schema=Ctx)
    done = await second.ainvoke({"messages": [*result["messages"], {"role": "user", "content": reaction}]},
                                context=Ctx("trace"))
    return episode_id, [m for m in done["messages"] if isinstance(m, ToolMessage)][-1]


async def test_the_agent_reports_the_users_reaction_with_the_episode_it_searched(chat_model: Any) -> None:
    lam, exp_id = engine()
    episode_id, _ = await _search_then_report(lam, chat_model, "corrected", "no, that broke it")
    assert lam.episode(episode_id).signal == "corrected"
    assert lam.evidence(exp_id).injected == 1


async def test_the_report_tool_reads_an_outcome_as_its_description_spells_it(chat_model: Any) -> None:
    """The outcome's description says "re-asked the same thing", and a model copies it: the schema's literal
    refused 're-asked' (and 'Shipped'), which `lam.report` reads as the signal."""
    lam, _ = engine()
    assert "re-asked" in ReportOutcome.model_json_schema()["properties"]["outcome"]["description"]
    for said, signal in (("re-asked", "reasked"), ("Shipped", "shipped")):
        episode_id, answer = await _search_then_report(lam, chat_model, said, "same thing again")
        assert answer.content == f"Recorded {signal} for {episode_id}.", answer.content
        assert lam.episode(episode_id).signal == signal


def test_a_bad_outcome_is_refused_by_the_schema() -> None:
    lam, _ = engine()
    _, report = create_lamar_tools(lam, report=True)
    with pytest.raises(ValueError):
        report.invoke({"episode_id": "ep_x", "outcome": "great job", "evidence": "me"})


@tool
def deploy(target: str) -> str:
    """Deploy a target."""
    raise RuntimeError("the deploy server is down")


def test_a_run_that_raises_after_a_search_leaves_no_pending_episode(chat_model: Any) -> None:
    lam, _ = engine()
    handler = LamarCallbackHandler(lam)
    call = AIMessage(content="", tool_calls=[{"name": "deploy", "args": {"target": "app"}, "id": "d1"}])
    agent = create_agent(chat_model(search_call(), call, "done"),
                         [*create_lamar_tools(lam, context={"project": "trace"}), deploy])
    with pytest.raises(RuntimeError, match="deploy server is down"):
        agent.invoke({"messages": [{"role": "user", "content": "ship"}]}, config={"callbacks": [handler]})
    assert lam.stats()["episodes"] == 1 and lam.pending() == []


def test_module_examples_run() -> None:
    import doctest

    import lamar_langchain.middleware
    import lamar_langchain.tools

    for module in (lamar_langchain.tools, lamar_langchain.middleware):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0


def test_lamars_failures_are_the_tools_answer_not_the_runs_end(chat_model: Any, tmp_path: Any) -> None:
    # A store gone bad, an unknown episode, a second report: the model reads what went wrong.
    path = tmp_path / "lessons.json"
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("a deploy times out", "raise the grace period"))
    search, report = create_lamar_tools(lam, report=True)
    episode = search.invoke({"query": "deploy"}) and lam.pending()[0].episode_id
    assert "the outcome was not recorded" in report.invoke({"episode_id": "ep_nope", "outcome": "accepted",
                                                             "evidence": "user: thanks"})
    assert "Recorded" in report.invoke({"episode_id": episode, "outcome": "accepted", "evidence": "user: thanks"})
    again = report.invoke({"episode_id": episode, "outcome": "accepted", "evidence": "user: thanks"})
    assert "the outcome was not recorded" in again and "already" in again
    with path.open("a") as out:
        out.write("{garbage\n")  # the store goes bad under the running agent
    agent = create_agent(chat_model(search_call(), "Went on without lessons."), [search])
    result = agent.invoke({"messages": [{"role": "user", "content": "the deploy timed out"}]})
    answer = next(m for m in result["messages"] if isinstance(m, ToolMessage))
    assert "could not read its store" in answer.content and result["messages"][-1].text == "Went on without lessons."


async def test_a_refused_report_tells_the_model_what_it_can_do_not_the_python_api() -> None:
    # The report tool answered a second report with the engine's "pass replace=True to replace that outcome",
    # an argument the tool does not have (and a model must not change the user's verdict), and an unknown
    # episode with recall() and keep_unreported.
    lam = Lamar(":memory:", seed=1)
    lam.add(Experience("a deploy times out", "raise the grace period"))
    search, report = create_lamar_tools(lam, report=True)
    episode = search.invoke({"query": "deploy"}) and lam.pending()[0].episode_id
    args = {"episode_id": episode, "outcome": "accepted", "evidence": "user: thanks"}
    for call in (report.invoke, report.ainvoke):
        lam.report(episode, "accepted", replace=True)
        again = call(args)
        again = await again if not isinstance(again, str) else again
        assert again.startswith(f"the outcome was not recorded: episode {episode} was already reported"), again
        assert "replace=True" not in again and "the first report stands" in again
        unknown = call({**args, "episode_id": "ep_nope"})
        unknown = await unknown if not isinstance(unknown, str) else unknown
        assert "recall()" not in unknown and "keep_unreported" not in unknown, unknown
        assert "pass the episode id that the search tool returned for this task" in unknown


async def test_a_store_error_in_a_tool_is_logged_for_the_operator_too(tmp_path: Any,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """The model reads what went wrong; the app's log must say it as well, once per call, or a
    store gone away goes unnoticed for as long as the agent copes without lessons."""
    path = tmp_path / "lessons.db"
    lam = Lamar(str(path), seed=1)
    lam.add(Experience("a deploy times out", "raise the grace period"))
    search, report = create_lamar_tools(lam, report=True)
    path.unlink()
    with caplog.at_level("WARNING", logger="lamar_langchain.tools"):
        answers = [search.invoke({"query": "deploy"}), await search.ainvoke({"query": "deploy"}),
                   report.invoke({"episode_id": "ep_1", "outcome": "accepted", "evidence": "user: thanks"}),
                   await report.ainvoke({"episode_id": "ep_1", "outcome": "accepted", "evidence": "user: thanks"})]
    assert all("deleted" in answer for answer in answers)
    records = [r for r in caplog.records if r.name == "lamar_langchain.tools"]
    assert len(records) == 4 and all(r.levelname == "WARNING" and "deleted" in r.getMessage() for r in records)


@pytest.mark.parametrize(("lamar", "k", "says"), [
    ("lessons.db", None, "takes a Lamar engine first"),
    (None, -1, "a whole number >= 0"),
])
def test_bad_arguments_are_refused_when_the_tools_are_made(lamar: Any, k: Any, says: str) -> None:
    """Inside the tool each would raise an error that is no ToolException, ending the agent's run."""
    from lamar import InvalidArgument

    with pytest.raises(InvalidArgument, match=says):
        create_lamar_tools(engine()[0] if lamar is None else lamar, k=k)
