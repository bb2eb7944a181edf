"""A repository's .claude/lamar.toml (issue 38 item 7): read only once trusted, and its rules under a time limit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lamar import Lamar

from .conftest import Hook, payload, project_config


def _cli(hook: Hook, repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", *args, "--store", str(hook.store)],
                          cwd=repo, env=hook.env, capture_output=True, text=True, timeout=60, check=False)


def test_a_cloned_repositorys_config_is_ignored_until_trusted(hook: Hook, repo: Path) -> None:
    config = repo / ".claude" / "lamar.toml"
    config.parent.mkdir()
    config.write_text("[context]\nproject = 'elsewhere'\n")
    assert hook(payload("SessionStart", "s1", repo, source="startup")).returncode == 0
    assert f"ignored {config}: not trusted yet" in hook.log_file.read_text()
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="add a flag")).returncode == 0
    assert "NOT trusted" in _cli(hook, repo, "status").stdout

    trusted = _cli(hook, repo, "trust")
    assert trusted.returncode == 0 and "trusted as it is now" in trusted.stdout
    assert "project config" in _cli(hook, repo, "status").stdout
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="add another flag")).returncode == 0
    config.write_text("[context]\nproject = 'changed'\n")  # a pull changes it: not trusted again
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="add a third flag")).returncode == 0

    with Lamar(str(hook.store)) as lam:
        projects = [lam.episode(e).context["project"] for e in hook.state()["episodes"]]
    assert sorted(projects) == sorted(["shop", "elsewhere", "shop"])


def test_a_backtracking_rule_is_stopped_and_the_prompt_still_gets_its_episode(hook: Hook, repo: Path) -> None:
    project_config(repo, "[rules]\nerror = ['(a+)+$']\n", hook.env["HOME"])
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the build fails: " + "a" * 40 + "b"))
    assert done.returncode == 0
    assert "rules took over 0.25s" in hook.log_file.read_text()
    with Lamar(str(hook.store)) as lam:
        assert lam.stats()["episodes"] == 1
        (episode,) = hook.state()["episodes"]
        assert lam.episode(episode).context["task"] == "build_fails"  # the built-in rules still ran


def test_resolved_rules_answer_as_the_config_would(hook: Hook, repo: Path) -> None:
    project_config(repo, "[[rules.task]]\nname = 'migration'\npattern = '(?i)\\bmigrat'\n"
                         "[rules]\nerror = ['\\b(ORA-\\d{5})\\b']\n[outcome]\ncorrected = ['(?i)^meh\\b']\n",
                   hook.env["HOME"])
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="the migration fails with ORA-00942")).returncode == 0
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="meh, try again")).returncode == 0
    state = hook.state()
    first = min(state["episodes"].values(), key=lambda r: r["time"])
    assert first["context"]["task"] == "migration" and first["context"]["error_class"] == "ORA-00942"
    assert first["signal"] == "corrected"


def test_status_says_when_a_config_turns_the_hooks_off_or_cannot_be_used(hook: Hook, repo: Path) -> None:
    """`enabled = false` (the page's way to turn Lamar off) left status saying the hooks are installed and run,
    with the last event they saw: a user who forgot it believed Lamar was learning while no prompt recorded
    anything. A config that does not parse was not named either."""
    user = Path(hook.env["HOME"]) / ".lamar" / "claude-code.toml"
    user.parent.mkdir(exist_ok=True)
    user.write_text("[hook]\nenabled = false\n")
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="add a flag")).returncode == 0
    with Lamar(str(hook.store)) as lam:  # off indeed: the prompt stored no episode
        assert lam.stats()["episodes"] == 0
    said = _cli(hook, repo, "status").stdout
    assert f"hooks: OFF here, by `enabled = false` under [hook] in {user}: no lesson is recalled" in said, said

    user.write_text("[hook]\nenabled = true\n")
    project_config(repo, "[hook]\nenabled = false\n", hook.env["HOME"])  # the project's, trusted, wins
    assert f"in {repo / '.claude' / 'lamar.toml'}: no lesson" in _cli(hook, repo, "status").stdout

    user.write_text("[hook\n")
    broken = _cli(hook, repo, "status").stdout
    assert f"config: the hooks inject nothing here until it is fixed: {user}: " in broken, broken
    user.unlink()
    (repo / ".claude" / "lamar.toml").unlink()
    assert "OFF" not in _cli(hook, repo, "status").stdout
