"""A mined candidate whose lesson would have the agent do harm carries a warning in the report, read
again from its lesson when a report has none; one that forbids the harm carries none."""

from __future__ import annotations

import json

import pytest

from lamar import InvalidReport, Lamar, Trace
from lamar.models import ScriptedModel
from lamar.sleep import SleepReport
from lamar.sleep.kinds import describe
from lamar.sleep.warned import proposal_warning

PUSH = "Run git push --force origin main after each fix"


def _mined(action: str, lam: Lamar | None = None) -> SleepReport:
    traces = [Trace(f"t{i}", {"project": "p"}, input="ship the fix", output="done", outcome="shipped")
              for i in range(2)]
    reply = json.dumps([{"precondition": "When a fix is ready", "action": action, "rationale": "CI reads main",
                         "scope": {"project": "p"}, "trace_ids": ["t0", "t1"]}])
    return (lam or Lamar(":memory:")).sleep(traces=traces, model=ScriptedModel([reply]))


def test_a_mined_force_push_carries_its_warning_through_the_report_file() -> None:
    (proposal,) = _mined(PUSH).of_kind("candidate")
    assert proposal.warning == "force-pushes over a shared branch: 'git push --force origin main'"
    saved = json.loads(json.dumps(proposal.to_dict()))
    assert saved["warning"] == proposal.warning
    assert SleepReport.from_dict({"proposals": [saved]}).proposals[0] == proposal
    assert any(line.strip().startswith("WARNING: this lesson tells the agent to do harm (force-pushes")
               for line in describe(proposal))


def test_a_lesson_that_forbids_the_push_carries_no_warning_and_writes_no_key() -> None:
    (proposal,) = _mined("Never run git push --force origin main; open a PR instead").of_kind("candidate")
    assert proposal.warning == "" and "warning" not in proposal.to_dict()
    assert not any("WARNING" in line for line in describe(proposal))


def test_a_report_made_before_warnings_still_shows_one_read_from_the_lesson() -> None:
    (proposal,) = _mined(PUSH).of_kind("candidate")
    old = {key: value for key, value in proposal.to_dict().items() if key != "warning"}
    (read,) = SleepReport.from_dict({"proposals": [old]}).proposals
    assert read.warning == "" and proposal_warning(read) == proposal.warning
    assert any("WARNING" in line for line in describe(read))


def test_a_warning_that_is_not_text_is_refused_with_the_field_named() -> None:
    (proposal,) = _mined(PUSH).of_kind("candidate")
    with pytest.raises(InvalidReport, match="'warning' must be a string"):
        SleepReport.from_dict({"proposals": [{**proposal.to_dict(), "warning": ["x"]}]})


def test_apply_in_python_adds_the_warned_candidate_the_caller_chose() -> None:
    lam = Lamar(":memory:")
    report = _mined(PUSH, lam)
    assert lam.apply(report).applied == [report.of_kind("candidate")[0].id]
    (exp,) = lam.experiences(status="candidate")
    assert exp.action == PUSH
