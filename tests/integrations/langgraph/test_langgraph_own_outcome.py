"""Each episode of a reviewed thread ends with its own turn's outcome, over several turns, while Lamar's SQLite
store refuses writes for a while: `lamar_waiting` keeps the outcome the store refused for the episode it was
given to, and an episode whose turn got no outcome is not given a later turn's."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, Send, interrupt

from lamar import Experience, ExperienceStore, Lamar, Scope
from lamar_langgraph import LamarState, recall_node, report_node
from lamar_langgraph.keys import last_outcome, last_value, merge_episodes, merge_turns
from tests.integrations import store_faults as faults
from tests.integrations.langgraph.graphs import in_line
from tests.integrations.langgraph.test_langgraph_store_down import _store_down

CONTEXT = {"project": "trace"}


class State(MessagesState, LamarState):
    pass


class Before(MessagesState):
    """LamarState as it was before `lamar_waiting`: the schema a thread's older checkpoints were written with."""

    lamar_context: dict[str, str]
    lamar_turn: Annotated[str | None, last_value]
    lamar_turns: Annotated[dict[str, str], merge_turns]
    lamar_episode_id: Annotated[str | None, last_value]
    lamar_lessons: Annotated[list[str], last_value]
    lamar_prompt: Annotated[str, last_value]
    lamar_outcome: Annotated[str | float | None, last_outcome]
    lamar_reported: Annotated[str | None, last_value]
    lamar_episodes: Annotated[dict[str, str], merge_episodes]


@asynccontextmanager
async def checkpointer(kind: str, mode: str, folder: Path) -> AsyncIterator[Any]:
    """A real checkpointer of `kind` for a thread run by `mode` (under ainvoke, SQLite's async saver)."""
    if kind == "memory":
        yield InMemorySaver()
    elif mode == "ainvoke":
        async with AsyncSqliteSaver.from_conn_string(str(folder / "checkpoints.db")) as saver:
            yield saver
    else:
        conn = sqlite3.connect(folder / "checkpoints.db", check_same_thread=False)
        yield SqliteSaver(conn)
        conn.close()


def _engine(tmp_path: Path) -> tuple[Lamar, str]:
    location = str(tmp_path / "lessons.db")
    lam = Lamar(ExperienceStore(location, timeout=faults.TIMEOUT), holdout=1e-9)
    lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(project="trace")))
    return lam, location


def _reviewed(lam: Lamar, saver: Any, schema: Any = State) -> Any:
    """recall -> agent -> review (an interrupt a person answers) -> report."""
    return in_line(schema,
                   ("recall", recall_node(lam)),
                   ("agent", lambda state: {"messages": [AIMessage("Cleared DerivedData.")]}),
                   ("review", lambda state: {"lamar_outcome": interrupt("did it ship?")}),
                   ("report", report_node(lam))).compile(checkpointer=saver)


class Thread:
    """One thread of a graph, run by invoke or ainvoke: `say` starts a turn, `answer` resumes its review."""

    def __init__(self, app: Any, mode: str) -> None:
        self.app, self.mode, self.config, self.said = app, mode, {"configurable": {"thread_id": "t"}}, 0

    async def run(self, given: Any) -> Any:
        if self.mode == "invoke":
            return self.app.invoke(given, self.config)
        return await self.app.ainvoke(given, self.config)

    async def say(self, text: str) -> Any:
        self.said += 1
        return await self.run({"messages": [HumanMessage(text, id=f"m{self.said}")], "lamar_context": CONTEXT})

    async def answer(self, outcome: str) -> Any:
        return await self.run(Command(resume=outcome))


def _signals(lam: Lamar, *episodes: str) -> list[tuple[str | None, int]]:
    return [(lam.episode(e).signal, lam.episode(e).reports) for e in episodes]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_a_review_refused_by_a_locked_store_goes_to_its_own_turn_not_the_next(
        tmp_path: Path, kind: str, mode: str) -> None:
    # Another process holds the SQLite store's write lock through turn 1's review and turn 2's start: the
    # review's "shipped" is refused, turn 2's recall cannot record it (nor recall: turn 2 has no episode).
    # The lock is gone by turn 2's review, whose "accepted" used to be given to turn 1's open episode.
    lam, location = _engine(tmp_path)
    async with checkpointer(kind, mode, tmp_path) as saver:
        await _locked_review(lam, location, Thread(_reviewed(lam, saver), mode))
    lam.close()


