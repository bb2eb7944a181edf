"""A rule's own condition narrows its scope where it names a failing task or an error, as a prompt's words do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lamar import Experience, Lamar, Scope, Status
from lamar.rules import import_rules

RULES = """# Shop

- When a test fails, run it alone with `pytest -x` first.
- When the build fails after a dependency bump, delete .venv and reinstall.
- If ruff complains, run `ruff check --fix` before anything else.
- When you see a KeyError, print the dict's keys first.
- When working on the API, keep every endpoint backwards compatible.
- When refactoring, keep the behaviour the tests pin.
- Use Decimal for money.
"""


def _imported(tmp_path: Path, lam: Lamar) -> dict[str, dict[str, str]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "CLAUDE.md").write_text(RULES)
    plan = import_rules(lam, tmp_path, project="shop", apply=True)
    return {exp.precondition: dict(exp.scope) for exp in plan.lessons}


def test_a_condition_that_names_a_failing_task_or_an_error_scopes_the_rule_to_it(tmp_path: Path) -> None:
    assert _imported(tmp_path, Lamar(":memory:")) == {
        "a test fails": {"project": "shop", "task": "tests_fail"},
        "the build fails after a dependency bump": {"project": "shop", "task": "build_fails"},
        "ruff complains": {"project": "shop", "task": "lint_fails"},
        "you see a KeyError": {"project": "shop", "error_class": "KeyError"},
        # What the hooks cannot tell from a prompt stays a condition in words, over the whole project.
        "working on the API": {"project": "shop"},
        "refactoring": {"project": "shop"},
        "working on shop": {"project": "shop"},
    }


def test_each_rule_is_recalled_where_its_condition_holds(tmp_path: Path) -> None:
    lam = Lamar(":memory:", k=10, holdout=0.0)
    _imported(tmp_path, lam)

    def recalled(**context: str) -> set[str]:
        return {e.action for e in lam.recall({"project": "shop", **context}).experiences}

    tests = recalled(task="tests_fail", error_class="KeyError")
    assert "run it alone with `pytest -x` first" in tests and "print the dict's keys first" in tests
    assert "delete .venv and reinstall" not in tests
    question = recalled(task="question")
    assert question == {"keep every endpoint backwards compatible", "keep the behaviour the tests pin",
                        "Use Decimal for money"}
    assert "run `ruff check --fix` before anything else" in recalled(task="lint_fails")


def test_a_rule_imported_before_conditions_narrowed_is_held_with_the_scope_it_has(tmp_path: Path) -> None:
    lam = Lamar(":memory:")
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text("- When a test fails, run it alone with `pytest -x` first.\n")
    [planned] = import_rules(lam, tmp_path, project="shop").lessons
    # The same lesson as an earlier import stored it: the same id, scoped to the project alone.
    lam.add(Experience(planned.precondition, planned.action, scope=Scope(project="shop"),
                       status=Status.CANDIDATE, id=planned.id, provenance=dict(planned.provenance)))
    plan = import_rules(lam, tmp_path, project="shop")
    assert plan.lessons == []
    [(_, why)] = plan.skipped
    assert why.startswith(f"already held as {planned.id} (candidate); it keeps its scope project=shop, "
                          "not the rule's project=shop, task=tests_fail")
    assert f"lamar edit {planned.id} --scope project=shop task=tests_fail" in why


def test_the_cli_says_where_a_narrowed_rule_is_recalled(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text(RULES)
    shown = subprocess.run([sys.executable, "-m", "lamar.cli", "import-rules", "--project", "shop", "--store",
                            str(tmp_path / "store.db")], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                           check=False)
    assert shown.returncode == 0, shown.stderr
    lines = {line.split("  ")[-1]: line for line in shown.stdout.splitlines() if "would add" in line}
    assert lines["When a test fails, run it alone with `pytest -x` first. (recalled only where task=tests_fail)"]
    assert lines["When you see a KeyError, print the dict's keys first. (recalled only where error_class=KeyError)"]
    assert "recalled only" not in lines["When working on the API, keep every endpoint backwards compatible."]


def test_a_condition_naming_two_errors_is_not_narrowed_to_the_first() -> None:
    from lamar.rules.importing import condition_scope

    # A prompt names one error class, the first it holds: either error's prompt must still recall the rule.
    assert condition_scope("a test fails with a TypeError or a KeyError") == {"task": "tests_fail"}
    assert condition_scope("you see a KeyError") == {"error_class": "KeyError"}


def test_the_edit_the_note_names_types_a_scope_value_with_spaces_quoted(tmp_path: Path) -> None:
    lam = Lamar(":memory:")
    (tmp_path / ".git").mkdir()
    (tmp_path / "CLAUDE.md").write_text("- When a job stops with exit code 1, rerun it once.\n")
    [planned] = import_rules(lam, tmp_path, project="shop").lessons
    assert dict(planned.scope) == {"project": "shop", "error_class": "exit code 1"}
    lam.add(Experience(planned.precondition, planned.action, scope=Scope(project="shop"), id=planned.id))
    [(_, why)] = import_rules(lam, tmp_path, project="shop").skipped
    assert f"lamar edit {planned.id} --scope 'error_class=exit code 1' project=shop`" in why
