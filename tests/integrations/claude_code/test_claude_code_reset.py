"""A shipped commit thrown away with `git reset` rather than `git revert`, against the real hook process."""

from __future__ import annotations

from pathlib import Path

from lamar import Lamar

from .conftest import Hook, git, payload
from .test_claude_code_session import SESSION, _edit, _prompt, _stop


def _signals(hook: Hook) -> dict[str, str]:
    with Lamar(str(hook.store)) as lam:
        return {e: str(lam.episode(e).signal) for e in hook.state()["episodes"]}


def _turn(hook: Hook, repo: Path, prompt: str, name: str, content: str) -> str:
    episode, _ = _prompt(hook, repo, prompt)
    _edit(hook, repo, name, content, tool="Write")
    _stop(hook, repo)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", name)
    _stop(hook, repo)  # git is read at every event
    return episode


def test_a_commit_dropped_with_git_reset_is_reverted_and_one_rewritten_stays_shipped(hook: Hook, repo: Path) -> None:
    # `git reset --hard HEAD~1` is how an unpushed commit is thrown away: the turn stayed SHIPPED (+1.0).
    greet = _turn(hook, repo, "add a greeting module", "greet.py", "print('hi')\n")
    consts = _turn(hook, repo, "now a constants module", "consts.py", "C = 3\n")
    assert {_signals(hook)[e] for e in (greet, consts)} == {"shipped"}
    git(repo, "reset", "-q", "--soft", "HEAD~2")  # squashed: the work lives on in another commit
    git(repo, "commit", "-q", "-m", "greet and consts")
    helper = _turn(hook, repo, "and a helper module", "helper.py", "def helper():\n    return 1\n")
    assert _signals(hook)[helper] == "shipped"
    git(repo, "commit", "-q", "--amend", "-m", "helper, reworded")  # amended: rewritten, not dropped
    _stop(hook, repo)
    assert {_signals(hook)[e] for e in (greet, consts, helper)} == {"shipped"}

    git(repo, "reset", "-q", "--hard", "HEAD~1")  # dropped
    done = hook(payload("UserPromptSubmit", SESSION, repo, prompt="now write the changelog"))
    assert done.returncode == 0, done.stderr
    signals = _signals(hook)
    assert (signals[greet], signals[consts], signals[helper]) == ("shipped", "shipped", "reverted"), signals
    audit = hook.state()["episodes"][helper]["audit"]
    assert [a[1] for a in audit][-2:] == ["shipped", "reverted"] and "git reset" in audit[-1][2], audit


def test_a_branch_deleted_after_its_commit_shipped_stays_shipped(hook: Hook, repo: Path) -> None:
    """No reset moved HEAD away from it: a branch merged elsewhere (a squash merge on a forge) and deleted."""
    git(repo, "reset", "-q", "--hard", "HEAD")  # a reset in the reflog, from another commit
    git(repo, "checkout", "-q", "-b", "feature")
    feature = _turn(hook, repo, "add a greeting module", "greet.py", "print('hi')\n")
    git(repo, "checkout", "-q", "main")
    git(repo, "branch", "-q", "-D", "feature")
    done = hook(payload("UserPromptSubmit", SESSION, repo, prompt="now write the changelog"))
    assert done.returncode == 0, done.stderr
    assert _signals(hook)[feature] == "shipped"


def test_the_reflog_says_which_resets_left_the_commit_behind() -> None:
    from lamar_claude_code.dropped import reset_away

    a, s, t, u, m = ("a" * 40, "5" * 40, "7" * 40, "9" * 40, "e" * 40)
    made = [(a, s, "commit: helper"), (s, t, "commit: on top")]
    assert reset_away([*made, (t, a, "reset: moving to HEAD~2")], s)  # dropped with the commit on top
    assert not reset_away([*made, (t, s, "reset: moving to HEAD~1")], s)  # only the commit on top
    assert not reset_away([*made, (t, m, "checkout: moving from feature to main"), (m, a, "reset: moving to a")], s)
    assert reset_away([(a, s, "commit: helper"), (s, u, "commit (amend): helper"), (u, a, "reset: moving to HEAD~1")],
                      s)  # its amended copy dropped
    assert not reset_away([(t, a, "reset: moving to HEAD~1")], s)  # made before the reflog's tail
