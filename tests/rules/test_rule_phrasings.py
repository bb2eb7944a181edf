"""Ways rules files phrase a prohibition or a permission without "never", "must" or an opening verb: each is
imported as a rule, while the statements that only look like them are still skipped as describing."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Lamar
from lamar.rules import import_rules
from lamar.rules.parse import DESCRIBES
from lamar.safety.instructs import instructed_harm


def _read(tmp_path: Path, line: str) -> str:
    (tmp_path / "CLAUDE.md").write_text(f"## Git\n\n- {line}\n")
    plan = import_rules(Lamar(":memory:"), tmp_path, project="shop")
    return plan.lessons[0].render() if plan.lessons else plan.skipped[0][1]


@pytest.mark.parametrize("line", [
    # A prohibition said as a verdict, or "under no circumstances" before the verb.
    "Under no circumstances push to main",
    "Pushing to main is prohibited",
    "`git reset --hard` is off-limits",
    "Committing secrets is not allowed",
    "Destructive commands (`rm -rf`, `git clean -fdx`) need confirmation",
    "Schema changes require explicit approval",
    # "No" and the act it forbids, with no verb of its own.
    "No amend unless asked.",
    "No `git push --force` to protected branches",
    "No amending commits after they are pushed",
    "No emojis in commit messages",
    # A permission: what the agent may do.
    "You may force push to your own branches",
    "Feel free to rebase and force push your PR branch",
    "It's okay to stage files with `git add`",
    # A verb that is also a noun, then where it goes.
    "Rebase onto main and force push when the PR branch falls behind",
])
def test_a_prohibition_or_permission_is_a_rule(tmp_path: Path, line: str) -> None:
    read = _read(tmp_path, line)
    assert read.startswith("When "), read


@pytest.mark.parametrize("line", [
    "No tests exist for the legacy importer",
    "No one reads the changelog",
    # A state of the project for now: nothing to forbid.
    "No tests yet.",
    "No CI on forks for now",
    "No docs for the CLI so far",
    "No release notes at the moment",
    "We no longer use git-flow",
    "The release branch is protected by the hosting service",
])
def test_a_statement_that_only_looks_like_one_describes(tmp_path: Path, line: str) -> None:
    assert _read(tmp_path, line) == DESCRIBES


def test_the_rules_read_so_are_not_warned_as_harm(tmp_path: Path) -> None:
    # The permissions name the agent's own branch; the prohibitions forbid.
    for line in ("You may force push to your own branches", "Feel free to rebase and force push your PR branch",
                 "No `git push --force` to protected branches", "Under no circumstances git push --force origin main"):
        assert instructed_harm(line) is None, line


def test_ok_to_opening_a_rule_permits(tmp_path: Path) -> None:
    assert _read(tmp_path, "Ok to force push your own branches") == (
        "When working on shop (Git), Ok to force push your own branches.")
