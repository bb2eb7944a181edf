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
