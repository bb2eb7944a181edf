"""The plugin read in place from a clone of Lamar (`claude --plugin-dir ~/lamar/plugins/lamar`, or a marketplace
added from the clone) learns with no option set: its launcher finds the clone's own virtual environment."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from lamar import Lamar

from .conftest import BARE_PATH, ROOT, git, payload
from .fake_anthropic import serve
from .test_claude_code_real_cli import CLAUDE


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A clone as docs/claude-code.md installs it: the plugin under plugins/lamar, Lamar in its .venv.

    The .venv is a real virtual environment whose site-packages points at this source tree, as
    `pip install -e .` makes it; no PYTHONPATH is set, so no other Python on PATH imports Lamar."""
    root = tmp_path / "lamar"
    shutil.copytree(ROOT / "plugins", root / "plugins")
    (root / "integrations" / "lamar_claude_code").mkdir(parents=True)
    shutil.copy(ROOT / "integrations" / "lamar_claude_code" / "quick.py", root / "integrations" / "lamar_claude_code")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True, timeout=120)
    version = sysconfig.get_python_version()
    site = root / ".venv" / "lib" / f"python{version}" / "site-packages"
    (site / "_lamar_editable.pth").write_text(f"{ROOT}\n{ROOT / 'integrations'}\n")
    return root


def _env(tmp_path: Path, clone: Path) -> dict[str, str]:
    (tmp_path / "run").mkdir(mode=0o700, exist_ok=True)
    return {"HOME": str(tmp_path / "home"), "PATH": BARE_PATH, "XDG_RUNTIME_DIR": str(tmp_path / "run"),
            "LAMAR_HOOK_IDLE": "20", "CLAUDE_PLUGIN_ROOT": str(clone / "plugins" / "lamar"),
            "CLAUDE_PLUGIN_DATA": str(tmp_path / "home" / ".claude" / "plugins" / "data" / "lamar-inline")}


def test_the_launcher_runs_the_clones_own_environment_with_no_option(tmp_path: Path, clone: Path,
                                                                    repo: Path) -> None:
    env = _env(tmp_path, clone)
    if subprocess.run(["/bin/sh", "-c", "python3 -c 'import lamar_claude_code'"], env=env, cwd=tmp_path,
                      capture_output=True, check=False).returncode == 0:
        pytest.skip("this machine's /usr/bin/python3 has Lamar installed: the fallback finds it")
    launcher = '"${CLAUDE_PLUGIN_ROOT}/scripts/lamar-plugin" hook'
    for event in (payload("SessionStart", "s1", repo, source="startup"),
                  payload("UserPromptSubmit", "s1", repo, prompt="add a version file")):
        done = subprocess.run(["/bin/sh", "-c", launcher], input=json.dumps(event), env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0 and "Lamar is off" not in done.stdout, (done.stdout, done.stderr)
    store = tmp_path / "home" / ".local" / "share" / "lamar" / "experience.db"
    state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    assert state["last"]["event"] == "UserPromptSubmit", state
    checked = subprocess.run([str(clone / "plugins" / "lamar" / "scripts" / "lamar-plugin"), "check"], env=env,
                             capture_output=True, text=True, timeout=120, check=False)
    assert checked.stdout.startswith(f"python {clone / '.venv' / 'bin' / 'python'}, store {store}"), checked
    # A plugin loaded with --plugin-dir is in no settings file, so `lamar stats` reads the default store: its
    # "no store at ~/.lamar/experience.json" must name the store the plugin's hooks made.
    stats = subprocess.run([str(clone / ".venv" / "bin" / "python"), "-m", "lamar.cli", "stats"], cwd=repo,
                           env={"HOME": env["HOME"], "PATH": BARE_PATH}, capture_output=True, text=True,
                           timeout=120, check=False)
    assert f"the Claude Code plugin's hooks write to {store}: pass --store {store}" in stats.stderr, stats.stderr


def test_claude_with_plugin_dir_learns_with_no_step_after_the_clones_install(tmp_path: Path, clone: Path,
                                                                           repo: Path) -> None:
    env = _env(tmp_path, clone)
    env.pop("CLAUDE_PLUGIN_ROOT"), env.pop("CLAUDE_PLUGIN_DATA")  # Claude Code sets them for the plugin
    store = tmp_path / "home" / ".local" / "share" / "lamar" / "experience.db"
    server, url = serve(str(repo))
    try:
        done = subprocess.run([str(CLAUDE), "-p", "please create version.py with the version number",
                               "--plugin-dir", str(clone / "plugins" / "lamar"), "--permission-mode", "acceptEdits",
                               "--output-format", "json"], cwd=repo, capture_output=True, text=True, timeout=180,
                              check=False,
                              env={**env, "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url,
                                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"})
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)["session_id"]
    state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    assert state["last"]["session"] == session and state["last"]["event"] == "SessionEnd", state["last"]
    with Lamar(str(store)) as lam:
        assert lam.stats()["episodes"] == 1 and lam.stats()["reports"] == 1  # the store the hooks made
    # Claude Code hands a --plugin-dir plugin's MCP server the literal ${CLAUDE_PLUGIN_DATA} of .mcp.json: taken as
    # a folder, the launcher made it in the project, with its log and the interpreter it remembered.
    assert git(repo, "status", "--porcelain", "--untracked-files=all").splitlines() == ["?? version.py"]


def test_a_data_folder_left_unexpanded_or_relative_is_not_made_in_the_project(tmp_path: Path, repo: Path,
                                                                               market: Path) -> None:
    for data in ("${CLAUDE_PLUGIN_DATA}", "data"):
        env = {"HOME": str(tmp_path / "home"), "PATH": BARE_PATH, "CLAUDE_PLUGIN_DATA": data,
               "CLAUDE_PLUGIN_ROOT": str(market / "plugins" / "lamar")}
        done = subprocess.run(["/bin/sh", "-c", '"${CLAUDE_PLUGIN_ROOT}/scripts/lamar-plugin" mcp'], cwd=repo,
                              env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 1, done  # no Python with Lamar here: said, and logged in the home folder
        assert git(repo, "status", "--porcelain", "--untracked-files=all") == "", data
        assert "no Python with Lamar installed" in (tmp_path / "home" / ".lamar" / "lamar-plugin.log").read_text()


def test_a_clone_with_no_environment_yet_is_named_with_the_install_that_makes_it(tmp_path: Path, clone: Path,
                                                                                 repo: Path) -> None:
    shutil.rmtree(clone / ".venv")
    env = _env(tmp_path, clone)
    if subprocess.run(["/bin/sh", "-c", "python3 -c 'import lamar_claude_code'"], env=env, cwd=tmp_path,
                      capture_output=True, check=False).returncode == 0:
        pytest.skip("this machine's /usr/bin/python3 has Lamar installed: the fallback finds it")
    event = payload("SessionStart", "s1", repo, source="startup")
    done = subprocess.run(["/bin/sh", "-c", '"${CLAUDE_PLUGIN_ROOT}/scripts/lamar-plugin" hook'],
                          input=json.dumps(event), env=env, capture_output=True, text=True, timeout=120, check=False)
    shown = json.loads(done.stdout)["systemMessage"]
    # Loaded with --plugin-dir, no /plugin command knows the plugin: the fix is the clone's own install.
    assert f"(cd {clone} && python3 -m venv .venv && .venv/bin/pip install -e .)" in shown, shown
    assert "lamar@lamar" not in shown, shown
