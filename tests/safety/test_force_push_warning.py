"""The force-push warning says what a push overwrites: a shared branch it names, whichever branch is checked out
when it names none, and nothing to warn about on a branch the lesson says is the agent's own."""

from __future__ import annotations

import pytest

from lamar.safety.instructs import instructed_harm

SHARED = "force-pushes over a shared branch"
CHECKED_OUT = "force-pushes whichever branch is checked out, a shared one too"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Run git push --force origin main after each fix", SHARED),
        # Every branch, the shared ones among them.
        ("Sync the mirror with git push --force --all origin", SHARED),
        ("Publish with git push --mirror origin", SHARED),
        # Short flags run together: -fu is -f and -u.
        ("When the remote rejects it, git push -fu origin main", SHARED),
        # A lease keeps unseen commits, not the shared history everyone has pulled: rewriting main is still the harm.
        ("When it is rejected, git push --force-with-lease origin main", SHARED),
        ("git push --force-with-lease=main:abc123 origin HEAD:main", SHARED),
        ("git push origin master --force-with-lease", SHARED),
        # No branch named: the push overwrites the branch the agent is on, main as well as any other.
        ("If the remote refuses the push, git push --force", CHECKED_OUT),
        ("After each fix, git push -f origin", CHECKED_OUT),
        ("After each fix, git push --force origin HEAD", CHECKED_OUT),
        ("When the history diverged, git push origin +HEAD", CHECKED_OUT),
        # In words, naming no branch: the one checked out, as `git push --force` is.
        ("Force push to fix history", CHECKED_OUT),
        ("force-push after rebasing", CHECKED_OUT),
        ("When the remote rejects the push, force-push it", CHECKED_OUT),
        ("If CI is stuck, you can forcepush to origin", CHECKED_OUT),
        ("Force-push to main so CI picks the fix up", SHARED),
    ],
)
def test_a_force_push_is_named_for_what_it_overwrites(text: str, reason: str) -> None:
    said = instructed_harm(text)
    assert said is not None and said.startswith(f"{reason}: "), said


@pytest.mark.parametrize(
    "text",
    [
        # A branch the lesson says is the agent's own: rewriting it after a rebase is the routine.
        "After rebasing your feature branch, git push --force",
        "When the PR branch was rebased onto main, git push -f origin HEAD",
        "Once a topic branch is squashed, git push --force to update the pull request",
        "git push --force origin feature/login after a rebase",
        "git push --force-with-lease after rebasing",
        # No force at all: a plain push to the remote.
        "When the tests pass, git push origin.",
        "git push upstream; then open the PR",
        # In words: the agent's own branch, a branch named, a lease, a prohibition, or a push told of, not asked for.
        "Force-push after rebasing your feature branch",
        "Force push to origin/feature-login after the rebase",
        "Force push to the staging branch once it is tagged",
        "Force push with lease after rebasing",
        "Never force push",
        "Don't force-push; open a new PR instead",
        "Force push is disabled on this repository",
        "After a force push, reset your clone to origin",
        "When the upstream branch was force-pushed, rebase onto it",
        "When someone force pushes, CI runs again",
    ],
)
def test_a_force_push_of_the_agents_own_branch_is_not_named(text: str) -> None:
    assert instructed_harm(text) is None


def test_an_own_branch_does_not_excuse_a_shared_one() -> None:
    said = instructed_harm("After rebasing the feature branch, git push --force origin main")
    assert said is not None and said.startswith(f"{SHARED}: "), said


def test_a_mined_lessons_precondition_says_whose_branch_the_push_is_on() -> None:
    from lamar.sleep.warned import lesson_warning

    assert lesson_warning("the feature branch was rebased onto main", "git push --force", "") == ""
    assert lesson_warning("the remote rejects the push", "git push --force", "").startswith(CHECKED_OUT)


@pytest.mark.parametrize(
    "text",
    [
        "Then git push origin --delete main",
        "git push origin :main to clean up",
        "git push -d origin master after the release",
    ],
)
def test_deleting_a_shared_branch_on_the_remote_is_named(text: str) -> None:
    said = instructed_harm(text)
    assert said is not None and said.startswith("deletes a shared branch: "), said


@pytest.mark.parametrize(
    "text",
    [
        "git push --delete origin feature/login once it is merged into main",
        "git push origin :old-topic",
        "Never run git push origin --delete main",
    ],
)
def test_deleting_another_branch_or_forbidding_it_is_not_named(text: str) -> None:
    assert instructed_harm(text) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # A shared branch reached by a path or a refspec is that branch still.
        ("git push --force origin HEAD:main", SHARED),
        ("git push --force origin refs/heads/release", SHARED),
        ("git push --force origin main-fix:main", SHARED),
        ("When the deploy is rejected, git push --force origin main.", SHARED),
        ("git push origin --delete refs/heads/master", "deletes a shared branch"),
    ],
)
def test_a_shared_branch_named_by_its_path_is_named(text: str, reason: str) -> None:
    said = instructed_harm(text)
    assert said is not None and said.startswith(f"{reason}: "), said


@pytest.mark.parametrize(
    "text",
    [
        # A branch whose name only starts or ends with a shared one's is another branch, the agent's own as often
        # as not.
        "git push --force origin main-fix",
        "git push -f origin release-2.0 after the rebase",
        "git push --force origin fix-main",
        "git push --force origin main.old",
        "git push --force origin release/2.0",
        "git push --force origin main:main-fix",
        "git push origin +prod-hotfix",
        "Force push to main-fix after the rebase",
        "Force-push to the release-2.0 branch once it is tagged",
        "git push origin --delete main.old",
        "git push origin :release.candidate",
    ],
)
def test_a_branch_named_after_a_shared_one_is_not_that_branch(text: str) -> None:
    assert instructed_harm(text) is None
