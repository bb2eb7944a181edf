"""A hook killed while it writes the state (SIGKILL, as when Claude Code stops it): the next hook
fails open, the store and the state stay intact, and nothing the killed one began is left behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from lamar import Lamar

from .conftest import Hook, payload

# The real hook, killed by a real SIGKILL at its first fsync: the state's temporary file is written, not renamed.
_KILLED_MID_WRITE = (
    "import os, signal, sys\n"
    "os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
    "from lamar_claude_code.hook import main\n"
    "main(sys.argv[1])\n"
)


# Killed at its first rename: the note before recall, after the turn before was reported and before
# the state says so (the note skips the fsync that _KILLED_MID_WRITE waits for).
_KILLED_AT_RENAME = (
    "import os, signal, sys\n"
    "os.replace = lambda src, dst: os.kill(os.getpid(), signal.SIGKILL)\n"
    "from lamar_claude_code.hook import main\n"
    "main(sys.argv[1])\n"
)


def _killed(hook: Hook, event: dict[str, object],
            script: str = _KILLED_MID_WRITE) -> subprocess.CompletedProcess[bytes]:
    """The hook run on `event` by `script`, which kills it part way."""
    return subprocess.run([sys.executable, "-c", script, str(hook.store)], input=json.dumps(event).encode(),
                          env=hook.env, capture_output=True, timeout=60, check=False)


def _leftovers(hook: Hook) -> list[str]:
    return sorted(p.name for p in hook.state_file.parent.iterdir() if p.name.endswith(".tmp"))


def test_a_hook_killed_mid_write_leaves_no_temporary_file_and_the_next_one_fails_open(hook: Hook, repo: Path) -> None:
    first = hook(payload("UserPromptSubmit", "s1", repo, prompt="split app.py into modules"))
    assert first.returncode == 0
    (episode,) = hook.state()["episodes"]
    for name in ("a.py", "b.py", "c.py"):
        (repo / name).write_text("X = 1\n")
        event = payload("PostToolUse", "s1", repo, tool_name="Write", tool_input={"file_path": str(repo / name)},
                        tool_response={"success": True})
        assert _killed(hook, event).returncode == -signal.SIGKILL
    assert _leftovers(hook)  # each killed writer left its temporary copy of the state

    (repo / "d.py").write_text("X = 1\n")
    done = hook(payload("PostToolUse", "s1", repo, tool_name="Write", tool_input={"file_path": str(repo / "d.py")},
                        tool_response={"success": True}))
    assert (done.returncode, done.stdout) == (0, b"")
    assert _leftovers(hook) == []  # a copy of the state (prompts' context) is not left to pile up
    assert hook.state()["episodes"][episode]["files"] == ["d.py"]  # the killed writes never landed
    nxt = hook(payload("UserPromptSubmit", "s1", repo, prompt="now write the docs for it"))
    assert nxt.returncode == 0 and (nxt.stdout == b"" or json.loads(nxt.stdout)["hookSpecificOutput"])
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(episode).signal == "accepted"
    assert not hook.log_file.read_text().count("Error")


def test_an_outcome_reported_by_a_killed_hook_is_kept_as_the_store_holds_it(hook: Hook, repo: Path) -> None:
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="split app.py into modules")).returncode == 0
    (first,) = hook.state()["episodes"]
    # Reports the first prompt's outcome to the store, then dies before the state remembers it.
    assert _killed(hook, payload("UserPromptSubmit", "s1", repo, prompt="now write the docs for it"),
                   _KILLED_AT_RENAME).returncode == -signal.SIGKILL
    assert hook.state()["episodes"][first]["signal"] is None
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="and add a changelog entry"))
    assert done.returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(first).signal == "accepted"
    record = hook.state()["episodes"][first]
    assert record["signal"] == "accepted"  # what the store holds, so its trace carries the outcome
    assert record["audit"][-1][1:] == ["accepted", "reported before this hook's bookkeeping could note it"]


# The real hook, killed by a real SIGKILL as its recall returns: the store holds the episode, the state never will.
_KILLED_AFTER_RECALL = (
    "import os, signal, sys, lamar\n"
    "recall = lamar.Lamar.recall\n"
    "def killed(self, *args, **kwargs):\n"
    "    recall(self, *args, **kwargs)\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n"
    "lamar.Lamar.recall = killed\n"
    "from lamar_claude_code.hook import main\n"
    "main(sys.argv[1])\n"
)


def test_an_episode_whose_hook_was_killed_before_tracking_it_is_expired_by_the_next_hook(
        hook: Hook, repo: Path) -> None:
    assert hook(payload("SessionStart", "s1", repo, source="startup")).returncode == 0
    done = _killed(hook, payload("UserPromptSubmit", "s1", repo, prompt="fix the tests"), _KILLED_AFTER_RECALL)
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, b"")  # nothing was injected
    with Lamar(str(hook.store)) as lam:
        (orphan,) = [p.episode_id for p in lam.pending()]
        other = lam.recall({"project": "shop"}).episode_id  # another process's episode: left alone
    assert orphan not in hook.state()["episodes"]

    read = payload("PostToolUse", "s2", repo, tool_name="Read", tool_input={"file_path": "app.py"})
    assert hook(read).returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert [p.episode_id for p in lam.pending()] == [other]
        assert (lam.episode(orphan).settled, lam.episode(orphan).reward) == ("expired", None)
    assert "recalling" not in hook.state()
    assert not hook.state_file.with_name(hook.state_file.name + ".recalling").exists()
    assert f"expired {orphan}" in hook.log_file.read_text()


# Another process recalls the same context while this hook's recall waits on the store, then this
# hook is killed by a real SIGKILL as it writes the state that would track its episode.
_KILLED_AFTER_A_RACED_RECALL = (
    "import os, signal, sys, lamar\n"
    "recall = lamar.Lamar.recall\n"
    "def raced(self, context, **kwargs):\n"
    "    with lamar.Lamar(sys.argv[1]) as other:\n"
    "        recall(other, context)\n"
    "    os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
    "    return recall(self, context, **kwargs)\n"
    "lamar.Lamar.recall = raced\n"
    "from lamar_claude_code.hook import main\n"
    "main(sys.argv[1])\n"
)


def test_the_next_hook_expires_the_killed_hooks_own_episode_not_another_of_its_context(hook: Hook,
                                                                                       repo: Path) -> None:
    assert hook(payload("SessionStart", "s1", repo, source="startup")).returncode == 0
    done = _killed(hook, payload("UserPromptSubmit", "s1", repo, prompt="fix the tests"), _KILLED_AFTER_A_RACED_RECALL)
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, b"")
    with Lamar(str(hook.store)) as lam:
        other, orphan = [p.episode_id for p in lam.pending()]  # oldest first: the other process's is older
        assert lam.episode(other).context == lam.episode(orphan).context
    assert orphan not in hook.state()["episodes"]

    read = payload("PostToolUse", "s2", repo, tool_name="Read", tool_input={"file_path": "app.py"})
    assert hook(read).returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(orphan).settled == "expired"
        assert [p.episode_id for p in lam.pending()] == [other]  # the live recall of the same context is left alone
    assert f"expired {orphan}" in hook.log_file.read_text()


# As above, but killed inside its recall, the episode stored: no note names it.
_KILLED_INSIDE_A_RACED_RECALL = _KILLED_AFTER_A_RACED_RECALL.replace(
    "    os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
    "    return recall(self, context, **kwargs)\n",
    "    recall(self, context, **kwargs)\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n")


def test_a_hook_killed_inside_its_recall_leaves_a_same_context_recall_alone(hook: Hook, repo: Path) -> None:
    assert hook(payload("SessionStart", "s1", repo, source="startup")).returncode == 0
    done = _killed(hook, payload("UserPromptSubmit", "s1", repo, prompt="fix the tests"), _KILLED_INSIDE_A_RACED_RECALL)
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, b"")
    with Lamar(str(hook.store)) as lam:
        both = [p.episode_id for p in lam.pending()]
    assert len(both) == 2

    read = payload("PostToolUse", "s2", repo, tool_name="Read", tool_input={"file_path": "app.py"})
    assert hook(read).returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert [p.episode_id for p in lam.pending()] == both  # which is the killed hook's own is unknown
    said = hook.log_file.read_text()
    assert "left 2 pending episodes of a context recalled by a hook stopped inside its recall" in said
    assert "recalling" not in hook.state()


_KILLED_INSIDE_ITS_RECALL = (
    "import os, signal, sys, lamar\n"
    "recall = lamar.Lamar.recall\n"
    "def killed(self, context, **kwargs):\n"
    "    recall(self, context, **kwargs)\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n"
    "lamar.Lamar.recall = killed\n"
    "from lamar_claude_code.hook import main\n"
    "main(sys.argv[1])\n"
)


def test_a_hook_killed_inside_a_recall_whose_context_holds_a_key_has_its_episode_expired(hook: Hook,
                                                                                         repo: Path) -> None:
    # The store keeps the context scrubbed: the note must name it so, or the next hook finds no episode of it.
    token = "ghp_" + "Zq7Vw3Xk9Lm2Np5Rt8Yb4Cd6Fg1Hj0Ks3Qa7We9"
    cloned = repo.rename(repo.with_name(f"shop-{token}"))
    assert hook(payload("SessionStart", "s1", cloned, source="startup")).returncode == 0
    done = _killed(hook, payload("UserPromptSubmit", "s1", cloned, prompt="fix the tests"), _KILLED_INSIDE_ITS_RECALL)
    assert (done.returncode, done.stdout) == (-signal.SIGKILL, b"")
    with Lamar(str(hook.store)) as lam:
        (orphan,) = [p.episode_id for p in lam.pending()]
        assert lam.episode(orphan).context["project"] == "shop-[REDACTED:github-token]"

    read = payload("PostToolUse", "s2", cloned, tool_name="Read", tool_input={"file_path": "app.py"})
    assert hook(read).returncode == 0
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(orphan).settled == "expired"
    assert f"expired {orphan}" in hook.log_file.read_text()
