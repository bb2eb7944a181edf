"""A force push said in words is warned about in any form of the verb that instructs it ("force pushing",
"force-pushed"), and not where the words only name it inside a sentence about something else."""

from __future__ import annotations

import pytest

from lamar.safety.instructs import instructed_harm

SHARED = "force-pushes over a shared branch"
CHECKED_OUT = "force-pushes whichever branch is checked out, a shared one too"


@pytest.mark.parametrize(("text", "reason"), [
    ("Fix a rejected push by force pushing", CHECKED_OUT),
    ("After the rebase, try force-pushing", CHECKED_OUT),
    ("Resolve the diverged history by force-pushing it", CHECKED_OUT),
    ("Squashed the commits and force pushed; CI went green", CHECKED_OUT),
    ("Rebase, then force-pushed to update the PR", CHECKED_OUT),
    ("Fix the history by force pushing to main", SHARED),
    ("- Force pushing to master is how we fix a bad merge", SHARED),
])
def test_each_form_of_the_verb_is_named(text: str, reason: str) -> None:
    said = instructed_harm(text)
    assert said is not None and said.startswith(f"{reason}: "), said


@pytest.mark.parametrize("text", [
    # Words that name a force push inside a sentence about something else instruct none.
    "We discussed force push policies in the retro",
    "- We discussed force push policies in the retro",
    "Force push policies are documented in the wiki",
    "GitHub blocks force push on protected branches",
    "Branch protection rejects force pushes to main",
    "Ask an admin about force pushing",
    # A prohibition, or someone else's push, in the -ing and -ed forms as in the base form.
    "Stop force pushing; open a new PR instead",
    "Avoid force-pushing shared branches",
    "No force pushing to main",
    "The branch was force-pushed by the release bot",
    "A force-pushed branch loses its review comments",
    "Someone force pushed over the fix",
    # A lease named as code, as rules files write it.
    "Only force push with `--force-with-lease`",
    "Force-push using \"--force-with-lease\" after a rebase",
])
def test_a_force_push_named_but_not_instructed_is_not_named(text: str) -> None:
    assert instructed_harm(text) is None
