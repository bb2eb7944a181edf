"""`Experience.render` says "When" and "because" once, whether or not the fields already open with them."""

from __future__ import annotations

import pytest

from lamar import Experience, Lamar


@pytest.mark.parametrize("precondition, rationale", [
    ("the build fails", "stale module maps survive"),
    ("When the build fails", "because stale module maps survive"),
    ("when  the build fails", "Because stale module maps survive."),
])
def test_when_and_because_are_said_once(precondition: str, rationale: str) -> None:
    exp = Experience(precondition, "clear DerivedData", rationale)
    assert exp.render() == "When the build fails, clear DerivedData, because stale module maps survive."


def test_a_field_that_is_only_the_word_is_kept() -> None:
    assert Experience("when", "retry", "because").render() == "When when, retry, because because."


def test_the_stored_fields_keep_what_was_typed(tmp_path) -> None:
    with Lamar(str(tmp_path / "lessons.db")) as lam:
        exp = lam.get(lam.add(Experience("When the build fails", "clear DerivedData", "because it is stale")))
    assert (exp.precondition, exp.rationale) == ("When the build fails", "because it is stale")
    assert exp.render() == "When the build fails, clear DerivedData, because it is stale."


@pytest.mark.parametrize("action, shown", [
    # A clause after a semicolon goes on in the same sentence, as the first one does.
    ("Always run `make test` before committing; Never Push to main",
     "always run `make test` before committing; never push to main"),
    ("Never commit secrets; Use the .env file", "never commit secrets; use the .env file"),
    ("Do not Commit secrets", "do not commit secrets"),
    ("Always Use pathlib", "always use pathlib"),
    # A name keeps its capital, after a semicolon or an adverb alike; so does what a code span holds.
    ("Keep the cache; Docker must run", "keep the cache; Docker must run"),
    ("Always Docker compose up", "always Docker compose up"),
    ("Run `a; Never b`", "run `a; Never b`"),
    # A new sentence starts with its capital.
    ("Run the tests. Never push to main", "run the tests. Never push to main"),
])
def test_a_rule_in_title_case_reads_on_in_lower_case(action: str, shown: str) -> None:
    assert Experience("working on shop", action).render() == f"When working on shop, {shown}."


def test_the_stored_action_keeps_its_capitals() -> None:
    exp = Experience("working on shop", "Never Push to main")
    assert (exp.action, exp.render()) == ("Never Push to main", "When working on shop, never push to main.")
