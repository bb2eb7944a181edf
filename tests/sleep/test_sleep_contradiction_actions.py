"""A contradiction names lessons whose actions conflict, not every lesson of a shared project context."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lamar import Experience, Lamar, Scope
from lamar.rules import import_rules

SHOP_RULES = """# Shop

## Rules
- Always run `pytest -x` before committing.
- Use ruff for formatting, not black.
- Never edit migrations by hand.
- Keep functions under 40 lines.
- Write docstrings in Google style.
- Prefer dataclasses over dicts for records.
- Log with the `logging` module, never print.
- Pin every dependency in requirements.txt.
- Always squash merges into main.
- Name branches after their ticket.
- Keep secrets out of the repository.
- Use type hints on every public function.
- Run `mypy --strict` in CI.
- Put fixtures in conftest.py.
"""


def _shop(tmp_path: Path) -> Lamar:
    """The walk-through's repository: a git checkout named shop whose CLAUDE.md is imported whole."""
    repo = tmp_path / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "CLAUDE.md").write_text(SHOP_RULES)
    lam = Lamar(":memory:", seed=1)
    plan = import_rules(lam, repo, apply=True)
    assert len(plan.lessons) == 14 and {e.precondition for e in plan.lessons} == {"working on shop"}, plan.lessons
    return lam


def test_a_lesson_added_beside_imported_rules_is_flagged_only_against_the_rule_it_contradicts(tmp_path) -> None:
    # The walk-through added one lesson by hand ("working on shop", as install advises) and sleep proposed
    # a contradiction of it and every rule of the file: 14 rules about other things, one about formatting.
    lam = _shop(tmp_path)
    ruff = next(e.id for e in lam.experiences() if "ruff" in e.action)
    mine = lam.add(Experience("working on shop", "format with black", scope=Scope(project="shop")))
    (flagged,) = lam.sleep().of_kind("contradiction")
    assert list(flagged.experience_ids) == [mine, ruff], flagged.reason
    assert flagged.reason.startswith("same situation, conflicting actions: "), flagged.reason


def test_a_lesson_that_conflicts_with_no_rule_is_no_contradiction(tmp_path) -> None:
    lam = _shop(tmp_path)
    lam.add(Experience("working on shop", "rebuild the search index after changing a product model",
                       scope=Scope(project="shop")))
    assert lam.sleep().of_kind("contradiction") == []


def test_opposite_instructions_in_one_project_context_are_a_contradiction() -> None:
    lam = Lamar(":memory:", seed=1)
    shop = Scope(project="shop")
    squash = lam.add(Experience("working on shop", "always squash merges", scope=shop))
    never = lam.add(Experience("working on shop", "never squash merges", scope=shop))
    tabs = lam.add(Experience("working on shop", "use tabs", scope=shop))
    spaces = lam.add(Experience("working on shop", "use spaces", scope=shop))
    lam.add(Experience("working on shop", "name branches after their ticket", scope=shop))
    flagged = [set(p.experience_ids) for p in lam.sleep().of_kind("contradiction")]
    assert flagged == [{squash, never}, {tabs, spaces}], flagged


def test_lessons_whose_precondition_only_restates_their_scope_are_not_rivals() -> None:
    lam = Lamar(":memory:", seed=1)
    shop = Scope(project="shop")
    lam.add(Experience("in the shop repo", "name branches after their ticket", scope=shop))
    lam.add(Experience("in the shop repo", "keep secrets out of the repository", scope=shop))
    assert lam.sleep().of_kind("contradiction") == []


def test_two_choices_worded_apart_or_sharing_no_word_are_a_conflict() -> None:
    from lamar.sleep.conflict import actions_conflict

    assert actions_conflict("use tabs", "indent with four spaces")
    assert actions_conflict("indent with tabs", "indent with four spaces")
    assert actions_conflict("squash commits", "keep every commit")
    assert actions_conflict("squash commits before merging", "keep every commit of a branch when merging")
    # Tabs where a file needs them and spaces elsewhere are two rules, not one choice.
    assert not actions_conflict("use tabs in Makefiles", "indent Python with four spaces")


def test_two_tools_run_at_one_step_are_no_conflict() -> None:
    from lamar.sleep.conflict import actions_conflict

    assert not actions_conflict("run pytest before committing", "run mypy before committing")
    assert not actions_conflict("run pytest", "run mypy before committing")
    # Two choices for how one tool runs still are.
    assert actions_conflict("run the tests in parallel", "run the tests one by one")
    assert actions_conflict("use pnpm", "use npm")
