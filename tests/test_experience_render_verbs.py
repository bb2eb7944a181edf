"""A rule's own verb reads in lower case after "When X, " whatever the verb; a name at its start keeps its capital."""

from __future__ import annotations

import pytest

from lamar import Experience

# Rule lines as people write them in CLAUDE.md and AGENTS.md, their verb outside any list of verbs:
# what tells the verb is the word after it (an article, a possessive, an object pronoun or a particle).
VERBS_LOWERED = [
    ("Roll back first, then investigate", "roll back first, then investigate"),
    ("Bisect the commits since the last green build", "bisect the commits since the last green build"),
    ("Squash the branch before merging", "squash the branch before merging"),
    ("Vacuum the table, then retry the import", "vacuum the table, then retry the import"),
    ("Tag the release after the changelog is merged", "tag the release after the changelog is merged"),
    ("Stub it out in unit tests", "stub it out in unit tests"),
    ("Mock the clock instead of sleeping", "mock the clock instead of sleeping"),
    ("Back up the database first", "back up the database first"),
    ("Clean up the build folder", "clean up the build folder"),
    ("Kill the stale process on port 3000", "kill the stale process on port 3000"),
    ("Tear down the containers and start fresh", "tear down the containers and start fresh"),
    ("Invalidate the CDN cache", "invalidate the CDN cache"),
    ("Profile the slow query before adding an index", "profile the slow query before adding an index"),
    ("Rotate the token and redeploy", "rotate the token and redeploy"),
    ("Roll out the change to one region first", "roll out the change to one region first"),
    ("Scale down the workers", "scale down the workers"),
    ("Shut down the dev server first", "shut down the dev server first"),
    ("Warm up the cache before measuring", "warm up the cache before measuring"),
    ("Flush the Redis cache", "flush the Redis cache"),
    ("Downgrade the Node version to 18", "downgrade the Node version to 18"),
    ("Ping me before touching the billing code", "ping me before touching the billing code"),
    ("Prune the Docker images", "prune the Docker images"),
    ("Restore the snapshot from S3", "restore the snapshot from S3"),
    ("Seed the database with fixtures", "seed the database with fixtures"),
    ("Drain the node before upgrading Kubernetes", "drain the node before upgrading Kubernetes"),
    ("Spin up a fresh container", "spin up a fresh container"),
    ("Archive your old branches", "archive your old branches"),
    ("Escape them before they reach the shell", "escape them before they reach the shell"),
    ("Never Roll back a migration by hand", "never roll back a migration by hand"),
    ("Run the linter; Squash the commits", "run the linter; squash the commits"),
    # a verb with a bare noun after it, as an agent proposes a lesson through MCP
    ("Freeze time with freezegun", "freeze time with freezegun"),
    ("Downgrade Node to 18", "downgrade Node to 18"),
    ("Batch writes to the events table", "batch writes to the events table"),
    ("Deploy behind a feature flag", "deploy behind a feature flag"),
    # verbs of the fixed list, with a name after them
    ("Run Postgres locally with Docker", "run Postgres locally with Docker"),
    ("Use GitHub Actions for CI", "use GitHub Actions for CI"),
]

# Rule lines that open with a name: a subject or a terse preference, never an instruction to lower.
NAMES_KEPT = [
    "Postgres needs a VACUUM after bulk deletes",
    "Python 3.12 breaks it",
    "Docker Compose caches the old image: rebuild with --no-cache",
    "GitHub Actions caches node_modules by key",
    "Xcode keeps DerivedData around: delete it",
    "Redis over Memcached for new services",
    "Python over Bash for scripts",
    "Postgres for analytics, SQLite for tests",
    "Kubernetes in production, Compose locally",
    "Terraform plan before apply",
    "Homebrew installs to /opt/homebrew on Apple Silicon",
    "Jest runs the tests in parallel",
    "Vite needs the env vars prefixed with VITE_",
    "Rust in hot paths only",
    "Claude should ask before force-pushing",
    "Node 20 only",
    "Python that ships with macOS is too old: install one with pyenv",
    "Sentry, the error tracker, pages the on-call",
    "Swift Package Manager resolves against Package.resolved",
    "Django every time for admin-heavy apps",
    "Postgres all the way",
]


@pytest.mark.parametrize(("action", "reads"), VERBS_LOWERED)
def test_a_rules_verb_reads_in_lower_case_after_when(action: str, reads: str) -> None:
    assert Experience("a deploy times out", action).render() == f"When a deploy times out, {reads}."


@pytest.mark.parametrize("action", NAMES_KEPT)
def test_a_name_that_opens_a_rule_keeps_its_capital(action: str) -> None:
    assert Experience("a deploy times out", action).render() == f"When a deploy times out, {action}."


def test_only_the_action_is_read_as_an_instruction() -> None:
    # A precondition or a rationale states a fact: its first word is no verb of the agent's.
    lesson = Experience("Rollbacks the team ran failed", "Roll back by hand", rationale="Rollbacks the CI ran lost it")
    assert lesson.render() == ("When Rollbacks the team ran failed, roll back by hand, "
                               "because Rollbacks the CI ran lost it.")


def test_the_stored_text_keeps_its_capital() -> None:
    assert Experience("a deploy times out", "Roll back first").action == "Roll back first"


@pytest.mark.parametrize(("action", "reads"), [
    # A rule under "## Never" is stored as "never: <the rule as written>": its verb reads as after an adverb.
    ("never: Force push to protected branches", "never: force push to protected branches"),
    ("never: Roll back a migration by hand", "never: roll back a migration by hand"),
    ("Don'ts: Skip the hooks", "Don'ts: skip the hooks"),
    ("never do the following: Merge without review", "never do the following: merge without review"),
    # a name after the label keeps its capital, and a label that forbids nothing is left alone
    ("never: Python 2 in new code", "never: Python 2 in new code"),
    ("Testing: Run the linter", "Testing: Run the linter"),
])
def test_a_verb_after_a_forbidding_label_reads_in_lower_case(action: str, reads: str) -> None:
    assert Experience("working on shop", action).render() == f"When working on shop, {reads}."


def test_every_verb_the_rules_import_reads_after_a_condition_is_lowered() -> None:
    # "When X, Downgrade Node" is imported as "When X, Y": the verb must not keep its capital there.
    from lamar.rules import parse
    from lamar.sentence import _OPENERS

    assert parse._IMPERATIVE | parse._DOES | parse._AFTER_CONDITION <= _OPENERS
