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
