"""recall_node and report_node in a real ReAct-style LangGraph graph with a fake chat model."""

from __future__ import annotations

import dataclasses
import doctest
import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Command, interrupt

import lamar_langgraph.nodes
from lamar import Experience, InvalidContext, Lamar, Scope, Signal
from lamar_langgraph import LamarState, recall_node, report_node
from lamar_langgraph.keys import FORGET
from tests.integrations.langgraph.graphs import in_line

CONTEXT = {"project": "trace", "language": "swift", "task": "build_fails"}
LESSON = Experience("the Xcode build fails after a dependency bump", "clear DerivedData before rebuilding",
                    rationale="stale module maps survive a clean build",
                    scope=Scope(project="trace", task="build_fails"))


class State(MessagesState, LamarState):
    pass


class Capture(BaseCallbackHandler):
    """Keeps every prompt the chat model is called with."""

    def __init__(self) -> None:
        self.prompts: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any) -> None:
        self.prompts.extend(messages)

    def system_texts(self) -> list[str]:
        return [m.content for prompt in self.prompts for m in prompt if isinstance(m, SystemMessage)]


@tool
def run_build(target: str) -> str:
    """Build the target and report the result."""
    return f"{target}: build succeeded after clearing DerivedData"


def fake_model(capture: Capture, turns: int = 1) -> FakeMessagesListChatModel:
    script: list[BaseMessage] = []
    for n in range(turns):
        script += [AIMessage("", tool_calls=[{"name": "run_build", "args": {"target": "app"}, "id": f"call_{n}"}]),
                   AIMessage("The build passes now.")]
    return FakeMessagesListChatModel(responses=script, callbacks=[capture])


def agent_node(model: FakeMessagesListChatModel) -> RunnableLambda[Any, Any]:
    def prompt(state: Any) -> list[BaseMessage]:
        system = "You fix builds." + (f"\n\n{state['lamar_prompt']}" if state.get("lamar_prompt") else "")
        return [SystemMessage(system), *state["messages"]]

    def agent(state: Any) -> dict[str, Any]:
        return {"messages": [model.invoke(prompt(state))]}

    async def aagent(state: Any) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(prompt(state))]}

    return RunnableLambda(agent, afunc=aagent)


def shipped_if_it_passes(state: Any) -> str | None:
    last = state["messages"][-1]
    return Signal.SHIPPED.value if "passes" in str(last.content) else Signal.CORRECTED.value


def react_graph(lam: Lamar, model: FakeMessagesListChatModel, *, checkpointer: Any = None,
                recall_before_every_call: bool = False, context_schema: Any = None, **recall_options: Any) -> Any:
    graph = StateGraph(State, context_schema=context_schema)
    graph.add_node("recall", recall_node(lam, **recall_options))
    graph.add_node("agent", agent_node(model))
    graph.add_node("tools", ToolNode([run_build]))
    graph.add_node("report", report_node(lam, outcome=shipped_if_it_passes))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "agent")
    graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "report"})
    # Looping back through recall before each model call must not start a new episode.
    graph.add_edge("tools", "recall" if recall_before_every_call else "agent")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)


@pytest.fixture
def lam() -> Iterator[Lamar]:
    engine = Lamar(":memory:", k=2, seed=0, holdout=0.01)  # the lesson is (almost) never held out
    engine.add(LESSON)
    yield engine
    engine.close()


def lesson_id(lam: Lamar) -> str:
    return lam.experiences()[0].id


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


def assert_turn_learned(lam: Lamar, state: dict[str, Any], capture: Capture) -> None:
    exp_id = lesson_id(lam)
    assert state["lamar_lessons"] == [exp_id]
    assert "clear DerivedData before rebuilding" in state["lamar_prompt"]
    # The model saw the lessons: the fenced block is in every system prompt it got.
    assert capture.system_texts() and all(state["lamar_prompt"] in s for s in capture.system_texts())
    assert state["lamar_reported"] == state["lamar_episode_id"]
    episode = lam.episode(state["lamar_episode_id"])
    assert episode.injected == [exp_id] and episode.signal == "shipped" and episode.reward == 1.0
    evidence = lam.evidence(exp_id)
    assert evidence.injected == 1 and evidence.eligible == 1 and evidence.lift > 0


