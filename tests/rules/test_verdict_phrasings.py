"""A rule that names an act by its -ing form and gives a verdict on it ("Disabling tests requires sign-off") is
imported and read as a prohibition, and a rule that adds when or where it holds is no near-copy of one without."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar
from lamar.rules import import_rules
from lamar.rules.parse import DESCRIBES
from lamar.sleep.warned import lesson_warning
from tests.tools import load_tool


def _import(tmp_path: Path, *lines: str) -> tuple[list[str], list[str]]:
    (tmp_path / "CLAUDE.md").write_text("## Git\n\n" + "".join(f"- {line}\n" for line in lines))
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop")
    return [e.render() for e in plan.lessons], [why for _, why in plan.skipped]


@pytest.mark.parametrize(("line", "shown"), [
    ("Disabling tests requires sign-off", "disabling tests requires sign-off"),
    ("Adding a dependency needs a lead's approval", "adding a dependency needs a lead's approval"),
    ("Touching the migrations folder requires a DBA review", "touching the migrations folder requires a DBA review"),
    ("Force-pushing to main is forbidden", "force-pushing to main is forbidden"),
    ("Committing directly to `release/*` is not okay", "committing directly to `release/*` is not okay"),
    ("Amending pushed commits is frowned upon", "amending pushed commits is frowned upon"),
    ("Skipping the pre-commit hooks is a no-go", "skipping the pre-commit hooks is a no-go"),
    ("Rewriting shared history is strongly discouraged", "Rewriting shared history is strongly discouraged"),
    ("Using `time.sleep` in tests is banned", "using `time.sleep` in tests is banned"),
    ("Ping #shop-dev when the deploy fails", "ping #shop-dev when the deploy fails"),
    ("Contact the on-call engineer for production access", "contact the on-call engineer for production access"),
])
def test_a_verdict_on_an_act_is_a_rule_that_is_not_warned_as_harm(tmp_path: Path, line: str, shown: str) -> None:
    lessons, _ = _import(tmp_path, line)
    assert lessons == [f"When working on shop (Git), {shown}."]
    assert lesson_warning("working on shop", line, "") == ""


@pytest.mark.parametrize("line", [
    "Commit messages follow Conventional Commits",
    "Test files live in `tests/`",
    "Squash merges are the default on GitHub",
    "Running the whole e2e suite takes about twenty minutes",
])
def test_a_statement_still_describes(tmp_path: Path, line: str) -> None:
    lessons, skipped = _import(tmp_path, line)
    assert (lessons, skipped) == ([], [DESCRIBES])


def test_a_rule_that_adds_when_it_holds_is_no_near_copy(tmp_path: Path) -> None:
    lessons, skipped = _import(tmp_path, "Don't push to main", "DON'T push to main on Fridays",
                               "Don't force push to main during a release freeze", "NEVER push to main!")
    assert lessons == ["When working on shop (Git), don't push to main.",
                       "When working on shop (Git), DON'T push to main on Fridays.",
                       "When working on shop (Git), don't force push to main during a release freeze."]
    assert skipped == ["a near-copy of CLAUDE.md:3"]  # "Never" forbids as "Don't" does


def test_a_rule_held_without_when_it_holds_is_no_copy_of_one_with(tmp_path: Path) -> None:
    lam = Lamar(":memory:")
    (tmp_path / "CLAUDE.md").write_text("- Don't push to main\n")
    import_rules(lam, tmp_path, project="shop", apply=True)
    (tmp_path / "CLAUDE.md").write_text("- Don't push to main\n- Don't push to main on Fridays\n")
    plan = import_rules(lam, tmp_path, project="shop")
    assert [e.action for e in plan.lessons] == ["Don't push to main on Fridays"]


def test_the_labelled_rules_lines_read_as_labelled() -> None:
    read = load_tool("rule_lines").outcomes()
    assert len(read) >= 60
    assert [(n, text, label, got) for n, text, label, got, _ in read
            if got != {"rule": "imported", "prose": "left out", "repeat": "repeat"}[label]] == []


@pytest.mark.parametrize(("line", "shown"), [
    ("Squashing commits is fine", "squashing commits is fine"),
    ("Rebasing your own branch is perfectly okay", "rebasing your own branch is perfectly okay"),
    ("Using `print` in scripts/ is allowed", "using `print` in scripts/ is allowed"),
    ("Creating new top-level packages requires an ADR", "creating new top-level packages requires an ADR"),
    ("Changing the public API needs an RFC first", "changing the public API needs an RFC first"),
    ("The `any` type is banned", "the `any` type is banned"),
    ("The use of `eval` is prohibited", "the use of `eval` is prohibited"),
    ("The main branch is protected; force pushes are not allowed", "the main branch is protected; force pushes "
                                                                    + "are not allowed"),
])
def test_a_permission_or_a_gate_on_an_act_is_a_rule(tmp_path: Path, line: str, shown: str) -> None:
    lessons, _ = _import(tmp_path, line)
    assert lessons == [f"When working on shop (Git), {shown}."]


@pytest.mark.parametrize("line", [
    "The API is banned in some regions",
    "Our old vendor is not allowed to bid since 2023",
    "The build is fine on Linux",
    "Everything is okay on staging",
])
def test_a_verdict_on_a_thing_the_project_does_not_do_describes(tmp_path: Path, line: str) -> None:
    lessons, skipped = _import(tmp_path, line)
    assert (lessons, skipped) == ([], [DESCRIBES])
