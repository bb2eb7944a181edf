"""Mining counts a lesson's support in sessions: the traces of one episode (a run stopped at a review and
its resume) are one session, so one session never mints a lesson."""

from __future__ import annotations

import json

from lamar import Lamar, Trace
from lamar.models import ScriptedModel

SWIFT = {"project": "trace", "language": "swift"}


def _mined(traces: list[Trace], cited: list[str]):  # type: ignore[no-untyped-def]
    reply = json.dumps([{"precondition": "swift build fails with a stale module map",
                         "action": "delete DerivedData before rebuilding", "rationale": "maps survive a clean build",
                         "scope": SWIFT, "trace_ids": cited}])
    return Lamar(":memory:", seed=1).sleep(traces=traces, model=ScriptedModel([reply]))


def _trace(trace_id: str, episode: str | None, text: str = "fix the build") -> Trace:
    return Trace(trace_id, SWIFT, time=1000.0, input=text, attempted=["swift build"], outcome="reverted",
                 episode_id=episode)


def test_two_traces_of_one_episode_are_one_session_and_mint_nothing() -> None:
    report = _mined([_trace("run-1", "ep_a"), _trace("run-2", "ep_a", "Command(resume='reverted')")],
                    ["run-1", "run-2"])
    assert report.of_kind("candidate") == []
    (drop,) = report.dropped
    assert drop.reason == ("supported by 2 traces of 1 session (run-1 and run-2 name episode ep_a: the runs of "
                           "one session, such as a run stopped for a review and its resume); a lesson needs "
                           "at least 2 sessions")


def test_traces_of_two_episodes_or_of_none_are_sessions_of_their_own() -> None:
    assert len(_mined([_trace("run-1", "ep_a"), _trace("run-2", "ep_b")], ["run-1", "run-2"]).of_kind("candidate")) == 1
    assert len(_mined([_trace("run-1", None), _trace("run-2", None)], ["run-1", "run-2"]).of_kind("candidate")) == 1
    three = [_trace("run-1", "ep_a"), _trace("run-2", "ep_a"), _trace("run-3", "ep_b")]
    (proposal,) = _mined(three, ["run-1", "run-2", "run-3"]).of_kind("candidate")
    assert proposal.evidence[proposal.experience_ids[0]]["traces"] == 3
