"""The sleep graph's review remembers a no: a proposal the decision's `reject` names is recorded in the store
as `lamar review`'s `n` is, so the next sleep leaves it out; one left undecided comes back."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langgraph.types import Command

from lamar import Experience, Lamar, LamarError
from lamar_langgraph import ReviewDecision, build_sleep_graph


def _paused(name: str) -> tuple[Lamar, Any, dict[str, Any], str]:
    """A store whose two lessons say the same (a merge to review), and a graph paused at its review."""
    lam = Lamar(":memory:", seed=0)
    lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    graph = build_sleep_graph(lam)
    config = {"configurable": {"thread_id": name}}
    (proposal,) = graph.invoke({}, config)["__interrupt__"][0].value["proposals"]
    return lam, graph, config, proposal["id"]


@pytest.mark.parametrize("answer", [
    lambda pid: ReviewDecision(reject={pid: "the two differ on Xcode 15"}, reviewer="ana"),
    lambda pid: {"reject": {pid: "the two differ on Xcode 15"}},  # what a web form posts
    lambda pid: {"reject": [pid]},  # ids alone, no reason given
])
def test_a_rejected_proposal_is_remembered_and_left_out_of_the_next_sleep(answer: Any) -> None:
    lam, graph, config, pid = _paused("no")
    done = graph.invoke(Command(resume=answer(pid)), config)
    assert done["rejected"] == [pid] and done["applied"] == []
    (held,) = lam.rejections()
    assert held.proposal == pid and held.kind == "merge"
    again = lam.sleep()
    assert again.proposals == [] and again.summary["rejected"] == [pid]
    # A second thread over the same store does not wait on it: nothing to propose, no interrupt.
    assert "__interrupt__" not in graph.invoke({}, {"configurable": {"thread_id": "next-night"}})


@pytest.mark.parametrize("answer", [ReviewDecision(approve=[]), "none", []])
def test_an_approve_only_answer_rejects_nothing_and_the_proposal_comes_back(answer: Any) -> None:
    lam, graph, config, pid = _paused("undecided")
    done = graph.invoke(Command(resume=answer), config)
    assert done["rejected"] == [] and lam.rejections() == []
    assert [p.id for p in lam.sleep().proposals] == [pid]


def test_a_store_that_cannot_record_the_rejection_leaves_the_decision_standing(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    lam, graph, config, pid = _paused("store-down")

    def down(*_args: Any, **_kwargs: Any) -> list[str]:
        raise LamarError("the store is read-only")

    monkeypatch.setattr(lam, "reject", down)
    with caplog.at_level(logging.WARNING):
        done = graph.invoke(Command(resume=ReviewDecision(reject={pid: "keep both"})), config)
    assert done["rejected"] == [] and done["decision"]["reject"] == {pid: "keep both"}
    assert "did not record the rejection" in caplog.text and "the store is read-only" in caplog.text


@pytest.mark.parametrize("kind", ["merge", "compact"])
def test_approving_a_rejected_proposal_ends_its_rejection(kind: str) -> None:
    lam = Lamar(":memory:", seed=0)
    lam.add(Experience("the build fails after a bump", "clear DerivedData"))
    lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    for _ in range(10):
        lam.report(lam.recall({}).episode_id, 0.5)
    (rejected,) = lam.sleep(keep_last=5).of_kind(kind)
    lam.reject(lam.sleep(keep_last=5), [rejected.id])
    graph = build_sleep_graph(lam, include_rejected=True, keep_last=5)  # a reviewer who sees the noes too
    config = {"configurable": {"thread_id": kind}}
    asked = graph.invoke({}, config)["__interrupt__"][0].value["proposals"]
    assert rejected.id in [p["id"] for p in asked]
    done = graph.invoke(Command(resume=ReviewDecision(approve=[rejected.id])), config)
    assert done["applied"] == [rejected.id] and lam.rejections() == []
