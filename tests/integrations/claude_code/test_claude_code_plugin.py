"""The plugin as Claude Code installs it: validated, installed and run by the real `claude` binary, no model needed.

The binary comes with claude-agent-sdk; a local stand-in for the Messages API lets `claude -p`
fire the plugin's real hooks, so the store is created by the plugin itself on first use.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Lamar
from lamar_claude_code.settings import plugin_hooks

from .conftest import BARE_PATH, ROOT, Hook, payload
from .fake_anthropic import serve
from .test_claude_code_real_cli import CLAUDE

PLUGIN = ROOT / "plugins" / "lamar"
LAUNCHER = '"${CLAUDE_PLUGIN_ROOT}/scripts/lamar-plugin" hook'


def _claude(env: dict[str, str], *args: str, cwd: Path | None = None, stdin: str | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(CLAUDE), *args], env=env, cwd=cwd, input=stdin, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_manifests_pass_claude_plugin_validate_strict(claude_env: dict[str, str]) -> None:
    for target in (PLUGIN, ROOT):
        done = _claude(claude_env, "plugin", "validate", "--strict", "--json", str(target))
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads(done.stdout)
        assert report["success"] and not report["manifest"]["errors"] and not report["manifest"]["warnings"]
        # The advice a user sees under the verdict: a README with no line that installs the plugin.
        assert not report.get("advice"), report["advice"]
    provides = json.loads(_claude(claude_env, "plugin", "validate", "--json", str(PLUGIN)).stdout)["provides"]
    assert {h["event"] for h in provides["hooks"]} == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop",
                                                        "SessionEnd"}
    assert [s["name"] for s in provides["mcpServers"]] == ["lamar"]
    assert provides["commands"]


def test_the_plugin_runs_the_installed_hooks_through_its_launcher() -> None:
    plugin = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())
    assert plugin["hooks"] == plugin_hooks(LAUNCHER)
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["name"] == "lamar" and market["plugins"][0]["source"] == "./plugins/lamar"
    assert set(manifest["userConfig"]) == {"python", "store", "holdout"}


def _launch(event: dict[str, object], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["/bin/sh", "-c", LAUNCHER], input=json.dumps(event).encode(), env=env,
                          capture_output=True, timeout=120, check=False)


def test_without_a_python_the_hook_exits_0_and_says_what_to_set(tmp_path: Path, repo: Path, market: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "PATH": BARE_PATH, "CLAUDE_PLUGIN_ROOT": str(market / "plugins" / "lamar"),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    if subprocess.run(["/bin/sh", "-c", "python3 -c 'import lamar_claude_code'"], env=env,
                      capture_output=True, check=False).returncode == 0:
        pytest.skip("this machine's /usr/bin/python3 has Lamar installed: the fallback finds it")
    done = _launch(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"), env)
    assert done.returncode == 0 and done.stdout == b""
    log = (tmp_path / "data" / "lamar-plugin.log").read_text()
    assert "no Python with Lamar installed" in log and "python option" in log
    # Not every `claude` has `plugin configure` (some answer "unknown command 'configure'"); these work in every one.
    assert "/plugin configure lamar@lamar inside Claude Code" in log and "claude plugin configure" not in log
    assert "claude plugin install lamar@lamar --config python=PATH" in log


def test_the_hook_creates_its_store_on_first_use_readable_by_its_owner_only(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    (tmp_path / "run").mkdir(mode=0o700)
    env = {"HOME": str(home), "PATH": BARE_PATH, "CLAUDE_PLUGIN_ROOT": str(PLUGIN),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "CLAUDE_PLUGIN_OPTION_PYTHON": sys.executable,
           "XDG_RUNTIME_DIR": str(tmp_path / "run"), "LAMAR_HOOK_IDLE": "20",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    for event in (payload("SessionStart", "s1", repo, source="startup"),
                  payload("UserPromptSubmit", "s1", repo, prompt="add a version file"),
                  payload("Stop", "s1", repo, stop_hook_active=False),
                  payload("SessionEnd", "s1", repo, reason="other")):
        done = _launch(event, env)
        assert done.returncode == 0, done.stderr
    store = home / ".local" / "share" / "lamar" / "experience.db"
    with Lamar(str(store)) as lam:
        assert lam.stats()["episodes"] == 1 and lam.stats()["reports"] == 1
    written = [p for p in store.parent.iterdir() if p.is_file()]
    assert store in written and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in written), \
        {p.name: oct(p.stat().st_mode) for p in written}
    assert stat.S_IMODE(store.parent.stat().st_mode) == 0o700

    chosen = tmp_path / "chosen.db"
    done = _launch(payload("UserPromptSubmit", "s2", repo, prompt="why?"),
                   {**env, "CLAUDE_PLUGIN_OPTION_STORE": str(chosen)})
    assert done.returncode == 0 and chosen.exists()  # the store option wins over the data folder


def _trust(env: dict[str, str], folder: Path) -> None:
    """Record `folder` as trusted in Claude Code's user file, as accepting its trust dialog does."""
    settings = Path(env["HOME"]) / ".claude.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data.setdefault("projects", {}).setdefault(str(folder), {})["hasTrustDialogAccepted"] = True
    settings.write_text(json.dumps(data))


