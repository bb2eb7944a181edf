"""A whole Claude Code session replayed from documented hook payloads against the real hook process.

Prompts, Edit/Write tool calls, a commit, a revert, a discarded edit, a re-ask and a correction
run in a real git repository; the test reads back the episodes, outcomes, injected text, audit
and verdicts from the store and the bookkeeping file.
"""

from __future__ import annotations

import json
from pathlib import Path

from lamar import Lamar, Signal, Verdict
from lamar.recall import render_prompt

from .conftest import Hook, git, payload

SESSION = "3f1c2a9e-session"


def _prompt(hook: Hook, repo: Path, text: str) -> tuple[str, str]:
    """Submit a prompt; returns (episode id, injected text) after checking the answer's format."""
    done = hook(payload("UserPromptSubmit", SESSION, repo, prompt=text))
    assert done.returncode == 0, done.stderr
    episode = hook.state()["sessions"][SESSION]["episode"]
    lam = Lamar(str(hook.store))
    expected = render_prompt([lam.get(i) for i in lam.episode(episode).injected])
    lam.close()
    if not expected:
        assert done.stdout == b""
        return episode, ""
    answer = json.loads(done.stdout)
    assert answer == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": expected}}
    return episode, expected


def _edit(hook: Hook, repo: Path, name: str, content: str, tool: str = "Edit") -> None:
    """Claude edits a file: the file changes on disk, then PostToolUse reports it."""
    path = repo / name
    old = path.read_text() if path.exists() else ""
    path.write_text(content)
    tool_input = ({"file_path": str(path), "content": content} if tool == "Write"
                  else {"file_path": str(path), "old_string": old, "new_string": content, "replace_all": False})
    done = hook(payload("PostToolUse", SESSION, repo, tool_name=tool, tool_input=tool_input,
                        tool_response={"filePath": str(path), "success": True}, tool_use_id="toolu_01"))
    assert (done.returncode, done.stdout) == (0, b""), done.stderr


def _stop(hook: Hook, repo: Path) -> None:
    done = hook(payload("Stop", SESSION, repo, stop_hook_active=False, last_assistant_message="Done."))
    assert (done.returncode, done.stdout) == (0, b""), done.stderr


