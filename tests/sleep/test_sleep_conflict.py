"""Which actions conflict: opposite instructions about one thing, or two choices for one thing."""

from __future__ import annotations

import pytest

from lamar.sleep.conflict import actions_conflict, standing


@pytest.mark.parametrize(("a", "b"), [
    ("always squash merges", "never squash merges"),
    ("use tabs", "use spaces"),
    ("format with black", "Use ruff for formatting, not black"),
    ("pin every dependency to an exact version", "never pin dependencies"),
    ("write commit messages in the imperative", "write commit messages in the past tense"),
    ("never use tabs", "use tabs"),
])
def test_conflicting_actions(a: str, b: str) -> None:
    assert actions_conflict(a, b) and actions_conflict(b, a)


@pytest.mark.parametrize(("a", "b"), [
    # ".env" is a file name, not the end of a clause that leaves "commit" asked for.
    ("never commit .env files", "commit the lockfile with the change"),
    # Both say to debug with something else than print: "use" is how, not what.
    ("don't use print for debugging", "use the debugger for debugging"),
    ("Never edit migrations by hand", "run the migrations before the tests"),
    ("Use ruff for formatting, not black", "use ruff for linting"),
    ("Keep functions under 40 lines", "Keep secrets out of the repository"),
])
def test_actions_about_other_things_do_not_conflict(a: str, b: str) -> None:
    assert not actions_conflict(a, b) and not actions_conflict(b, a)


def test_a_standing_context_names_where_the_work_is() -> None:
    shop = {"project": "shop"}
    assert standing("working on shop", shop) and standing("When working on shop (Testing › Coverage)", shop)
    assert not standing("the deploy fails", shop) and not standing("a test is flaky", {"task": "flaky"})


def test_a_precondition_that_only_restates_the_scope_is_a_standing_context() -> None:
    # A lesson written "in the shop repo" holds wherever its scope does, as "working on shop" does.
    assert standing("in the shop repo", {"project": "shop"}) and standing("any Swift code", {"language": "swift"})
    assert standing("always", {}) and standing("in any project", {})  # names no situation at all
    assert not standing("shop checkout fails", {"project": "shop"})
    assert not standing("the tests fail", {"task": "tests_fail"})
