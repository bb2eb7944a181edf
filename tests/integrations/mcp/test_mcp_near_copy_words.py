"""A proposal worded apart from a held lesson only by function words or a reason is a copy of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from lamar import Lamar
from lamar.rules import import_rules
from lamar_mcp.tools import LamarTools


def test_using_for_with_is_the_held_lesson(tmp_path: Path) -> None:
    # Both were stored: two arms of one lesson, each with half its evidence.
    with Lamar(str(tmp_path / "s.db")) as lam:
        tools = LamarTools(lam)
        held = tools.propose_lesson("the checkout test is flaky on CI", "freeze time with freezegun",
                                    scope={"project": "shop"})
        with pytest.raises(ToolError, match=f"already holds this lesson as {held.lesson_id}"):
            tools.propose_lesson("the checkout test is flaky on CI", "freeze time using freezegun",
                                 scope={"project": "shop"})


def test_a_rule_imported_with_its_reason_is_the_held_lesson(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "CLAUDE.md").write_text("- When a migration times out, run it in batches, because long locks "
                                       "block writers.\n")
    with Lamar(str(tmp_path / "s.db")) as lam:
        (rule,) = import_rules(lam, project, project="shop", apply=True).lessons
        tools = LamarTools(lam)
        with pytest.raises(ToolError, match=f"already holds this lesson as {rule.id}"):
            tools.propose_lesson("a migration times out", "run it in batches", scope={"project": "shop"})


def test_a_proposals_verb_reads_in_lower_case_after_its_condition(tmp_path: Path) -> None:
    # "When the clock matters in a test, Freeze time ..." was shown, the proposal's capital kept.
    with Lamar(str(tmp_path / "s.db")) as lam:
        done = LamarTools(lam).propose_lesson("When the clock matters in a test", "Freeze time with freezegun.")
        assert done.text == "When the clock matters in a test, freeze time with freezegun."
        assert lam.get(done.lesson_id).action == "Freeze time with freezegun."  # stored as given


@pytest.mark.parametrize(("held", "proposed"), [("run the tests", "run the unit tests"),
                                                ("run the unit tests", "run the tests")])
def test_an_action_one_plain_word_apart_is_the_held_lesson(tmp_path: Path, held: str, proposed: str) -> None:
    # The longer side's extra word is in no held lesson's words: the index must not leave the shorter one out.
    with Lamar(str(tmp_path / "s.db")) as lam:
        tools = LamarTools(lam)
        for n in range(3):  # other lessons of the scope, so the index narrows the lessons it compares
            tools.propose_lesson("you edit a migration", f"read migration note {n} aloud", scope={"project": "shop"})
        first = tools.propose_lesson("you edit a migration", held, scope={"project": "shop"})
        with pytest.raises(ToolError, match=f"already holds this lesson as {first.lesson_id}"):
            tools.propose_lesson("you edit a migration", proposed, scope={"project": "shop"})