def test_claude_installs_the_plugin_and_its_hooks_learn_with_no_store_beforehand(
        claude_env: dict[str, str], repo: Path) -> None:
    assert _claude(claude_env, "plugin", "marketplace", "add", str(ROOT)).returncode == 0
    installed = _claude(claude_env, "plugin", "install", "lamar@lamar", "--config", f"python={sys.executable}")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # Claude Code checks a folder's MCP servers only once the folder is trusted (the dialog a first
    # `claude` there asks), else lists them "Not checked (folder not trusted)".
    _trust(claude_env, repo)
    servers = _claude(claude_env, "mcp", "list", cwd=repo)  # starts each server for a health check
    assert "plugin:lamar:lamar" in servers.stdout and "Connected" in servers.stdout, servers.stdout + servers.stderr

    store = Path(claude_env["HOME"]) / ".local" / "share" / "lamar" / "experience.db"
    server, url = serve(str(repo))
    try:
        done = _claude({**claude_env, "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url},
                       "-p", "please create version.py with the version number", "--permission-mode", "acceptEdits",
                       "--output-format", "json", cwd=repo)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr
    assert (repo / "version.py").exists()
    session = json.loads(done.stdout)["session_id"]
    state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    (record,) = [r for r in state["episodes"].values() if r["session"] == session]
    assert record["files"] == ["version.py"] and record["signal"] == "accepted"
    with Lamar(str(store)) as lam:
        assert lam.stats()["episodes"] == 1 and lam.stats()["reports"] == 1

    status = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status"], cwd=repo,
                            env={**os.environ, **claude_env, "PATH": os.environ["PATH"]}, capture_output=True,
                            text=True, timeout=120, check=False)
    assert "plugin lamar@lamar (enabled)" in status.stdout, status.stdout + status.stderr
    assert f"runs without your PATH (python {sys.executable}, store {store})" in status.stdout


def test_without_home_or_a_data_folder_the_hook_runs_and_keeps_nothing_in_tmp(tmp_path: Path, repo: Path) -> None:
    # The launcher used /tmp/.lamar then: a folder anyone can write, whose `python` file names the
    # interpreter the next hook runs. Now it remembers nothing, says so on stderr once, and the turn goes on.
    shared = Path("/tmp/.lamar")
    before = sorted((p.name, p.stat().st_mtime_ns) for p in shared.iterdir()) if shared.is_dir() else None
    (tmp_path / "run").mkdir(mode=0o700)
    store = tmp_path / "chosen.db"
    env = {"PATH": BARE_PATH, "CLAUDE_PLUGIN_ROOT": str(PLUGIN), "CLAUDE_PLUGIN_OPTION_PYTHON": sys.executable,
           "CLAUDE_PLUGIN_OPTION_STORE": str(store), "XDG_RUNTIME_DIR": str(tmp_path / "run"),
           "LAMAR_HOOK_IDLE": "20", "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    for event in (payload("SessionStart", "s1", repo, source="startup"),
                  payload("UserPromptSubmit", "s1", repo, prompt="add a version file")):
        done = _launch(event, env)
        assert done.returncode == 0, done.stderr
        assert done.stderr.decode().splitlines() == [
            ("lamar plugin: neither CLAUDE_PLUGIN_DATA nor HOME is set, so nothing is remembered or logged (a "
             "shared folder such as /tmp is never used): set HOME")]
    with Lamar(str(store)) as lam:
        assert lam.stats()["episodes"] == 1  # the hook itself ran
    assert (sorted((p.name, p.stat().st_mtime_ns) for p in shared.iterdir()) if shared.is_dir() else None) == before

    done = _launch(payload("UserPromptSubmit", "s1", repo, prompt="again"),  # no interpreter: still exit 0
                   {**env, "CLAUDE_PLUGIN_OPTION_PYTHON": str(tmp_path / "missing")})
    assert done.returncode == 0 and b"no Python with Lamar installed" in done.stderr


