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


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # "with" and "using" say how, not what: the two were stored as two lessons splitting one's evidence.
        (("the checkout test is flaky on CI", "freeze time with freezegun"),
         ("the checkout test is flaky on CI", "freeze time using freezegun")),
        # A rule imported as written keeps its reason in its action; a proposal of the same lesson has none.
        (("a migration times out", "Run it in batches, because long locks block writers"),
         ("a migration times out", "run it in batches")),
        (("you edit a migration", "you must run the migration tests"),
         ("you edit a migration", "run the migration tests")),
    ],
)
def test_function_words_and_the_reason_do_not_count(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert lesson_similarity(*a, *b) >= NEAR_DUPLICATE


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("working on shop", "run the unit tests with pytest before every commit to main"),
         ("working on shop", "run the unit tests with unittest before every commit to main")),
        (("the checkout test is flaky", "freeze time with freezegun"),
         ("the checkout test is flaky", "freeze time with time-machine")),
        (("a payment call times out", "retry it 3 times with a one second wait between tries"),
         ("a payment call times out", "retry it 5 times with a one second wait between tries")),
        (("numpy breaks the pipeline", "pin numpy to 1.26 in requirements.txt"),
         ("numpy breaks the pipeline", "pin numpy to 1.25 in requirements.txt")),
        (("the build fails on Python 3.12", "pin setuptools below 70"),
         ("the build fails on Python 3.11", "pin setuptools below 70")),
        (("a migration times out", "Run it in batches, because long locks block writers"),
         ("a migration times out", "never run it in batches")),
        (("a test is slow", "run it with coverage"), ("a test is slow", "run it without coverage")),
    ],
)
def test_a_tool_a_number_a_version_or_a_negation_apart_are_two_lessons(a: tuple[str, str],
                                                                       b: tuple[str, str]) -> None:
    assert lesson_similarity(*a, *b) < NEAR_DUPLICATE


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # A short action that says one word more is the same lesson: two words of three are shared, under 0.7.
        (("you edit the payment code", "run the tests"), ("you edit the payment code", "run the unit tests")),
        (("the build fails", "clear the cache"), ("the build fails", "clear the build cache")),
        (("a migration fails halfway", "restore the backup"),
         ("a migration fails halfway", "restore the latest backup")),
        (("the linter complains about imports", "sort them with isort"),
         ("the linter complains about imports", "sort the imports using isort")),
        # The extra word qualifies the tool both name.
        (("a flaky network test fails", "retry it with exponential backoff"),
         ("a flaky network test fails", "retry it with backoff")),
    ],
)
def test_an_action_one_plain_word_longer_is_the_same_lesson(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert lesson_similarity(*a, *b) >= NEAR_DUPLICATE
    assert lesson_similarity(*b, *a) == lesson_similarity(*a, *b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("you edit the payment code", "run the tests"), ("you edit the payment code", "run only the tests")),
        (("you edit the payment code", "run the tests"), ("you edit the payment code", "run the tests with pytest")),
        (("working on shop", "push to main"), ("working on shop", "never push to main")),
        (("you edit a migration", "run the migration tests"),
         ("you edit a migration", "run the migration tests first")),
        (("a worker hangs", "restart the worker"), ("a worker hangs", "restart the worker again")),
        (("a request times out", "retry it"), ("a request times out", "retry it twice")),
        (("working on shop", "keep functions short"), ("working on shop", "keep functions under 40 lines")),
        (("working on shop", "delete the branch"), ("working on shop", "delete the remote branch")),
        (("the server hangs", "restart the server"), ("the server hangs", "restart the production server")),
        # A precondition's extra word says where the lesson holds: a narrower situation is counted in full.
        (("the build fails", "clear DerivedData"), ("the iOS build fails", "clear DerivedData")),
    ],
)
def test_an_extra_word_of_order_amount_or_tool_keeps_two_lessons(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert lesson_similarity(*a, *b) < NEAR_DUPLICATE
    assert lesson_similarity(*b, *a) < NEAR_DUPLICATE
