"""Near-duplicate detection: same lesson in other words merges; different or negated actions do not."""

from __future__ import annotations

import pytest

from lamar.sleep.similarity import NEAR_DUPLICATE, lesson_similarity, overlap


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("the Xcode build fails after a dependency bump", "clear the DerivedData folder"),
         ("Xcode build failing after bumping a dependency", "clear DerivedData folder")),
        (("tests are flaky", "rerun the failing test once"), ("flaky tests", "rerun each failing test once")),
        (("CI is red on main", "Revert the last merge."), ("CI is red on main!", "revert the last merge")),
    ],
)
def test_same_lesson_in_other_words_is_a_near_duplicate(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert lesson_similarity(*a, *b) >= NEAR_DUPLICATE


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("the build fails", "clear the cache"), ("the build fails", "clear the logs")),
        (("the build fails", "clear the cache"), ("the build fails", "don't clear the cache")),
        (("the build fails", "rebase on main"), ("the build does not fail", "rebase on main")),
        (("formatting swift code", "indent with tabs"), ("formatting swift code", "indent with spaces")),
        (("a test fails", "read the log"), ("the build fails", "read the log")),
    ],
)
def test_different_lessons_are_not(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert lesson_similarity(*a, *b) < NEAR_DUPLICATE


def test_overlap_is_symmetric_and_bounded() -> None:
    pairs = [("clear the cache", "clear caches now"), ("", ""), ("run it", "never run it")]
    for a, b in pairs:
        assert overlap(a, b) == overlap(b, a)
        assert 0.0 <= overlap(a, b) <= 1.0
