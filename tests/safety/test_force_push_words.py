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


@pytest.mark.parametrize("text", [
    # "to" before the -ing form is a preposition: what is preferred to force pushing is what to do instead.
    "Prefer merge commits to force pushing",
    # The -es form says what someone or something does; an instruction is never in it.
    "Force pushes to main are blocked by branch protection",
    # A verdict after a command in a code span is read after the span, not after words the span does not hold.
    "`git push --force` is never OK on main",
])
def test_a_preference_a_description_or_a_verdict_is_not_named(text: str) -> None:
    assert instructed_harm(text) is None


def test_a_command_in_a_code_span_is_still_named() -> None:
    said = instructed_harm("When the deploy is rejected, run `git push --force origin main`")
    assert said is not None and said.startswith(f"{SHARED}: "), said
