"""`lamar claude-code install|uninstall|status` on settings files that already hold other hooks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lamar_claude_code.settings import EDIT_MATCHER, plugin_hooks

from .conftest import ROOT, payload

THEIRS = {
    "model": "claude-sonnet-5",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "./audit-prompt.sh", "timeout": 5}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}


def lamar(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def test_install_merges_is_idempotent_and_uninstall_restores(repo: Path, env: dict[str, str],
                                                           tmp_path: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(THEIRS, indent=2))
    store = tmp_path / "lessons.db"
    sub = repo / "src"
    sub.mkdir()

    first = lamar(env, sub, "install", "--store", str(store))  # from a sub-folder: the repository's settings
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("added") == 5 and f"store: {store}" in first.stdout
    assert store.exists()  # created, so the first hook finds it
    merged = json.loads(settings.read_text())
    assert {k: v for k, v in merged.items() if k != "hooks"} == {k: v for k, v in THEIRS.items() if k != "hooks"}
    command = merged["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]
    assert command.endswith(f"claude-code hook --store {store}")
    for event, groups in THEIRS["hooks"].items():
        assert merged["hooks"][event][: len(groups)] == groups  # theirs first, untouched
    assert merged["hooks"]["PostToolUse"][-1]["matcher"] == EDIT_MATCHER
    assert set(merged["hooks"]) == set(THEIRS["hooks"]) | {"SessionStart", "Stop", "SessionEnd"}

    before = settings.read_bytes()
    second = lamar(env, repo, "install", "--store", str(store))
    assert second.returncode == 0 and "nothing to change" in second.stdout
    assert settings.read_bytes() == before  # not even rewritten

    moved = lamar(env, repo, "install", "--store", str(tmp_path / "other.db"))
    assert moved.stdout.count("updated") == 5
    after = json.loads(settings.read_text())
    assert sum("claude-code hook" in h["command"] for g in after["hooks"]["UserPromptSubmit"]
               for h in g["hooks"]) == 1  # replaced, not duplicated

    status = lamar(env, repo, "status", "--store", str(tmp_path / "other.db"))
    assert "project settings" in status.stdout and ": installed" in status.stdout
    assert "user settings" in status.stdout and "not installed" in status.stdout

    gone = lamar(env, repo, "uninstall")
    assert gone.returncode == 0 and gone.stdout.count("removed") == 5
    assert json.loads(settings.read_text()) == THEIRS
    again = lamar(env, repo, "uninstall")
    assert "no Lamar hooks to remove" in again.stdout


def test_user_scope_and_a_handler_shared_with_another_hook(repo: Path, env: dict[str, str]) -> None:
    user = Path(env["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir(parents=True)
    shared = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"},
                                            {"type": "command", "command": "lamar claude-code hook"}]}]}}
    user.write_text(json.dumps(shared))
    done = lamar(env, repo, "install", "--user")
    assert done.returncode == 0 and "updated Stop hook" in done.stdout
    assert not (repo / ".claude" / "settings.json").exists()
    lamar(env, repo, "uninstall", "--user")
    assert json.loads(user.read_text()) == {"hooks": {"Stop": [{"hooks": [{"type": "command",
                                                                            "command": "say done"}]}]}}


def test_a_broken_settings_file_is_left_untouched(repo: Path, env: dict[str, str]) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ')
    done = lamar(env, repo, "install")
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert settings.read_text() == '{"hooks": '


def test_the_plugin_runs_the_same_hooks() -> None:
    plugin = json.loads((ROOT / "plugins" / "lamar" / "hooks" / "hooks.json").read_text())
    assert plugin["hooks"] == plugin_hooks("lamar claude-code hook")
    manifest = json.loads((ROOT / "plugins" / "lamar" / ".claude-plugin" / "plugin.json").read_text())
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    assert manifest["name"] == "lamar" and market["plugins"][0]["source"] == "./plugins/lamar"


def test_status_shows_the_last_event_and_failures(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    lamar(env, repo, "install", "--store", str(store))
    hook = [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(store)]
    subprocess.run(hook, input=json.dumps(payload("UserPromptSubmit", "s9", repo, prompt="why?")), text=True,
                   env=env, check=True, timeout=60)
    subprocess.run(hook, input="not json", text=True, env=env, check=True, timeout=60)
    status = lamar(env, repo, "status", "--store", str(store))
    assert "last event: UserPromptSubmit" in status.stdout and "session s9" in status.stdout
    assert "event: JSONDecodeError" in status.stdout
