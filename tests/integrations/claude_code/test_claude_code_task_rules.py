"""A config's `[[rules.task]]` through the real hook: checked before the built-in task rules, so the first of them
that matches names the task, on a custom command's text as on a typed prompt; `status` says which rule named it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Hook, payload, project_config
from .test_claude_code_install import lamar

_MIGRATION = "[[rules.task]]\nname = 'migration'\npattern = '(?i)\\bmigrat'\n"


def _task(hook: Hook, repo: Path, prompt: str, session: str = "s1") -> str:
    done = hook(payload("UserPromptSubmit", session, repo, prompt=prompt))
    assert done.returncode == 0, done.stderr
    state = hook.state()
    task: str = state["episodes"][state["sessions"][session]["episode"]]["context"]["task"]
    return task


def _user_config(hook: Hook, text: str) -> None:
    (Path(hook.env["HOME"]) / ".lamar" / "claude-code.toml").write_text("[hook]\nbudget_seconds = 60\n" + text)


def test_a_users_rule_wins_over_a_more_precise_built_in_one(hook: Hook, repo: Path) -> None:
    _user_config(hook, _MIGRATION)
    assert _task(hook, repo, "the migration tests fail") == "migration"  # not tests_fail: the user's rule first
    assert _task(hook, repo, "the cart tests fail") == "tests_fail"  # no rule of theirs matches: the built-in ones
    # The project's rules come before the user's.
    project_config(repo, "[[rules.task]]\nname = 'schema'\npattern = '(?i)\\bmigration tests\\b'\n", hook.env["HOME"])
    assert _task(hook, repo, "the migration tests fail") == "schema"
    assert _task(hook, repo, "write the migration") == "migration"


def test_a_users_rule_reads_a_custom_commands_text_as_the_built_in_ones_do(hook: Hook, repo: Path) -> None:
    # Claude Code hands the hook `/fix cart`; the command's file says what is asked, and every task rule reads it.
    _user_config(hook, _MIGRATION)
    commands = repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix.md").write_text("Write the database migration for $ARGUMENTS.\n")
    assert _task(hook, repo, "/fix cart") == "migration"
    (commands / "fix.md").write_text("Write the checkout page for $ARGUMENTS.\n")
    assert _task(hook, repo, "/fix migrations") == "migration"  # the arguments are in the command's text


def test_status_says_which_rule_named_the_last_prompts_task(hook: Hook, repo: Path) -> None:
    _user_config(hook, _MIGRATION)
    _task(hook, repo, "the migration tests fail")
    said = lamar(hook.env, repo, "status", "--store", str(hook.store)).stdout
    assert "\n  task: migration, by a [[rules.task]] rule of your config\n" in said, said
    _task(hook, repo, "the cart tests fail")
    said = lamar(hook.env, repo, "status", "--store", str(hook.store)).stdout
    assert "\n  task: tests_fail, by the built-in rules\n" in said, said


def test_lamar_mcp_reads_a_custom_command_with_the_users_rules_as_the_hook_does(
        hook: Hook, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lamar_mcp.context import ContextReader

    _user_config(hook, _MIGRATION)
    monkeypatch.setenv("HOME", hook.env["HOME"])
    commands = repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix.md").write_text("Write the database migration for $ARGUMENTS.\n")
    assert ContextReader(str(repo)).from_text("/fix cart")["task"] == _task(hook, repo, "/fix cart") == "migration"