def test_a_react_graph_injects_lessons_and_reports_the_outcome(lam: Lamar, saver: Any) -> None:
    capture = Capture()
    graph = react_graph(lam, fake_model(capture), checkpointer=saver)
    state = graph.invoke({"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT},
                         thread("sync"))
    assert_turn_learned(lam, state, capture)
    assert lam.stats()["episodes"] == 1 and lam.stats()["reports"] == 1


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_the_same_graph_runs_under_ainvoke(lam: Lamar, kind: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    capture = Capture()
    used: list[str] = []
    for name in ("arecall", "areport"):  # under ainvoke the nodes take the engine's async path
        original = getattr(lam, name)

        async def counted(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
            used.append(_name)
            return await _original(*args, **kwargs)

        monkeypatch.setattr(lam, name, counted)
    if kind == "memory":
        graph = react_graph(lam, fake_model(capture), checkpointer=InMemorySaver())
        state = await graph.ainvoke({"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT},
                                    thread("async"))
    else:
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "async.db")) as saver:
            graph = react_graph(lam, fake_model(capture), checkpointer=saver)
            state = await graph.ainvoke({"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT},
                                        thread("async"))
    assert_turn_learned(lam, state, capture)
    assert used == ["arecall", "areport"]


async def test_streaming_shows_what_recall_and_report_wrote(lam: Lamar) -> None:
    capture = Capture()
    graph = react_graph(lam, fake_model(capture, turns=2), checkpointer=InMemorySaver())
    inputs = {"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT}
    updates = [u for u in graph.stream(inputs, thread("stream"), stream_mode="updates")]
    recalled = next(u["recall"] for u in updates if "recall" in u)
    assert recalled["lamar_lessons"] == [lesson_id(lam)] and recalled["lamar_episode_id"]
    assert next(u["report"] for u in updates if "report" in u) == {
        "lamar_reported": recalled["lamar_episode_id"], "lamar_episodes": {recalled["lamar_episode_id"]: "reported"},
        "lamar_waiting": {recalled["lamar_episode_id"]: FORGET}}
    chunks = [c async for c in graph.astream({**inputs, "messages": [HumanMessage("again")]}, thread("astream"),
                                             stream_mode="updates")]
    assert [next(iter(c)) for c in chunks] == ["recall", "agent", "tools", "agent", "report"]
    assert lam.stats()["reports"] == 2


def test_looping_back_through_recall_keeps_one_episode_per_turn(lam: Lamar, saver: Any) -> None:
    capture = Capture()
    graph = react_graph(lam, fake_model(capture, turns=2), checkpointer=saver, recall_before_every_call=True)
    first = graph.invoke({"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT}, thread("t"))
    assert lam.stats()["episodes"] == 1 and len(capture.prompts) == 2  # two model calls, one recall
    second = graph.invoke({"messages": [HumanMessage("it fails again")]}, thread("t"))  # a new turn
    assert second["lamar_episode_id"] != first["lamar_episode_id"]
    assert second["lamar_turn"] != first["lamar_turn"]
    assert lam.stats()["episodes"] == 2 and lam.stats()["reports"] == 2
    assert lam.episode(first["lamar_episode_id"]).reports == 1  # the old turn was not reported again


def test_running_a_thread_again_without_a_new_message_keeps_its_episode(lam: Lamar) -> None:
    graph = in_line(State, ("recall", recall_node(lam)))
    app = graph.compile(checkpointer=InMemorySaver())
    first = app.invoke({"messages": [HumanMessage("the build fails", id="m1")], "lamar_context": CONTEXT},
                       thread("again"))
    assert first["lamar_turn"] == "human:m1"
    retried = app.invoke({"messages": [HumanMessage("the build fails", id="m1")]}, thread("again"))
    assert retried["lamar_episode_id"] == first["lamar_episode_id"] and lam.stats()["episodes"] == 1
    later = app.invoke({"messages": [HumanMessage("and now the tests", id="m2")]}, thread("again"))
    assert later["lamar_episode_id"] != first["lamar_episode_id"] and lam.stats()["episodes"] == 2


def test_a_resumed_thread_neither_recalls_nor_reports_twice(lam: Lamar, tmp_path: Path) -> None:
    """The outcome comes from a person at an interrupt; the graph is resumed by a new graph
    object on a new connection to the same SQLite checkpoint file."""

    def review(state: Any) -> dict[str, Any]:
        return {"lamar_outcome": interrupt({"answer": state["messages"][-1].content})}

    def build(conn: sqlite3.Connection, capture: Capture) -> Any:
        graph = StateGraph(State)
        graph.add_node("recall", recall_node(lam))
        graph.add_node("agent", agent_node(fake_model(capture)))
        graph.add_node("tools", ToolNode([run_build]))
        graph.add_node("review", review)
        graph.add_node("report", report_node(lam))
        graph.add_edge(START, "recall")
        graph.add_edge("recall", "agent")
        graph.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "review"})
        graph.add_edge("tools", "agent")
        graph.add_edge("review", "report")
        graph.add_edge("report", END)
        return graph.compile(checkpointer=SqliteSaver(conn))

    path = tmp_path / "resume.db"
    first = sqlite3.connect(path, check_same_thread=False)
    paused = build(first, Capture()).invoke(
        {"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT}, thread("r"))
    assert paused["__interrupt__"][0].value == {"answer": "The build passes now."}
    first.close()
    second = sqlite3.connect(path, check_same_thread=False)
    graph = build(second, Capture())
    done = graph.invoke(Command(resume="reverted"), thread("r"))
    assert done["lamar_episode_id"] == paused["lamar_episode_id"]
    assert lam.stats()["episodes"] == 1 and lam.stats()["reports"] == 1
    assert lam.episode(done["lamar_episode_id"]).signal == "reverted"
    # Replaying the report step from its checkpoint does not report a second time.
    before_report = next(s for s in graph.get_state_history(thread("r")) if s.next == ("report",))
    graph.invoke(None, before_report.config)
    assert lam.stats()["reports"] == 1 and lam.episode(done["lamar_episode_id"]).reports == 1
    second.close()


def test_an_outcome_sent_with_the_next_message_reports_the_previous_turn(lam: Lamar) -> None:
    graph = in_line(State,
                    ("report", report_node(lam)),
                    ("recall", recall_node(lam)),
                    ("agent", agent_node(FakeMessagesListChatModel(responses=[AIMessage("Try this.")]))))
    app = graph.compile(checkpointer=InMemorySaver())
    first = app.invoke({"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT}, thread("n"))
    assert lam.stats()["reports"] == 0  # nothing known yet
    second = app.invoke({"messages": [HumanMessage("that broke it")], "lamar_outcome": "corrected"}, thread("n"))
    assert lam.episode(first["lamar_episode_id"]).signal == "corrected"
    assert second["lamar_outcome"] is None and lam.episode(second["lamar_episode_id"]).reward is None


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_previous_turn_that_sleep_compacted_is_left_as_reported(lam: Lamar, mode: str) -> None:
    # The app reported turn 1 elsewhere, then sleep compacted it: the report node finds no
    # episode, which is "reported already", and the turn goes on.
    graph = in_line(State,
                    ("report", report_node(lam)),
                    ("recall", recall_node(lam)),
                    ("agent", agent_node(FakeMessagesListChatModel(responses=[AIMessage("a"), AIMessage("b")]))))
    app = graph.compile(checkpointer=InMemorySaver())
    run = app.invoke if mode == "invoke" else None
    first_input = {"messages": [HumanMessage("the build fails")], "lamar_context": CONTEXT}
    first = run(first_input, thread("c")) if run else await app.ainvoke(first_input, thread("c"))
    lam.report(first["lamar_episode_id"], "shipped")
    report = lam.sleep(keep_last=0)
    assert lam.apply(report, only=[p.id for p in report.of_kind("compact")]).applied
    second_input = {"messages": [HumanMessage("works now")], "lamar_outcome": "accepted"}
    second = run(second_input, thread("c")) if run else await app.ainvoke(second_input, thread("c"))
    assert second["messages"][-1].content == "b"
    # Marked reported by the report node, then forgotten by the new turn: never left open.
    reported = next(s for s in app.get_state_history(thread("c")) if s.next == ("recall",))
    assert reported.values["lamar_episodes"][first["lamar_episode_id"]] == "reported"
    assert first["lamar_episode_id"] not in second["lamar_episodes"]


@dataclasses.dataclass
class AppContext:
    user: str
    lamar_context: dict[str, str]


def test_the_context_can_come_from_the_runtime_or_a_function(lam: Lamar) -> None:
    def graph_with(schema: Any, node: Any) -> Any:
        graph = in_line(State, ("recall", node), context_schema=schema)
        return graph.compile()

    plain = graph_with(dict, recall_node(lam)).invoke({"messages": [HumanMessage("hi")]}, context=CONTEXT)
    nested = graph_with(AppContext, recall_node(lam)).invoke(
        {"messages": [HumanMessage("hi")]}, context=AppContext(user="ana", lamar_context=CONTEXT))
    derived = graph_with(None, recall_node(lam, context=lambda s: {**CONTEXT, "task": s["messages"][-1].content})
                         ).invoke({"messages": [HumanMessage("build_fails")]})
    for state in (plain, nested, derived):
        assert lam.episode(state["lamar_episode_id"]).context == CONTEXT
    with pytest.raises(InvalidContext):
        graph_with(None, recall_node(lam)).invoke({"messages": [HumanMessage("hi")]})



@pytest.mark.parametrize("source", ["function", "state", "lamar_context"])
def test_a_long_value_in_a_context_the_app_gives_is_left_out_and_the_turn_learns(lam: Lamar, source: str) -> None:
    long = {**CONTEXT, "log": "x" * 5_000}  # a value of 5,000 characters on one turn
    capture = Capture()
    app = react_graph(lam, fake_model(capture), context_schema=AppContext,
                      **({"context": lambda state: long} if source == "function" else {}))
    given: dict[str, Any] = {"messages": [HumanMessage("the build fails")]}
    if source == "state":
        given["lamar_context"] = long
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        state = app.invoke(given, context=AppContext("ana", long if source == "lamar_context" else CONTEXT))
    said = [str(w.message) for w in seen if issubclass(w.category, UserWarning)]
    assert len(said) == 1 and "left out 'log' (5,000 characters)" in said[0] and "4,000" in said[0], said
    assert lam.episode(state["lamar_episode_id"]).context == CONTEXT
    assert_turn_learned(lam, state, capture)

def test_a_bad_outcome_is_a_warning_and_leaves_the_episode_open(lam: Lamar, caplog: pytest.LogCaptureFixture) -> None:
    graph = in_line(State,
                    ("recall", recall_node(lam)),
                    ("judge", lambda state: {"lamar_outcome": 3.5}),
                    ("report", report_node(lam)))
    with caplog.at_level("WARNING", logger="lamar_langgraph.nodes"):
        state = graph.compile().invoke({"lamar_context": CONTEXT})
    assert "ignored the outcome 3.5" in caplog.text and "outside [-1, 1]" in caplog.text
    # An interrupt resumed with a typo cannot be answered again: the log names the episode and the ways out.
    assert state["lamar_episode_id"] in caplog.text and "lam.report(episode_id" in caplog.text
    assert state["lamar_outcome"] is None and state["lamar_episodes"] == {state["lamar_episode_id"]: "open"}
    assert lam.stats()["episodes"] == 1 and lam.stats()["reports"] == 0


@pytest.mark.parametrize("run", ["invoke", "ainvoke"])
async def test_a_reward_written_as_text_by_a_form_or_a_resume_is_that_reward(lam: Lamar, tmp_path: Path,
                                                                            run: str) -> None:
    """A review form posts "-0.5" as text: it was ignored with a warning and the episode left open,
    while `lamar report EP -0.5` and `lam.report(ep, -0.5)` took it."""
    graph = in_line(State,
                    ("report", report_node(lam)),
                    ("recall", recall_node(lam, context=CONTEXT)),
                    ("review", lambda state: {"lamar_outcome": interrupt({"question": "how did it go?"})}),
                    ("report_review", report_node(lam)))
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    app = graph.compile(checkpointer=SqliteSaver(conn) if run == "invoke" else InMemorySaver())
    config: Any = thread("form")

    async def turn(update: Any) -> dict[str, Any]:
        if run == "ainvoke":
            return await app.ainvoke(update, config)  # type: ignore[no-any-return]
        return app.invoke(update, config)

    first = await turn({"messages": [HumanMessage("the build fails")]})
    done = await turn(Command(resume="0.5"))
    assert lam.episode(first["lamar_episode_id"]).reward == 0.5 and done["lamar_reported"] == first["lamar_episode_id"]
    second = await turn({"messages": [HumanMessage("and the tests?")]})
    await turn(Command(resume=" -0.5 "))
    episode = lam.episode(second["lamar_episode_id"])
    assert (episode.reward, episode.signal) == (-0.5, None)
    conn.close()


@pytest.mark.parametrize("run", ["invoke", "ainvoke"])
async def test_a_bad_outcome_sent_with_the_next_message_does_not_fail_the_threads_later_turns(
        lam: Lamar, run: str) -> None:
    """The thread stores the input before the report node reads it: raising on it would fail every
    later turn of the thread, each finding the same stored value."""
    graph = in_line(State,
                    ("report", report_node(lam)),
                    ("recall", recall_node(lam, context=CONTEXT)),
                    ("agent", lambda state: {"messages": [AIMessage("done")]}))
    app = graph.compile(checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "7"}}

    async def turn(update: dict[str, Any]) -> dict[str, Any]:
        if run == "ainvoke":
            return await app.ainvoke(update, thread)  # type: ignore[no-any-return]
        return app.invoke(update, thread)

    first = await turn({"messages": [HumanMessage("the build fails")]})
    await turn({"messages": [HumanMessage("that broke it")], "lamar_outcome": "broke"})
    third = await turn({"messages": [HumanMessage("hello?")]})
    assert third["messages"][-1].content == "done" and lam.episode(first["lamar_episode_id"]).signal is None
    await turn({"messages": [HumanMessage("fixed, thanks")], "lamar_outcome": "shipped"})
    assert lam.episode(third["lamar_episode_id"]).signal == "shipped"


def test_bad_arguments_are_refused_when_the_graph_is_built_not_in_its_first_run(lam: Lamar) -> None:
    """A store or a path for the engine, or a context that is neither a mapping nor a function,
    used to build a node that failed (or read state instead, for the context) inside a run."""
    from lamar import InvalidArgument, LamarError
    from lamar_langgraph import build_sleep_graph

    refused = [
        (lambda: recall_node(lam.store), InvalidArgument),
        (lambda: recall_node("lessons.db"), InvalidArgument),  # type: ignore[arg-type]
        (lambda: report_node(lam.store), InvalidArgument),
        (lambda: build_sleep_graph(lam.store), InvalidArgument),
        (lambda: recall_node(lam, context=["project", "trace"]), InvalidContext),  # type: ignore[arg-type]
        (lambda: recall_node(lam, context={"project": 3}), InvalidContext),  # type: ignore[dict-item]
        (lambda: recall_node(lam, k=-1), InvalidArgument),
        (lambda: recall_node(lam, k=1_001), InvalidArgument),  # past the engine's most slots
        (lambda: recall_node(lam, turn="human"), InvalidArgument),  # type: ignore[arg-type]
        (lambda: report_node(lam, outcome="shipped"), InvalidArgument),  # type: ignore[arg-type]
    ]
    for build, error in refused:
        with pytest.raises(error) as caught:
            build()
        assert isinstance(caught.value, LamarError)
    assert lam.stats()["episodes"] == 0


def test_the_module_examples_run() -> None:
    result = doctest.testmod(lamar_langgraph.nodes)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_resume_by_a_worker_on_another_store_warns_that_the_outcome_is_lost(
        mode: str, caplog: pytest.LogCaptureFixture) -> None:
    # Two workers share the thread's checkpointer; the one that resumes opened another store (another namespace,
    # its own file): the review's outcome reaches no store, and the log must say so, not pass it as compacted.
    recalled, other = Lamar(":memory:", seed=1), Lamar(":memory:", seed=1)
    recalled.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
    saver, config = InMemorySaver(), thread("two-workers")

    def worker(lam: Lamar) -> Any:
        return in_line(State, ("recall", recall_node(lam)),
                       ("review", lambda state: {"lamar_outcome": interrupt({"question": "did it work?"})}),
                       ("report", report_node(lam))).compile(checkpointer=saver)

    paused = worker(recalled).invoke({"messages": [HumanMessage("it fails")], "lamar_context": {"project": "trace"}},
                                     config)
    episode = paused["lamar_episode_id"]
    resume = worker(other).invoke if mode == "invoke" else worker(other).ainvoke
    with caplog.at_level("WARNING", logger="lamar_langgraph.nodes"):
        done = resume(Command(resume="reverted"), config)
        done = done if mode == "invoke" else await done
    assert recalled.episode(episode).signal is None and done["lamar_episodes"][episode] == "reported"
    warned, = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert episode in warned and "another store" in warned and "report was not recorded" in warned
