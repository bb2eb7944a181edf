"""`lamar claude-code install --holdout Q`: the hooks' engine runs at Q; every `lamar` command reads the store so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lamar import Lamar

from .conftest import BARE_PATH, ROOT, payload


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
    bare = {k: v for k, v in env.items() if k != "LAMAR_STORE"}
    after = cli(bare, repo, "stats")  # no --store: the one the installed hook commands name
    assert f"store      {store}" in after.stdout and "at holdout=0.15" in after.stdout, after.stdout
    assert "episodes   1" in after.stdout.replace("episodes    ", "episodes   "), after.stdout
    shown = cli(bare, repo, "claude-code", "status")
    assert "--holdout 0.15" in shown.stdout, shown.stdout


def test_install_without_holdout_puts_every_reader_back_at_the_default(repo: Path, env: dict[str, str],
                                                                      store: Path) -> None:
    assert cli(env, repo, "claude-code", "install", "--store", str(store), "--holdout", "0.15").returncode == 0
    again = cli(env, repo, "claude-code", "install", "--store", str(store))
    assert again.returncode == 0, again.stderr
    assert "--holdout" not in installed_command(repo)
    # The hooks now run at the default; a store still read at 0.15 would tell the user a tuning no hook uses.
    assert "holdout: back at the default 0.04 (was 0.15)" in again.stdout, again.stdout
    shown = cli(env, repo, "stats", "--store", str(store))
    assert "at holdout=0.04" in shown.stdout, shown.stdout
    quiet = cli(env, repo, "claude-code", "install", "--store", str(store))
    assert "holdout:" not in quiet.stdout, quiet.stdout  # said once, when it changes


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
    # With the store named: an install without --store would move the hooks to the default store.
    assert f"claude-code install --store {store} --holdout 0.15`" in shown.stdout.replace("\n" + " " * 11, " ")


def test_the_plugins_holdout_option_reaches_its_hooks_engine(tmp_path: Path, repo: Path) -> None:
    (tmp_path / "run").mkdir(mode=0o700)
    store = tmp_path / "plugin.db"
    env = {"HOME": str(tmp_path / "home"), "PATH": BARE_PATH, "CLAUDE_PLUGIN_ROOT": str(ROOT / "plugins" / "lamar"),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "CLAUDE_PLUGIN_OPTION_PYTHON": sys.executable,
           "CLAUDE_PLUGIN_OPTION_STORE": str(store), "XDG_RUNTIME_DIR": str(tmp_path / "run"),
           "LAMAR_HOOK_IDLE": "20", "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}

    def launch(holdout: str, prompt: str) -> None:
        event = json.dumps(payload("UserPromptSubmit", "s1", repo, prompt=prompt))
        done = subprocess.run(["/bin/sh", "-c", '"${CLAUDE_PLUGIN_ROOT}/scripts/lamar-plugin" hook'], input=event,
                              env={**env, "CLAUDE_PLUGIN_OPTION_HOLDOUT": holdout}, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr

    launch("0.15", "the tests fail")
    launch("2", "the tests fail again")  # an option no engine takes: its own daemon refuses it, and fails open
    log = (tmp_path / "plugin.db.claude-code.log").read_text()
    assert log.count("holdout must be in [0, 1)") == 1, log
    with Lamar(str(store)) as lam:
        assert lam.stats()["episodes"] == 1
