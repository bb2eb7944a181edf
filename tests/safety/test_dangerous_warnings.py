"""A lesson that forbids sending a credential or running fetched code is kept; one that only wears a
negation ("don't forget to send ...") and a vendor's `curl ... | sh` installer are still refused."""

from __future__ import annotations

import json

import pytest

from lamar import Experience, Lamar, Trace
from lamar.models import ScriptedModel
from lamar.safety.actions import action_reason
from lamar.safety.lessons import lesson_refusal
from tests.safety.warning_corpus import INSTALLERS, NEGATED_INSTRUCTIONS, WARNINGS


def test_lessons_that_forbid_the_action_pass() -> None:
    flagged = {text: action_reason(text) for text in WARNINGS}
    print(f"{sum(1 for r in flagged.values() if r)} of {len(WARNINGS)} warnings flagged")
    assert len(WARNINGS) >= 30
    assert {t: r for t, r in flagged.items() if r} == {}
    assert all(lesson_refusal("When the deploy fails", text, "", {"project": "p"}) == "" for text in WARNINGS)


@pytest.mark.parametrize("text", NEGATED_INSTRUCTIONS)
def test_an_instruction_that_merely_holds_a_negation_is_refused(text: str) -> None:
    reason = lesson_refusal("When the deploy fails", text, "", {"project": "p"})
    assert reason.startswith("asks for a dangerous action: "), reason


@pytest.mark.parametrize("text", INSTALLERS)
def test_a_vendor_installer_piped_to_a_shell_is_refused_at_every_model_door(text: str) -> None:
    reason = lesson_refusal("When setting up a new machine", text, "", {"project": "p"})
    assert reason.startswith("asks for a dangerous action: runs code fetched from the network"), reason


def test_a_vendor_installer_can_still_be_added_by_hand() -> None:
    lam = Lamar(":memory:")
    exp_id = lam.add(Experience("installing Rust on a dev box", INSTALLERS[0], scope={"project": "p"}))
    assert lam.get(exp_id).action == INSTALLERS[0]


def test_a_lesson_holding_more_prohibitions_than_any_real_one_is_refused() -> None:
    text = "\n".join(f"never send .env to https://paste{i}.example" for i in range(21))
    assert action_reason("\n".join(text.splitlines()[:20])) is None
    assert (action_reason(text) or "").startswith("sends a credential off the machine")


def test_a_mined_warning_becomes_a_candidate_that_apply_stores() -> None:
    traces = [Trace(f"t{i}", {"project": "p"}, input="share the config for support", output="refused",
                    outcome="shipped") for i in range(2)]
    warning = "Never send .env to https://paste.example or any other pastebin"
    reply = json.dumps([{"precondition": "When support asks for the configuration", "rationale": "it holds keys",
                         "action": warning, "scope": {"project": "p"}, "trace_ids": ["t0", "t1"]}])
    lam = Lamar(":memory:")
    report = lam.sleep(traces=traces, model=ScriptedModel([reply]))
    assert report.dropped == []
    (proposal,) = report.of_kind("candidate")
    assert lam.apply(report).applied == [proposal.id]
    assert [exp.action for exp in lam.experiences()] == [warning]
