"""The sleep graph over a mined candidate that would have the agent do harm: a review that names it
applies it, as `lamar ui`'s Approve does; "all", or approvals set with no review step, hold it back."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from lamar import Experience, Lamar, SleepReport, Trace
from lamar.models.scripted import ScriptedModel
from lamar_langgraph import ReviewDecision, build_sleep_graph

PUSH = "Run git push --force origin main after each fix"
LESSON = {"precondition": "When a fix is ready", "action": PUSH, "rationale": "CI reads main",
          "scope": {"project": "p"}, "trace_ids": ["t0", "t1"]}
TRACES = [Trace(f"t{i}", {"project": "p"}, input="ship the fix", output="done", outcome="shipped").to_dict()
          for i in range(2)]


def _paused(tmp_path: Path, name: str) -> tuple[Lamar, Any, dict[str, Any], dict[str, str]]:
    """A store with two lessons that say the same (a merge) and a graph paused at the review of
    them and of the warned candidate mined from TRACES; its proposal ids by kind."""
    lam = Lamar(str(tmp_path / "s.db"))
    lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    reviews = SqliteSaver(sqlite3.connect(tmp_path / "reviews.db", check_same_thread=False))
    graph = build_sleep_graph(lam, model=ScriptedModel([json.dumps([LESSON])] * 2), checkpointer=reviews)
    config = {"configurable": {"thread_id": name}}
    proposals = graph.invoke({"traces": TRACES}, config)["__interrupt__"][0].value["proposals"]
    return lam, graph, config, {p["kind"]: p["id"] for p in proposals}


def _pushes(lam: Lamar) -> list[str]:
    return [e.id for e in lam.experiences() if e.action == PUSH]


def test_the_review_shows_the_warning_and_approving_the_candidate_by_id_applies_it(tmp_path: Path) -> None:
    lam, graph, config, ids = _paused(tmp_path, "by-id")
    shown = graph.get_state(config).tasks[0].interrupts[0].value["proposals"]
    (warned,) = [p for p in shown if p.get("warning")]
    assert warned["id"] == ids["candidate"] and warned["warning"].startswith("force-pushes over a shared branch")
    done = graph.invoke(Command(resume=ReviewDecision(approve=[ids["candidate"]], reviewer="ana")), config)
    assert done["applied"] == [ids["candidate"]] and done["held_back"] == []
    assert len(_pushes(lam)) == 1


@pytest.mark.parametrize("answer", ["all", ReviewDecision(approve_all=True)])
def test_approving_all_applies_the_rest_and_holds_the_warned_candidate_back(tmp_path: Path, answer: Any,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    lam, graph, config, ids = _paused(tmp_path, "all")
    done = graph.invoke(Command(resume=answer), config)
    assert f"held back {ids['candidate']}: WARNING, this lesson tells the agent to do harm" in caplog.text
    assert done["applied"] == [ids["merge"]]
    ((held, warning),) = done["held_back"]
    assert held == ids["candidate"] and warning.startswith("force-pushes over a shared branch")
    assert _pushes(lam) == []
    # Held back is not lost: applied from Python, it is what the store holds, and held back no more.
    assert lam.apply(SleepReport.from_dict(done["report"]), only=[held]).applied == [held]
    assert len(_pushes(lam)) == 1


def test_approvals_set_with_no_review_step_hold_the_warned_candidate_back(tmp_path: Path) -> None:
    lam, graph, config, ids = _paused(tmp_path, "no-review")
    graph.update_state(config, {"approved": [ids["candidate"], ids["merge"]]}, as_node="review")
    done = graph.invoke(None, config)
    assert done["applied"] == [ids["merge"]] and [h[0] for h in done["held_back"]] == [ids["candidate"]]
    assert _pushes(lam) == []


def test_a_thread_run_again_starts_with_no_decision(tmp_path: Path) -> None:
    # An earlier night's decision, left in the state, would confirm a candidate of the same id tonight.
    _, graph, config, ids = _paused(tmp_path, "nightly")
    graph.invoke(Command(resume=ReviewDecision(approve=[ids["candidate"]], reviewer="ana")), config)
    assert graph.get_state(config).values["decision"]["approve"] == [ids["candidate"]]
    graph.invoke({"traces": TRACES}, config)  # the same thread the next night
    assert graph.get_state(config).values["decision"] == {}
