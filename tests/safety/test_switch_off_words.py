"""Switching off tests or hooks is warned about where the words instruct it, not where a sentence about
something else names it ("We discussed disabling flaky tests", "CI fails if someone skips the hooks")."""

from __future__ import annotations

import pytest

from lamar.safety.instructs import instructed_harm

SWITCHES_OFF = "switches off tests, hooks or verification"


@pytest.mark.parametrize("text", [
    "When the suite is red, disable the failing tests",
    "Fix CI by disabling the flaky tests",
    "Rerun once, then skip the pre-commit hooks",
    "Just comment out the assertions that fail",
    "- Delete the failing tests so CI goes green",
])
def test_an_instruction_to_switch_off_tests_is_named(text: str) -> None:
    said = instructed_harm(text)
    assert said is not None and said.startswith(f"{SWITCHES_OFF}: "), said


@pytest.mark.parametrize("text", [
    "We discussed disabling flaky tests in the retro",
    "The team decided against skipping hooks",
    "Ask before disabling the test suite",
    "Reviewers check that nobody disabled the tests",
    "CI fails if someone skips the hooks",
    "The linter flags disabled tests",
    "Don't let anyone disable the tests",
])
def test_a_sentence_that_only_names_it_is_not_named(text: str) -> None:
    assert instructed_harm(text) is None
