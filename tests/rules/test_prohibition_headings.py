"""Rules listed under a heading, a lead-in or a parent item that forbids them ("## Never" then "- push to
main") become lessons that forbid them, not lessons that tell the agent to do them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar
from lamar.rules import import_rules
from lamar.safety.instructs import instructed_harm

RULES = """# Shop

## Never

- push to main
- Force push to protected branches
- Exposing `seen_users` through any endpoint
- Never fix what you find: report it
- When the deploy is red, run `git push --force origin main`

## Testing

- Run `make test` before every commit

Never do the following:
- merge without review

- **Don'ts** ❌:
  - skip the hooks
"""


def _lessons(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "CLAUDE.md").write_text(text)
    return [e.render() for e in import_rules(Lamar(":memory:"), tmp_path, project="shop").lessons]


def test_each_rule_under_a_prohibition_carries_it(tmp_path: Path) -> None:
    assert _lessons(tmp_path, RULES) == [
        "When working on shop, never: push to main.",
        "When working on shop, never: force push to protected branches.",  # its verb, as after "never "
        "When working on shop, never: exposing `seen_users` through any endpoint.",
        "When working on shop, never fix what you find: report it.",  # it says so itself
        "When the deploy is red, never: run `git push --force origin main`.",
        "When working on shop (Testing), run `make test` before every commit.",
        "When working on shop (Testing), never do the following: merge without review.",
        "When working on shop (Testing), Don'ts: skip the hooks.",  # as its word is written
    ]


def test_the_same_words_under_always_and_never_are_two_lessons(tmp_path: Path) -> None:
    both = _lessons(tmp_path, "## Always\n- push to main\n\n## Never\n- push to main\n")
    assert both == ["When working on shop (Always), push to main.", "When working on shop, never: push to main."]


@pytest.mark.parametrize("label", ["## Never", "## Don'ts ❌", "Never do the following:", "**Things to avoid**"])
def test_the_imported_prohibition_is_not_warned_as_harm(tmp_path: Path, label: str) -> None:
    (tmp_path / "CLAUDE.md").write_text(f"{label}\n- git push --force origin main\n")
    (lesson,) = import_rules(Lamar(":memory:"), tmp_path, project="shop").lessons
    assert instructed_harm(lesson.action) is None, lesson.action


def test_a_line_in_bold_that_forbids_heads_its_list_and_is_no_rule(tmp_path: Path) -> None:
    assert _lessons(tmp_path, "**Never**\n- push to main\n\n**Don'ts:**\n- skip the hooks\n") == [
        "When working on shop, never: push to main.", "When working on shop, Don'ts: skip the hooks."]


def test_a_paragraph_under_a_prohibition_is_read_as_a_list_item_is(tmp_path: Path) -> None:
    text = ("## Never\n\nPush to main.\n\nForce push to protected branches\nor rewrite their history.\n\n"
            "Exposing `seen_users` through any endpoint.\n\nNever fix what you find: report it.\n")
    assert _lessons(tmp_path, text) == [
        "When working on shop, never: push to main.",
        "When working on shop, never: force push to protected branches or rewrite their history.",
        "When working on shop, never: exposing `seen_users` through any endpoint.",
        "When working on shop, never fix what you find: report it.",
    ]
    (lesson, *_) = import_rules(Lamar(":memory:"), tmp_path, project="shop").lessons
    assert lesson.scope == {"project": "shop"} and lesson.precondition == "working on shop"


def test_a_paragraph_or_item_that_says_what_to_do_instead_keeps_the_heading_as_context(tmp_path: Path) -> None:
    # What to do instead opens with its own word (always, only, instead, prefer): "never: always ..." says nothing.
    text = "## Never\n\nAlways open a PR instead.\n\n- Only push to main through a PR\n- push to main\n"
    assert _lessons(tmp_path, text) == [
        "When working on shop (Never), always open a PR instead.",
        "When working on shop (Never), only push to main through a PR.",
        "When working on shop, never: push to main.",
    ]


def test_a_paragraph_that_describes_is_no_prohibition(tmp_path: Path) -> None:
    # A sentence with a subject of its own says why the list is there; it is no rule, as elsewhere.
    text = "## Never\n\nThese break the build for everyone.\n\nBreaking them means a revert.\n\n- push to main\n"
    (tmp_path / "CLAUDE.md").write_text(text)
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop")
    assert [e.render() for e in plan.lessons] == ["When working on shop, never: push to main."]
    assert [rule.text for rule, _ in plan.skipped] == ["These break the build for everyone.",
                                                      "Breaking them means a revert."]


def test_a_command_in_a_paragraph_under_a_prohibition_is_not_warned_as_harm() -> None:
    assert instructed_harm("## Never\n\nRun git push --force origin main\nafter a fix.\n") is None
    assert instructed_harm("## Never\n\nInstead, git push --force origin main.\n") is not None


def test_a_model_restating_prose_is_told_the_heading_that_forbids_it(tmp_path: Path) -> None:
    import json

    from lamar.models import ScriptedModel

    (tmp_path / "CLAUDE.md").write_text("## Never\n\nPushing directly to main, because CI will not run.\n")
    model = ScriptedModel([json.dumps([{"block": 1, "rule": "Never push directly to main"}])], model="m")
    (lesson,) = import_rules(Lamar(":memory:"), tmp_path, project="shop", model=model).lessons
    assert "[1] (under the heading 'Never') Pushing directly to main" in model.prompts[0]
    assert lesson.render() == "When working on shop, never push directly to main."


def test_a_rule_held_without_its_prohibition_is_not_doubled_and_the_edit_is_named(tmp_path: Path) -> None:
    import hashlib
    import json

    from lamar import Experience, Status

    # As an import stored '- push to main' under '## Never' before rules carried the heading: by its words alone.
    key = json.dumps(["push to main", [["project", "shop"]]])
    held = Experience("working on shop (Never)", "push to main", scope={"project": "shop"}, status=Status.CANDIDATE,
                      id="exp_" + hashlib.sha256(key.encode()).hexdigest()[:16])
    lam = Lamar(":memory:")
    lam.add(held)
    (tmp_path / "CLAUDE.md").write_text("## Always\n- run the tests\n\n## Never\n- push to main\n")
    plan = import_rules(lam, tmp_path, project="shop")
    assert [e.action for e in plan.lessons] == ["run the tests"]
    assert [why for _, why in plan.skipped] == [
        (f"already held as {held.id} (candidate); it reads 'push to main', without the 'Never' its list is under "
         f"(`lamar edit {held.id} --action 'Never: push to main'` gives it)")]
    lam.edit(held.id, action="Never: push to main")
    assert [why for _, why in import_rules(lam, tmp_path, project="shop").skipped] == [
        f"already held as {held.id} (candidate)"]
    # Under '## Always' the same words are the held lesson itself, so the one under '## Never' is not taken for it.
    (tmp_path / "CLAUDE.md").write_text("## Always\n- push to main\n\n## Never\n- push to main\n")
    lam = Lamar(":memory:")
    lam.add(held)
    assert [e.render() for e in import_rules(lam, tmp_path, project="shop").lessons] == [
        "When working on shop, never: push to main."]


def test_a_lead_in_that_forbids_unless_approved_heads_its_list(tmp_path: Path) -> None:
    # "Without explicit approval" or "unless asked" after the words that forbid keeps them a prohibition.
    text = ("NEVER do these without explicit approval:\n- `rm -rf` or recursive deletes\n- `DROP TABLE users`\n\n"
            "## Never unless the user asks\n- force push\n")
    assert _lessons(tmp_path, text) == [
        "When working on shop, NEVER do these without explicit approval: `rm -rf` or recursive deletes.",
        "When working on shop, NEVER do these without explicit approval: `DROP TABLE users`.",
        "When working on shop, never unless the user asks: force push.",
    ]
    assert instructed_harm(text) is None
