"""Prompts that name the failing test or the linter's code rather than saying "tests" or "lint fails"."""

from __future__ import annotations

import pytest

from lamar.tasks import task_class


@pytest.mark.parametrize(("prompt", "task"), [
    # A test named by its function or file was no test word: `test_rounding` is one word to \b.
    ("test_rounding fails: to_cents('0.125') gives 12 but the invoice says 13", "tests_fail"),
    ("tests/test_money.py::test_half is broken since the merge", "tests_fail"),
    ("cart_test.go fails on CI", "tests_fail"),
    ("the cart.spec.ts errors out", "tests_fail"),
    # A linter that reports or flags a code said nothing a failure word says.
    ("ruff check reports E501 line too long in book.py", "lint_fails"),
    ("ruff flags SIM108 in cart.py", "lint_fails"),
    ("eslint reports no-unused-vars in app.js", "lint_fails"),
    # Still what they were.
    ("add test_rounding for half cents", "feature"),
    ("rename test_cart to test_checkout", "refactor"),
    ("add ruff to the pre-commit config", "feature"),
    # "report" and "flag" as nouns are no lint report.
    ("enable mypy and add a report to CI", "feature"),
    ("set up black with a --check flag", "other"),
])
def test_a_named_test_or_a_lint_report_names_the_failing_task(prompt: str, task: str) -> None:
    assert task_class(prompt) == task