def test_the_status_command_runs_with_the_options_claude_code_writes_into_it(tmp_path: Path, repo: Path) -> None:
    """/lamar:status failed with "no Python with Lamar installed" after the documented install: Claude Code
    (2.1.197 and 2.1.337) gives a command's shell neither CLAUDE_PLUGIN_DATA nor CLAUDE_PLUGIN_OPTION_*,
    only the text substitutions, and leaves an option that was never set as its literal `${user_config.KEY}`."""
    text = (PLUGIN / "commands" / "status.md").read_text()
    command = text.split("!`", 1)[1].split("`\n", 1)[0]
    chosen = tmp_path / "chosen.db"
    bin_dir = tmp_path / "bin"  # a PATH with no python3 on it: only the python option can find Lamar
    bin_dir.mkdir()
    env = {"HOME": str(tmp_path / "home"), "PATH": str(bin_dir), "XDG_RUNTIME_DIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    for store_option, shown in (("${user_config.store}", tmp_path / "home" / ".local" / "share" / "lamar" /
                                 "experience.db"), (str(chosen), chosen)):
        as_run = (command.replace("${CLAUDE_PLUGIN_ROOT}", str(PLUGIN))
                  .replace("${user_config.python}", sys.executable)
                  .replace("${user_config.store}", store_option)
                  .replace("${CLAUDE_PLUGIN_DATA}", str(tmp_path / "data")))
        done = subprocess.run(["/bin/sh", "-c", as_run], cwd=repo, env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        assert f"store: {shown} (missing)" in done.stdout.splitlines(), done.stdout  # the option's, or the default


def test_a_python_option_never_set_is_unset_for_the_server_too(tmp_path: Path, repo: Path) -> None:
    """.mcp.json hands the server `${user_config.python}` as written when the option was never set; the
    launcher took it for an interpreter and failed, where the python3 on PATH could run Lamar."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    env = {"HOME": str(tmp_path / "home"), "PATH": f"{bin_dir}:{BARE_PATH}", "XDG_RUNTIME_DIR": str(tmp_path),
           "CLAUDE_PLUGIN_OPTION_PYTHON": "${user_config.python}", "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    done = subprocess.run([str(PLUGIN / "scripts" / "lamar-plugin"), "check"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("python "), done.stdout


def test_the_plugins_own_command_is_no_episode_and_settles_nothing(hook: Hook, repo: Path) -> None:
    """Claude Code hands `/lamar:status` to UserPromptSubmit as the prompt "/lamar:status": the hooks stored
    it as an episode (lessons injected into a status summary, then reported accepted) and read it as the
    next prompt of the turn before, accepting that turn."""
    first = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail with KeyError"))
    assert first.returncode == 0, first.stderr
    episode = hook.state()["sessions"]["s1"]["episode"]
    status = hook(payload("UserPromptSubmit", "s1", repo, prompt="/lamar:status"))
    assert status.returncode == 0 and status.stdout == b"", status.stderr
    state = hook.state()
    assert list(state["episodes"]) == [episode] and state["sessions"]["s1"]["episode"] == episode
    assert state["episodes"][episode]["signal"] is None  # still waiting for a prompt that speaks for it
    with Lamar(str(hook.store)) as lam:
        assert lam.stats()["episodes"] == 1


def _python_without_lamar(tmp_path: Path) -> Path:
    """A folder whose python3 and python cannot import Lamar, as a system Python without it: this
    interpreter with neither its site-packages (-S) nor PYTHONPATH (-E)."""
    bin_dir = tmp_path / "bin-without-lamar"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -E -S "$@"\n')
    wrapper.chmod(0o755)
    (bin_dir / "python").symlink_to(wrapper)
    return bin_dir


@pytest.mark.parametrize("option", ["unset", "missing", "without lamar"])
def test_while_lamar_cannot_run_each_session_start_tells_the_user(tmp_path: Path, repo: Path, option: str,
                                                                  market: Path) -> None:
    """Every hook exited 0 with only a line in the plugin's log, so a user whose python option was
    unset or wrong believed Lamar was learning. Each session's start now says so, as JSON whose
    systemMessage Claude Code shows the user; no other event says anything."""
    bin_dir = _python_without_lamar(tmp_path)
    data = tmp_path / "data"
    env = {"HOME": str(tmp_path / "home"), "PATH": f"{bin_dir}:{BARE_PATH}",
           "CLAUDE_PLUGIN_ROOT": str(market / "plugins" / "lamar"),
           "CLAUDE_PLUGIN_DATA": str(data)}
    named = {"unset": "", "missing": str(tmp_path / "no-such-python"), "without lamar": str(bin_dir / "python3")}
    if named[option]:
        env["CLAUDE_PLUGIN_OPTION_PYTHON"] = named[option]
    why = {"unset": "the python option is unset and no python3 on Claude Code's PATH can import Lamar",
           "missing": f"the python option names {named['missing']}, which is not an executable file",
           "without lamar": f"{bin_dir / 'python3'} cannot import Lamar"}[option]
    for source in ("startup", "resume", "clear"):
        for dumps in (json.dumps, lambda v: json.dumps(v, separators=(",", ":"))):  # Claude Code sends the latter
            event = payload("SessionStart", "s1", repo, source=source)
            done = subprocess.run(["/bin/sh", "-c", LAUNCHER], input=dumps(event).encode(), env=env,
                                  capture_output=True, timeout=120, check=False)
            assert done.returncode == 0 and done.stderr == b"", done.stderr
            (message,) = json.loads(done.stdout).values()  # the systemMessage alone: nothing for the model
            assert message.startswith(f"Lamar is off, so no lessons are recalled and nothing is learned: {why}. ")
            assert "/plugin configure lamar@lamar" in message and str(data / "lamar-plugin.log") in message
    quiet = [payload("SessionStart", "s1", repo, source="compact"),  # a compaction starts no session
             payload("UserPromptSubmit", "s1", repo, prompt='say "hook_event_name": "SessionStart"'),
             payload("PostToolUse", "s1", repo, tool_name="Write", tool_input={"file_path": str(repo / "a.py")},
                     tool_response={"success": True}),
             payload("Stop", "s1", repo, stop_hook_active=False), payload("SessionEnd", "s1", repo, reason="other")]
    for event in quiet:
        done = _launch(event, env)
        assert done.returncode == 0 and done.stdout == b"" and done.stderr == b"", (event, done)
    assert len((data / "lamar-plugin.log").read_text().splitlines()) == 6 + len(quiet)
    assert not (data / "python").exists()  # nothing remembered that cannot run

    (tmp_path / "run").mkdir(mode=0o700)
    fixed = {**env, "CLAUDE_PLUGIN_OPTION_PYTHON": sys.executable, "XDG_RUNTIME_DIR": str(tmp_path / "run"),
             "LAMAR_HOOK_IDLE": "20", "CLAUDE_PLUGIN_OPTION_STORE": str(tmp_path / "chosen.db"),
             "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}
    done = _launch(payload("SessionStart", "s2", repo, source="startup"), fixed)
    assert done.returncode == 0 and b"systemMessage" not in done.stdout, done.stdout + done.stderr


def test_claude_shows_the_notice_to_the_user_and_never_to_the_model(
        claude_env: dict[str, str], repo: Path, tmp_path: Path, market: Path) -> None:
    env = {**claude_env, "PATH": f"{_python_without_lamar(tmp_path)}:{BARE_PATH}"}
    assert _claude(env, "plugin", "marketplace", "add", str(market)).returncode == 0
    installed = _claude(env, "plugin", "install", "lamar@lamar")  # the python option left unset
    assert installed.returncode == 0, installed.stdout + installed.stderr
    _trust(env, repo)
    server, url = serve(str(repo))
    try:
        done = _claude({**env, "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url},
                       "-p", "hello", "--output-format", "json", cwd=repo)
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr  # the turn went on
    session = json.loads(done.stdout)["session_id"]
    transcript = next((Path(env["HOME"]) / ".claude" / "projects").glob(f"*/{session}.jsonl"))
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    # what the interactive UI shows as "SessionStart:startup says: ..."
    shown = [a for a in (line.get("attachment") or {} for line in lines) if a.get("type") == "hook_system_message"]
    assert [(a["hookName"], a["content"].split(":")[0]) for a in shown] == [
        ("SessionStart:startup", "Lamar is off, so no lessons are recalled and nothing is learned")]
    assert server.bodies and not any(b"Lamar is off" in body for body in server.bodies)
