"""`lamar claude-code install --holdout Q`: the hooks' engine runs at Q; every `lamar` command reads the store so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import payload


def cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def installed_command(repo: Path) -> str:
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    command: str = settings["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]
    return command


def run_hook(command: str, repo: Path, env: dict[str, str], prompt: str) -> subprocess.CompletedProcess[str]:
    """The installed command as Claude Code runs it, through the shell, with one prompt."""
    event = payload("UserPromptSubmit", "s1", repo, prompt=prompt)
    return subprocess.run(["sh", "-c", command], input=json.dumps(event), cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def test_the_installed_holdout_shows_in_stats_from_the_install_on(repo: Path, env: dict[str, str],
                                                                  store: Path) -> None:
    before = cli(env, repo, "stats", "--store", str(store))
    assert "at holdout=0.04" in before.stdout  # no agent has folded the store yet: the defaults
    done = cli(env, repo, "claude-code", "install", "--store", str(store), "--holdout", "0.15")
    assert done.returncode == 0, done.stderr
    command = installed_command(repo)
    assert command.endswith(f"--store {store} --holdout 0.15 || exit 1")
    installed = cli(env, repo, "stats", "--store", str(store))
    assert "at holdout=0.15" in installed.stdout and "install --holdout" not in installed.stdout
    ran = run_hook(command, repo, env, "the tests fail again")
    assert ran.returncode == 0, ran.stderr
    after = cli(env, repo, "stats", "--store", str(store))
    assert "episodes   1" in after.stdout.replace("episodes    ", "episodes   "), after.stdout
    assert "at holdout=0.15" in after.stdout


def test_the_command_lines_holdout_reaches_the_hooks_engine(repo: Path, env: dict[str, str], store: Path,
                                                            tmp_path: Path) -> None:
    assert cli(env, repo, "claude-code", "install", "--store", str(store), "--holdout", "0.15").returncode == 0
    # A holdout no engine takes, as a hand edit of the settings would leave it: the engine that refuses it is the
    # hooks' own, in the first event's process and in the daemon that answers the second; each fails open.
    command = installed_command(repo).replace("--holdout 0.15", "--holdout 2")
    for prompt in ("the tests fail again", "and again"):
        ran = run_hook(command, repo, env, prompt)
        assert ran.returncode == 0 and "additionalContext" not in ran.stdout, (ran.stdout, ran.stderr)
    log = (tmp_path / "experience.db.claude-code.log").read_text()
    assert log.count("holdout must be in [0, 1)") == 2, log


def test_install_refuses_a_holdout_no_engine_takes(repo: Path, env: dict[str, str], store: Path) -> None:
    done = cli(env, repo, "claude-code", "install", "--store", str(store), "--holdout", "1")
    assert done.returncode == 1 and "holdout must be in [0, 1)" in done.stderr
    assert not (repo / ".claude" / "settings.local.json").exists()


def test_a_store_at_the_default_names_the_install_option(repo: Path, env: dict[str, str], store: Path) -> None:
    shown = cli(env, repo, "stats", "--store", str(store))
    assert "lamar claude-code install --holdout 0.15" in shown.stdout.replace("\n" + " " * 11, " ")
