"""A rule the file itself takes back (struck through, marked "(no longer)", or followed by "Never mind the rule
above") is not imported as a live rule; the import lists it as left out with why."""

from __future__ import annotations

from pathlib import Path

from lamar import Lamar
from lamar.rules import import_rules

RULES = """# Shop

## Git

- ~~never push to main~~
- Run ~~npm~~ pnpm install
- (no longer) run the migrations by hand
- **[deprecated]** Use Python 3.9 for scripts
- Run `make legacy` before a release (no longer needed)
- Always squash before merging
- Never mind the rule above
- Never call `foo()` (deprecated)
- Run `git diff ~~a~~` to compare
"""


def _plan(tmp_path: Path, text: str = RULES):  # type: ignore[no-untyped-def]
    (tmp_path / "CLAUDE.md").write_text(text)
    return import_rules(Lamar(":memory:"), tmp_path, project="shop")


def test_a_rule_taken_back_is_not_imported_and_the_rest_are(tmp_path: Path) -> None:
    assert [e.render() for e in _plan(tmp_path).lessons] == [
        "When working on shop (Git), run pnpm install.",  # the struck word is the one taken back
        "When working on shop (Git), never call `foo()` (deprecated).",  # what is deprecated is foo()
        "When working on shop (Git), run `git diff ~~a~~` to compare.",  # code is as written
    ]


def test_each_rule_taken_back_is_listed_with_why(tmp_path: Path) -> None:
    assert [(rule.line, why) for rule, why in _plan(tmp_path).skipped] == [
        (5, "struck through: the file takes it back"),
        (7, "marked '(no longer)': the file takes it back"),
        (8, "marked '[deprecated]': the file takes it back"),
        (9, "marked '(no longer needed)': the file takes it back"),
        (10, "taken back by line 11 ('Never mind the rule above')"),
        (11, "takes back the rule above, line 10"),
    ]


def test_a_take_back_with_nothing_above_it_in_its_list_takes_nothing_back(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "## Git\n- Never mind the rule above\n\n## Testing\n- Run `make test`\n- Scratch that\n")
    assert [e.action for e in plan.lessons] == []
    assert [(rule.line, why) for rule, why in plan.skipped] == [
        (2, "takes back the rule above, which this list does not hold"),
        (5, "taken back by line 6 ('Scratch that')"),
        (6, "takes back the rule above, line 5"),
    ]


def test_a_model_is_not_shown_a_rule_taken_back(tmp_path: Path) -> None:
    import json

    from lamar.models import ScriptedModel

    (tmp_path / "CLAUDE.md").write_text("## Git\n- ~~never push to main~~\n\nThe deploy script lives in ops/.\n")
    model = ScriptedModel([json.dumps([])], model="m")
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop", model=model)
    assert "push to main" not in model.prompts[0] and "The deploy script" in model.prompts[0]
    assert [why for _, why in plan.skipped][-1] == "struck through: the file takes it back"


def test_no_longer_before_a_verb_forbids_it_from_now_on(tmp_path: Path) -> None:
    # Without brackets "No longer" is no mark on a rule the file takes back: it tells the agent to stop.
    plan = _plan(tmp_path, "## Git\n- No longer commit lockfiles\n- No longer vendor dependencies\n"
                           "- No longer supported on Windows\n")
    assert [e.render() for e in plan.lessons] == [
        "When working on shop (Git), no longer commit lockfiles.",
        "When working on shop (Git), no longer vendor dependencies.",
    ]
    assert [(rule.line, why) for rule, why in plan.skipped] == [(4, "describes rather than directs")]


def test_no_longer_before_a_command_is_no_instruction_to_run_it() -> None:
    from lamar.safety.instructs import instructed_harm

    assert instructed_harm("No longer run git push --force origin main") is None
    assert instructed_harm("No longer git push --force origin main after a rebase") is None


def test_a_rule_marked_removed_or_not_anymore_is_taken_back(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "## Git\n- (Removed) Run migrations by hand\n- [REMOVED] Use Python 3.9 for scripts\n"
                           "- Run the seed script before tests (not anymore)\n- Never call `load()` (removed)\n")
    assert [e.render() for e in plan.lessons] == ["When working on shop (Git), never call `load()` (removed)."]
    assert [(rule.line, why) for rule, why in plan.skipped] == [
        (2, "marked '(Removed)': the file takes it back"),
        (3, "marked '[REMOVED]': the file takes it back"),
        (4, "marked '(not anymore)': the file takes it back"),
    ]