async def _locked_review(lam: Lamar, location: str, thread: Thread) -> None:
    first = (await thread.say("the build broke"))["lamar_episode_id"]
    with faults.locked(location), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the new turn says the refused outcome waits
        waiting = await thread.answer("shipped")
        assert waiting["lamar_waiting"] == {first: "shipped"}
        second = await thread.say("and the tests?")
    assert second["lamar_episode_id"] is None and second["lamar_waiting"] == {first: "shipped"}
    done = await thread.answer("accepted")
    assert _signals(lam, first) == [("shipped", 1)]
    assert done["lamar_waiting"] == {} and done["lamar_episodes"][first] == "reported"
    third = (await thread.say("and the release?"))["lamar_episode_id"]
    await thread.answer("reverted")
    assert _signals(lam, first, third) == [("shipped", 1), ("reverted", 1)]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_each_episode_ends_with_its_own_turns_outcome_when_the_store_is_back_before_the_next_review(
        tmp_path: Path, kind: str, mode: str) -> None:
    # The store refuses reports from turn 1's review until turn 2 has recalled: turn 2's review finds both
    # episodes open, and must report "shipped" for turn 1's and "accepted" for its own, not "accepted" for both.
    lam, _ = _engine(tmp_path)
    async with checkpointer(kind, mode, tmp_path) as saver:
        await _refused_then_back(lam, Thread(_reviewed(lam, saver), mode))
    lam.close()