def test_a_session_is_read_into_episodes_and_outcomes(hook: Hook, repo: Path) -> None:
    start = hook(payload("SessionStart", SESSION, repo, source="startup", model="claude-sonnet-5"))
    assert (start.returncode, start.stdout) == (0, b"")

    # 1. a feature: edits app.py; the next prompt moves on (ACCEPTED); a later commit ships it.
    e1, text1 = _prompt(hook, repo, "add a --verbose flag to the command line of app.py")
    _edit(hook, repo, "app.py", "import sys\n\ndef main():\n    print('shop', '--verbose' in sys.argv)\n")
    _stop(hook, repo)
    # 2. a question, asked again in other words (REASKED)
    e2, _ = _prompt(hook, repo, "how does the price rounding in the checkout work?")
    _stop(hook, repo)
    # 3. the re-ask; then corrected by the next prompt (CORRECTED)
    e3, _ = _prompt(hook, repo, "how does the checkout price rounding work exactly?")
    _stop(hook, repo)
    git(repo, "commit", "-q", "-am", "verbose flag")  # the developer commits app.py: e1 ships
    # 4. a correction, then a fix in a new file that is committed and reverted (REVERTED)
    e4, text4 = _prompt(hook, repo, "no, that's wrong: the tests fail with AssertionError in test_app.py")
    _edit(hook, repo, "version.py", "VERSION = '1.0'\n", tool="Write")
    git(repo, "add", "version.py")
    git(repo, "commit", "-q", "-m", "add version")
    _stop(hook, repo)
    shipped_e4 = hook.state()["episodes"][e4]["signal"]
    git(repo, "revert", "--no-edit", "HEAD")
    # 5. a refactor whose edit the developer throws away (REVERTED before any commit)
    e5, _ = _prompt(hook, repo, "refactor: rename main to run in app.py")
    _edit(hook, repo, "app.py", "import sys\n\ndef run():\n    print('shop', '--verbose' in sys.argv)\n")
    _stop(hook, repo)
    assert hook.state()["episodes"][e5]["signal"] is None  # the edit is still in the working tree
    git(repo, "checkout", "--", "app.py")
    end = hook(payload("SessionEnd", SESSION, repo, reason="prompt_input_exit"))
    assert (end.returncode, end.stdout) == (0, b"")

    state = hook.state()
    lam = Lamar(str(hook.store))
    signals = {e: lam.episode(e).signal for e in (e1, e2, e3, e4, e5)}
    assert signals == {e1: "shipped", e2: "reasked", e3: "corrected", e4: "reverted", e5: "reverted"}
    assert shipped_e4 == "shipped"
    # an upgrade replaces the outcome: the episode counts once, with its last signal
    assert (lam.episode(e1).reports, lam.episode(e4).reports, lam.episode(e5).reports) == (2, 2, 1)
    assert lam.stats()["reports"] == 5
    # the audit says why each outcome changed
    assert [a[1] for a in state["episodes"][e1]["audit"]] == ["accepted", "shipped"]
    assert "app.py landed in commit" in state["episodes"][e1]["audit"][1][2]
    # e4 shipped before its follow-up prompt, so that prompt could not override git
    assert [a[1] for a in state["episodes"][e4]["audit"]] == ["shipped", "reverted"]
    assert "was reverted by" in state["episodes"][e4]["audit"][-1][2]
    assert "discarded before any commit" in state["episodes"][e5]["audit"][-1][2]
    assert state["episodes"][e1]["files"] == ["app.py"] and state["episodes"][e4]["files"] == ["version.py"]

    # contexts derived from the repository and the prompts
    assert lam.episode(e1).context == {"project": "shop", "language": "python", "task": "feature"}
    assert lam.episode(e2).context["task"] == "question"
    assert lam.episode(e4).context == {"project": "shop", "language": "python", "task": "tests_fail",
                                       "error_class": "AssertionError"}
    assert lam.episode(e5).context["task"] == "refactor"
    # the lessons of another project are never eligible; the tests_fail lesson only on e4
    by_text = {e.action: e.id for e in lam.experiences()}
    assert by_text["clear DerivedData"] not in lam.episode(e1).eligible
    assert by_text["run the failing test alone with -x first"] in lam.episode(e4).eligible
    assert by_text["run the failing test alone with -x first"] not in lam.episode(e1).eligible
    for text, episode in ((text1, e1), (text4, e4)):
        for exp_id in lam.episode(episode).injected:
            assert lam.get(exp_id).action in text

    # verdicts follow from what was reported: five outcomes prove nothing yet
    for exp in lam.experiences():
        ev = lam.evidence(exp.id)
        assert ev.verdict is Verdict.UNKNOWN
        eligible = [e for e in (e1, e2, e3, e4, e5) if exp.id in lam.episode(e).eligible]
        assert ev.eligible == len(eligible)
        assert ev.injected == sum(exp.id in lam.episode(e).injected for e in eligible)
    assert Signal(signals[e1]).reward == 1.0
    lam.close()

    # one line per settlement, and the missing transcript cost only the traces
    log = hook.log_file.read_text()
    assert log.count("settled") == 7 and "no traces from" in log


def test_a_turn_corrected_and_redone_in_the_same_file_does_not_ship_with_the_fix(hook: Hook, repo: Path) -> None:
    # "no, ...": the next turn rewrites the file the rejected turn edited, and the developer commits the fix.
    # What landed is the fix, not the rejected edit, so that turn stays corrected; a file only it edited
    # still settles it by git.
    e1, _ = _prompt(hook, repo, "make the checkout total a float in app.py")
    _edit(hook, repo, "app.py", "def main():\n    print(float(1))\n")
    _edit(hook, repo, "notes.md", "the total is a float\n", tool="Write")
    _stop(hook, repo)
    e2, _ = _prompt(hook, repo, "no, money stays Decimal: fix the test instead")
    _edit(hook, repo, "app.py", "def main():\n    print('shop', 'Decimal')\n")
    _edit(hook, repo, "test_app.py", "def test_main():\n    pass\n", tool="Write")
    _stop(hook, repo)
    git(repo, "add", "app.py", "test_app.py")
    git(repo, "commit", "-q", "-m", "fix the test")
    _prompt(hook, repo, "add a --verbose flag")  # git is read at each event
    with Lamar(str(hook.store)) as lam:
        assert (lam.episode(e1).signal, lam.episode(e2).signal) == ("corrected", "shipped")
    assert hook.state()["episodes"][e1]["files"] == ["notes.md"]
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "notes")
    hook(payload("SessionEnd", SESSION, repo, reason="prompt_input_exit"))
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(e1).signal == "shipped"  # its own file landed: git is still the stronger reading
