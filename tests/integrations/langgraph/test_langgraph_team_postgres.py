"""A team's LangGraph agents and the `lamar` command on one PostgreSQL store, as docs/langgraph.md
and docs/postgres.md set them up: what one of them runs must not cost the others a rebuild."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import MessagesState

from lamar import Experience, Lamar, Scope
from lamar.store.postgres import locks
from lamar_langgraph import LamarState, recall_node, report_node
from tests.integrations.langgraph.graphs import in_line
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


class State(MessagesState, LamarState):
    pass


@pytest.fixture
def team_url(postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("team")
    yield namespace_url(postgres_url, namespace, lamar_fold="on")
    drop_namespaces(postgres_url, namespace)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tunings the namespace's rows are built under from the log (each build reads and folds
    every event, holding the namespace's writes back), in order."""
    seen: list[str] = []
    build = locks.build

    def counted(db: Any, tuning: str, folder: Any, *, force: bool = False) -> None:
        seen.append(tuning)
        build(db, tuning, folder, force=force)

    monkeypatch.setattr(locks, "build", counted)
    return seen


def _agent(lam: Lamar) -> Any:
    def agent(state: State) -> dict[str, Any]:
        return {"messages": [AIMessage("Cleared DerivedData; the build passes.")]}

    def judge(state: State) -> dict[str, Any]:
        return {"lamar_outcome": "shipped"}

    graph = in_line(State,
                    ("recall", recall_node(lam)),
                    ("agent", agent),
                    ("judge", judge),
                    ("report", report_node(lam)))
    return graph.compile(checkpointer=InMemorySaver())


def _turns(app: Any, who: str, n: int) -> None:
    for i in range(n):
        state = app.invoke({"messages": [HumanMessage(f"the build broke ({who} {i})")],
                            "lamar_context": {"project": "trace", "dev": who}},
                           {"configurable": {"thread_id": f"{who}-{i}"}})
        assert state["lamar_reported"] == state["lamar_episode_id"]


def _cli(*argv: str) -> str:
    from lamar.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(list(argv)) == 0
    return out.getvalue()


def test_agents_that_settle_pending_episodes_and_the_cli_share_the_rows(team_url: str, builds: list[str]) -> None:
    """docs/langgraph.md's `pending_after` on the agents, none on a teammate's agent or on the
    `lamar` command: the settling knobs are not the fold's tuning, so nobody builds the rows again
    (each build folds the whole log, exclusively: 82 s for 10^6 episodes)."""
    ana = Lamar(team_url, k=2, pending_after=3600.0)
    ana.add(Experience("the Xcode build fails after a dependency bump", "clear DerivedData before rebuilding",
                       scope=Scope(project="trace")))
    _turns(_agent(ana), "ana", 3)
    first = len(builds)  # a new namespace's rows are built once, by its first engine
    bo = Lamar(team_url, k=2)
    _turns(_agent(bo), "bo", 3)
    assert "clear DerivedData" in _cli("--store", team_url, "ls")
    assert "6 reported" in _cli("--store", team_url, "stats")
    _turns(_agent(ana), "ana-again", 2)
    settling = Lamar(team_url, k=2, pending_after=60.0, pending_outcome="accepted")
    _turns(_agent(settling), "cy", 2)
    assert builds[first:] == []
    for lam in (ana, bo, settling):
        lam.close()


def test_the_cli_reads_a_tuned_teams_rows_without_building_them_again(team_url: str, builds: list[str]) -> None:
    """Agents tuned as the quickstart tunes its demo (`holdout=0.2`): `lamar` commands judge with
    the tuning the rows were folded under, so a look at the store does not build them again under
    the defaults (and the agents' next call does not build them back)."""
    ana = Lamar(team_url, k=2, holdout=0.2)
    exp_id = ana.add(Experience("the Xcode build fails after a dependency bump", "clear DerivedData before rebuilding",
                                scope=Scope(project="trace")))
    _turns(_agent(ana), "ana", 4)
    first = len(builds)
    assert "clear DerivedData" in _cli("--store", team_url, "ls")
    assert "4 reported" in _cli("--store", team_url, "stats")
    assert exp_id in _cli("--store", team_url, "show", exp_id)
    episode = ana.recall({"project": "trace"}).episode_id
    assert "reported" in _cli("--store", team_url, "report", episode, "shipped")
    _turns(_agent(ana), "ana-again", 2)
    assert builds[first:] == []
    assert ana.stats()["reports"] == 7
    ana.close()


def test_two_agents_of_other_tunings_are_told_they_build_the_rows_back_and_forth(team_url: str,
                                                                                  builds: list[str]) -> None:
    """One developer's agent tuned `holdout=0.2`, a teammate's left at the defaults: each one's
    call builds the rows again under its own tuning (a fold of the whole log each time), which
    cost each episode about ten times its time on a shared 3 000-event namespace. The engine that
    builds over the other's rows says so, naming the knob that differs and what to do."""
    ana = Lamar(team_url, k=2, holdout=0.2)
    ana.add(Experience("the Xcode build fails after a dependency bump", "clear DerivedData before rebuilding",
                       scope=Scope(project="trace")))
    _turns(_agent(ana), "ana", 2)
    bo = Lamar(team_url, k=2)
    with pytest.warns(UserWarning, match=r"other tuning \(holdout 0\.2 there, 0\.04 here\).*same Lamar"):
        _turns(_agent(bo), "bo", 1)
    with pytest.warns(UserWarning, match=r"holdout 0\.04 there, 0\.2 here"):
        _turns(_agent(ana), "ana-again", 1)
    assert len(builds) >= 3  # the first build, then one each way
    for lam in (ana, bo):
        lam.close()


def test_a_second_resume_after_the_first_finished_returns_the_first_answer(team_url: str) -> None:
    """docs/langgraph.md: two teammates answer one review, one after the other. The later resume
    finds no interrupt, runs no node and raises nothing: its state holds the first answer."""
    from langgraph.types import Command, interrupt

    lam = Lamar(team_url, k=2)
    lam.add(Experience("the build fails", "read the first error", scope=Scope(project="trace")))

    def review(state: State) -> dict[str, Any]:
        return {"lamar_outcome": interrupt("did it work?")}

    graph = in_line(State, ("recall", recall_node(lam)), ("review", review), ("report", report_node(lam)))
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "review"}}
    app.invoke({"messages": [HumanMessage("the build broke")], "lamar_context": {"project": "trace"}}, config)
    first = app.invoke(Command(resume="reverted"), config)
    second = app.invoke(Command(resume="shipped"), config)
    assert second["lamar_outcome"] == first["lamar_outcome"] == "reverted"
    assert lam.episode(first["lamar_episode_id"]).signal == "reverted"
    lam.close()
