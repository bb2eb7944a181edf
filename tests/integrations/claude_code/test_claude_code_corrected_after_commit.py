"""A turn that commits its own work and is then corrected by the next prompt: the correction is what it earned."""

from __future__ import annotations

from pathlib import Path

from lamar import Lamar

from .conftest import Hook, git, payload
from .test_claude_code_session import SESSION, _edit, _prompt, _stop


def test_a_correction_after_the_turns_own_commit_is_a_correction(hook: Hook, repo: Path) -> None:
    # Claude committed in its turn, so git read it as SHIPPED at its Stop, and the next prompt's "no, ..." was
    # passed over: a turn the developer rejected counted as the best outcome there is.
    e1, _ = _prompt(hook, repo, "make the checkout total a float in app.py, then commit")
    _edit(hook, repo, "app.py", "def main():\n    print(float(1))\n")
    git(repo, "commit", "-q", "-am", "float total")  # the turn's own commit, as Claude runs it through Bash
    sha = git(repo, "rev-parse", "HEAD").strip()
    _stop(hook, repo)
    assert hook.state()["episodes"][e1]["signal"] == "shipped"
    _prompt(hook, repo, "no, that's wrong: money stays Decimal")
    record = hook.state()["episodes"][e1]
    assert [a[1] for a in record["audit"]] == ["shipped", "corrected"]
    assert f"after its commit {sha[:12]}" in record["audit"][-1][2]
    _stop(hook, repo)
    _prompt(hook, repo, "add a --verbose flag")  # git is read at each event: the commit it knew ships nothing anew
    with Lamar(str(hook.store)) as lam:
        assert (lam.episode(e1).signal, lam.episode(e1).reports) == ("corrected", 2)
    git(repo, "revert", "--no-edit", sha)  # undone, it is still the stronger reading
    hook(payload("SessionEnd", SESSION, repo, reason="prompt_input_exit"))
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(e1).signal == "reverted"


def test_a_turn_that_shipped_stays_shipped_when_the_next_prompt_moves_on(hook: Hook, repo: Path) -> None:
    e1, _ = _prompt(hook, repo, "make the checkout total a float in app.py, then commit")
    _edit(hook, repo, "app.py", "def main():\n    print(float(1))\n")
    git(repo, "commit", "-q", "-am", "float total")
    _stop(hook, repo)
    _prompt(hook, repo, "thanks, now add a --verbose flag")
    assert [a[1] for a in hook.state()["episodes"][e1]["audit"]] == ["shipped"]
