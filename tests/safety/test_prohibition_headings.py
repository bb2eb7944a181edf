"""A list under a heading, a lead-in or a parent item that forbids it ("## Never" then "- git push --force
origin main") is read as the prohibition it is by the harm screen; an ordinary heading changes nothing."""

from __future__ import annotations

import pytest

from lamar.safety.instructs import instructed_harm
from lamar.safety.prohibitions import forbidding_labels, forbids

FORBIDDEN = [
    "## Never\n- git push --force origin main\n- rm -rf ~",
    "### NEVER\n\n- Run `git push --force origin main`",
    "## Don'ts ❌\n- git push --force origin main",
    "## Things to avoid\n* DROP TABLE users",
    "Setext\n\nNever\n-----\n\n- rm -rf ~/",
    "Never do the following:\n- chmod 777 the file\n- git commit --no-verify",
    "## Git\n- **Never**:\n  - git push --force origin main\n  - git push -f origin master",
    "> ## Do not\n> - rm -rf ~",
    "## Never\nThe following:\n1. git push --force origin main",  # a lead-in that adds nothing
    "## Never\n- git push --force origin main\n  even when CI is red",
    # A line in bold stands for a heading: with its colon inside, outside or none.
    "**Never:**\n- git push --force origin main",
    "**Never**:\n- git push --force origin main",
    "__Don't__\n\n- git push --force origin main",
    # The label on the command's own line, as the rules import writes a lesson under one.
    "Don'ts: git push --force origin main",
    "What not to do: rm -rf ~",
    "**Never**: rm -rf ~",
    "Anti-patterns: chmod 777 the file",
    "never do the following: run git push --force origin main",
]

INSTRUCTED = [
    "## Deploy\n- git push --force origin main",
    "## Always\n- git push --force origin main",
    "## Do's and Don'ts\n- git push --force origin main",
    # A lead-in of its own takes the heading's place.
    "## Never\nUnless the release is late, do these:\n- git push --force origin main",
    # Prose under the heading may say what to do instead.
    "## Never\nrm -rf ~ is how we free space.",
    # The next section, a sibling of the forbidding item, and code are outside it.
    "## Never\n- push to main\n\n## Release\n- git push --force origin main",
    "- **Never**:\n  - skip review\n- git push --force origin main",
    "## Never\n```sh\n# a comment, not a heading\n```\n- push to main\n\n```\ngit push --force origin main\n```",
    "Don'ts: skip review, then rm -rf ~",  # the label's list ends before the command
    "Deploy: git push --force origin main",
]


@pytest.mark.parametrize("text", FORBIDDEN)
def test_a_list_under_a_forbidding_label_is_a_prohibition(text: str) -> None:
    assert instructed_harm(text) is None


@pytest.mark.parametrize("text", INSTRUCTED)
def test_a_list_under_any_other_label_still_instructs(text: str) -> None:
    assert instructed_harm(text) is not None


@pytest.mark.parametrize(("label", "forbidding"), [
    ("Never", True), ("NEVER", True), ("Do not", True), ("Don’ts", True), ("What not to do", True),
    ("Things you must never do", True), ("Anti-patterns", True), ("🚫 Forbidden commands", True),
    ("Do's and Don'ts", False), ("Never-ending jobs", False), ("Never push to main", False),
    ("Not yet implemented", False), ("Testing", False), ("", False),
])
def test_which_labels_forbid(label: str, forbidding: bool) -> None:
    assert forbids(label) is forbidding


def test_each_line_gets_the_label_that_forbids_it() -> None:
    lines = "## Don'ts ❌\n- push to main\n  on Fridays\nSee below.\n- merge".splitlines()
    assert forbidding_labels(lines) == ["", "Don'ts", "Don'ts", "", "Don'ts"]