async def _refused_then_back(lam: Lamar, thread: Thread) -> None:
    first = (await thread.say("the build broke"))["lamar_episode_id"]
    lam.report = _store_down  # type: ignore[method-assign]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        await thread.answer("shipped")
        second = (await thread.say("and the tests?"))["lamar_episode_id"]
    del lam.report
    assert second is not None and _signals(lam, first, second) == [(None, 0), (None, 0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        await thread.answer("accepted")
        third = (await thread.say("and the release?"))["lamar_episode_id"]
        await thread.answer("reverted")
    assert _signals(lam, first, second, third) == [("shipped", 1), ("accepted", 1), ("reverted", 1)]


def test_a_turn_left_without_an_outcome_is_not_given_the_next_turns(tmp_path: Path, saver: Any) -> None:
    # A new message while turn 1's review is pending: LangGraph drops that review, so turn 1 never gets an
    # outcome. It stays pending in the store (for the pending policy), and turn 2's "reverted" is turn 2's.
    lam, _ = _engine(tmp_path)
    app, config = _reviewed(lam, saver), {"configurable": {"thread_id": "t"}}
    first = app.invoke({"messages": [HumanMessage("first", id="m1")], "lamar_context": CONTEXT}, config)
    second = app.invoke({"messages": [HumanMessage("second", id="m2")], "lamar_context": CONTEXT}, config)
    assert first["lamar_episode_id"] not in second["lamar_episodes"]
    app.invoke(Command(resume="reverted"), config)
    assert _signals(lam, first["lamar_episode_id"], second["lamar_episode_id"]) == [(None, 0), ("reverted", 1)]
    assert [p.episode_id for p in lam.pending()] == [first["lamar_episode_id"]]
    lam.close()


def _upgraded(lam: Lamar, saver: Any, before: Callable[[Any], None]) -> tuple[Any, Any]:
    """A thread run by `before` on a graph whose state lacks `lamar_waiting` (its checkpoints were written
    before it existed), then the same graph on LamarState: the thread's app and config."""
    config = {"configurable": {"thread_id": "t"}}
    before(lambda given: _reviewed(lam, saver, Before).invoke(given, config))
    return _reviewed(lam, saver), config


@contextmanager
def _no_warnings() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def test_a_thread_from_before_lamar_waiting_reports_its_open_episodes_as_it_did_and_warns_when_ambiguous(
        tmp_path: Path, saver: Any) -> None:
    lam, _ = _engine(tmp_path)
    ids: list[str] = []

    def two_turns(run: Callable[[Any], Any]) -> None:
        for n in (1, 2):
            ids.append(run({"messages": [HumanMessage(f"turn {n}", id=f"m{n}")], "lamar_context": CONTEXT})[
                "lamar_episode_id"])

    app, config = _upgraded(lam, saver, two_turns)
    # Turn 1's episode is open in a state that cannot say whether it ever got an outcome: it gets this one,
    # as before, and the warning names it and the call that corrects it.
    with pytest.warns(UserWarning, match=f"lam.report\\('{ids[0]}', ") as said:
        app.invoke(Command(resume="reverted"), config)
    assert ids[1] not in " ".join(str(w.message) for w in said)
    assert _signals(lam, *ids) == [("reverted", 1), ("reverted", 1)]
    with _no_warnings():  # the next turns are the new key's
        third = app.invoke({"messages": [HumanMessage("turn 3", id="m3")], "lamar_context": CONTEXT}, config)
        app.invoke(Command(resume="shipped"), config)
    assert _signals(lam, third["lamar_episode_id"]) == [("shipped", 1)]
    lam.close()


def test_a_thread_from_before_lamar_waiting_whose_only_open_episode_is_its_turns_reports_it_quietly(
        tmp_path: Path, saver: Any) -> None:
    lam, _ = _engine(tmp_path)
    ids: list[str] = []

    def one_turn(run: Callable[[Any], Any]) -> None:
        ids.append(run({"messages": [HumanMessage("turn 1", id="m1")], "lamar_context": CONTEXT})["lamar_episode_id"])

    app, config = _upgraded(lam, saver, one_turn)
    with _no_warnings():
        app.invoke(Command(resume="shipped"), config)
    assert _signals(lam, *ids) == [("shipped", 1)]
    lam.close()


def test_a_subgraph_that_reports_the_parents_episode_leaves_nothing_waiting_in_the_parent() -> None:
    # The subgraph reports its own episode and the parent's, open in the state it was given; the parent
    # merges back its episodes as reported, and its lamar_waiting must not keep listing one as waiting.
    lam = Lamar(":memory:", holdout=1e-9)
    lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(project="trace")))
    sub = in_line(State, ("recall", recall_node(lam, context={"project": "trace", "part": "sub"})),
                  ("review", lambda state: {"lamar_outcome": interrupt("did it ship?")}),
                  ("report", report_node(lam))).compile()
    app = in_line(State, ("recall", recall_node(lam)), ("sub", sub),
                  ("report", report_node(lam))).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    app.invoke({"messages": [HumanMessage("the build broke")], "lamar_context": CONTEXT}, config)
    done = app.invoke(Command(resume="shipped"), config)
    assert set(done["lamar_episodes"].values()) == {"reported"} and len(done["lamar_episodes"]) == 2
    assert done["lamar_waiting"] == {}
    assert [lam.episode(e).signal for e in done["lamar_episodes"]] == ["shipped", "shipped"]


def test_a_parent_that_recalls_only_in_send_branches_gives_a_silent_turns_branches_the_next_outcome() -> None:
    # What docs/langgraph.md says of such a parent: no recall of its own ends a turn, so its report node cannot
    # tell an earlier turn's branches from this one's.
    lam = Lamar(":memory:", holdout=1e-9)
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(lam))
    graph.add_node("report", report_node(lam, outcome=lambda s: "shipped" if s["messages"][-1].text == "ok" else None))
    graph.add_conditional_edges(START, lambda s: [Send("recall", {"lamar_context": {"part": p}}) for p in "ab"],
                                ["recall"])
    graph.add_edge("recall", "report")
    graph.add_edge("report", END)
    app, config = graph.compile(checkpointer=InMemorySaver()), {"configurable": {"thread_id": "t"}}
    silent = app.invoke({"messages": [HumanMessage("no outcome")]}, config)["lamar_episodes"]
    judged = app.invoke({"messages": [HumanMessage("ok")]}, config)["lamar_episodes"]
    assert len(silent) == 2 and set(silent) < set(judged)
    assert {lam.episode(e).signal for e in judged} == {"shipped"} and lam.pending() == []
