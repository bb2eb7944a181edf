"""`lamar claude-code install|uninstall|status` on settings files that already hold other hooks."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, LamarError
from lamar_claude_code.installed_plugin import installed_plugins
from lamar_claude_code.settings import STRIPPED_PATH, TOOL_MATCHER, installed

from .conftest import git, payload

BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark

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
    # This environment's `lamar` on PATH, as in an activated one: its advice then names a bare `lamar`.
    env = {**env, "PATH": os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])}
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

    first = lamar(env, sub, "install", "--project", "--store", str(store))  # from a sub-folder: the repository's
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("added") == 5 and f"store: {store}" in first.stdout
    assert store.exists()  # created, so the first hook finds it
    merged = json.loads(settings.read_text())
    assert {k: v for k, v in merged.items() if k != "hooks"} == {k: v for k, v in THEIRS.items() if k != "hooks"}
    command = merged["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]
    assert command.endswith(f"lamar_claude_code/quick.py --store {store} || exit 1")  # 1, never 2: see FAIL_OPEN
    for event, groups in THEIRS["hooks"].items():
        assert merged["hooks"][event][: len(groups)] == groups  # theirs first, untouched
    assert merged["hooks"]["PostToolUse"][-1]["matcher"] == TOOL_MATCHER
    assert set(merged["hooks"]) == set(THEIRS["hooks"]) | {"SessionStart", "Stop", "SessionEnd"}

    before = settings.read_bytes()
    second = lamar(env, repo, "install", "--project", "--store", str(store))
    assert second.returncode == 0 and "nothing to change" in second.stdout
    assert settings.read_bytes() == before  # not even rewritten

    moved = lamar(env, repo, "install", "--project", "--store", str(tmp_path / "other.db"))
    assert moved.stdout.count("updated") == 5
    after = json.loads(settings.read_text())
    assert sum("quick.py" in h["command"] for g in after["hooks"]["UserPromptSubmit"]
               for h in g["hooks"]) == 1  # replaced, not duplicated

    status = lamar(env, repo, "status", "--store", str(tmp_path / "other.db"))
    assert "project settings" in status.stdout and ": installed" in status.stdout
    assert "user settings" in status.stdout and "not installed" in status.stdout

    gone = lamar(env, repo, "uninstall", "--project")
    assert gone.returncode == 0 and gone.stdout.count("removed") == 5
    assert json.loads(settings.read_text()) == THEIRS
    again = lamar(env, repo, "uninstall", "--project")
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
    done = lamar(env, repo, "install", "--project")
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert settings.read_text() == '{"hooks": '
    status = lamar(env, repo, "status")
    assert f"project settings {settings}: cannot be read: {settings} is not valid JSON" in status.stdout
    assert settings.read_text() == '{"hooks": '


def test_a_settings_file_with_a_byte_order_mark_is_read_and_keeps_it(repo: Path, env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    # Claude Code's CLI skips a UTF-8 BOM (PowerShell 5.1 and some editors write one), so Lamar does too.
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(BOM + json.dumps(THEIRS, indent=2).encode())
    done = lamar(env, repo, "install", "--project")
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes().startswith(BOM) and len(installed(settings)) == 5
    assert json.loads(settings.read_bytes()[len(BOM):])["model"] == THEIRS["model"]
    status = lamar(env, repo, "status")
    assert f"project settings {settings}: installed" in status.stdout
    assert lamar(env, repo, "uninstall", "--project").stdout.count("removed") == 5
    after = settings.read_bytes()
    assert after.startswith(BOM) and not after[len(BOM):].startswith(BOM) and json.loads(after[len(BOM):]) == THEIRS

    claude = tmp_path / "claude"  # the plugin's status reads the same files
    copy = tmp_path / "plugin-copy"
    copy.mkdir()
    (claude / "plugins").mkdir(parents=True)
    (claude / "plugins" / "installed_plugins.json").write_text(
        json.dumps({"plugins": {"lamar@lamar": [{"installPath": str(copy)}]}}))
    (claude / "settings.json").write_bytes(BOM + b'{"enabledPlugins": {"lamar@lamar": true}}')
    assert [plugin.enabled for plugin in installed_plugins(claude)] == [True]


def test_install_and_uninstall_keep_the_settings_files_permissions(repo: Path, env: dict[str, str]) -> None:
    team = repo / ".claude" / "settings.json"
    team.parent.mkdir()
    team.write_text(json.dumps(THEIRS))
    team.chmod(0o664)  # a team's file, group-writable on purpose
    for action in ("install", "uninstall"):
        done = lamar(env, repo, action, "--project")
        assert done.returncode == 0, done.stderr
        assert oct(stat.S_IMODE(team.stat().st_mode)) == oct(0o664), action
    personal = repo / ".claude" / "settings.local.json"  # a new file: what the umask gives any new file
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60, check=False, umask=0o022)
    assert done.returncode == 0, done.stderr
    assert oct(stat.S_IMODE(personal.stat().st_mode)) == oct(0o644)


def test_a_settings_file_marked_read_only_is_refused_and_left_alone(repo: Path, env: dict[str, str]) -> None:
    team = repo / ".claude" / "settings.json"
    team.parent.mkdir()
    team.write_text(json.dumps(THEIRS))
    team.chmod(0o444)  # marked read-only on purpose; root could still replace it
    before = team.read_bytes()
    done = lamar(env, repo, "install", "--project")
    assert done.returncode == 1 and f"{team} is read-only (mode 0444)" in done.stderr, done.stderr
    assert f"chmod u+w {team}" in done.stderr
    assert team.read_bytes() == before and oct(stat.S_IMODE(team.stat().st_mode)) == oct(0o444)
    team.chmod(0o644)
    assert lamar(env, repo, "install", "--project").returncode == 0 and len(installed(team)) == 5
    team.chmod(0o444)
    installed_bytes = team.read_bytes()
    gone = lamar(env, repo, "uninstall", "--project")
    assert gone.returncode == 1 and "is read-only" in gone.stderr and team.read_bytes() == installed_bytes


def test_a_settings_file_that_is_a_link_stays_a_link(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps(THEIRS))
    user = Path(env["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir(parents=True)
    user.symlink_to(dotfiles)
    assert lamar(env, repo, "install", "--user").returncode == 0
    assert user.is_symlink() and len(installed(dotfiles)) == 5
    assert lamar(env, repo, "uninstall", "--user").stdout.count("removed") == 5
    assert user.is_symlink() and json.loads(dotfiles.read_text()) == THEIRS



@pytest.mark.parametrize("written", [
    json.dumps(THEIRS, indent=4),  # an editor's four spaces, no final newline
    json.dumps(THEIRS, indent="\t") + "\n",
    (json.dumps(THEIRS, indent=2) + "\n").replace("\n", "\r\n"),  # saved on Windows
    json.dumps(THEIRS, separators=(",", ":")),  # one line, as jq -c writes it
])
def test_uninstall_leaves_the_team_file_byte_for_byte_as_it_was(repo: Path, env: dict[str, str],
                                                                  written: str) -> None:
    # A committed .claude/settings.json laid out otherwise than two spaces and a newline came back from
    # install and uninstall rewritten whole: a diff of every line in git for a file Lamar left as it found it.
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(written.encode())
    assert lamar(env, repo, "install", "--project").stdout.count("added") == 5
    merged, lines = settings.read_bytes(), written.encode().splitlines(keepends=True)
    assert merged.splitlines(keepends=True)[:2] == lines[:2] or (len(lines) == 1 and b"\n" not in merged)
    assert merged.endswith(b"}") == written.endswith("}") and len(installed(settings)) == 5
    assert lamar(env, repo, "uninstall", "--project").stdout.count("removed") == 5
    assert settings.read_bytes() == written.encode()


def test_an_empty_settings_object_gets_two_spaces(repo: Path, env: dict[str, str]) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{}\n")  # what uninstall leaves of a tracked file that held only Lamar's hooks
    lamar(env, repo, "install", "--project")
    assert settings.read_text().startswith('{\n  "hooks": {\n    "SessionStart": [\n') and installed(settings)


def test_a_settings_file_holding_an_escaped_lone_surrogate_keeps_it(repo: Path, env: dict[str, str]) -> None:
    # Valid JSON that UTF-8 cannot hold once unescaped: written back escaped, nothing else changed.
    settings = repo / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"env": {"NOTE": "half an emoji \\ud83d", "CITY": "Z\u00fcrich"}}')
    done = lamar(env, repo, "install", "--project")
    assert done.returncode == 0, done.stderr
    written = json.loads(settings.read_text(encoding="utf-8"))
    assert written["env"] == {"NOTE": "half an emoji \ud83d", "CITY": "Z\u00fcrich"} and installed(settings)


def test_install_defaults_to_the_personal_file_and_leaves_the_team_file_alone(repo: Path, env: dict[str, str],
                                                                              tmp_path: Path) -> None:
    team = repo / ".claude" / "settings.json"
    team.parent.mkdir()
    team.write_text(json.dumps(THEIRS, indent=2))
    git(repo, "add", ".claude/settings.json")
    git(repo, "commit", "-q", "-m", "team settings")
    before = team.read_bytes()

    done = lamar(env, repo, "install", "--store", str(tmp_path / "mine.db"))
    assert done.returncode == 0, done.stderr
    personal = repo / ".claude" / "settings.local.json"
    assert done.stdout.count(f"{personal}: added") == 5
    assert team.read_bytes() == before  # not a byte of the team's file changed
    assert str(tmp_path / "mine.db") in personal.read_text()
    assert git(repo, "status", "--porcelain") == ""  # the personal file is kept out of commits
    assert "/.claude/settings.local.json" in (repo / ".git" / "info" / "exclude").read_text()
    status = lamar(env, repo, "status", "--store", str(tmp_path / "mine.db"))
    assert f"local settings {personal}: installed" in status.stdout
    assert f"project settings {team}: not installed" in status.stdout
    assert lamar(env, repo, "uninstall").stdout.count("removed") == 5
    assert team.read_bytes() == before


def test_uninstall_removes_the_file_and_the_exclude_line_install_made(repo: Path, env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    # uninstall left `{}` in a .claude/settings.local.json that install had made, and the line install had
    # added to .git/info/exclude: the repository was not as install found it.
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes()
    assert lamar(env, repo, "install", "--store", str(tmp_path / "mine.db")).returncode == 0
    personal = repo / ".claude" / "settings.local.json"
    assert personal.exists() and exclude.read_bytes() != before
    undone = lamar(env, repo, "uninstall")
    assert undone.returncode == 0 and undone.stdout.count("removed") == 5, undone.stdout + undone.stderr
    assert f"{personal}: deleted it, as it held nothing but Lamar's hooks" in undone.stdout.splitlines()
    assert not personal.exists() and not personal.parent.exists()  # its folder too, left empty
    assert exclude.read_bytes() == before, exclude.read_text()
    assert f"{exclude}: no longer lists /.claude/settings.local.json" in undone.stdout
    assert git(repo, "status", "--porcelain") == ""
    # A file that holds more than Lamar's hooks stays, and so does the line that keeps it out of git.
    assert lamar(env, repo, "install", "--store", str(tmp_path / "mine.db")).returncode == 0
    personal.write_text(json.dumps({**json.loads(personal.read_text()), "model": "claude-sonnet-5"}))
    assert lamar(env, repo, "uninstall").returncode == 0
    assert json.loads(personal.read_text()) == {"model": "claude-sonnet-5"}
    assert "/.claude/settings.local.json" in exclude.read_text() and git(repo, "status", "--porcelain") == ""



def test_uninstall_removes_the_unmarked_exclude_line_of_an_older_install(repo: Path, env: dict[str, str],
                                                                         tmp_path: Path) -> None:
    """Installs before the marking comment wrote `/.claude/settings.local.json` alone; uninstall kept it for good.
    Only that exact shape goes: a line a user wrote otherwise stays."""
    from lamar_claude_code.settings import EXCLUDED_BY

    exclude = repo / ".git" / "info" / "exclude"
    mine = b"*.log\n.claude/settings.local.json\n/.claude/settings.local.json.bak\n"
    assert lamar(env, repo, "install", "--store", str(tmp_path / "mine.db")).returncode == 0
    ours = f"{EXCLUDED_BY}\n/.claude/settings.local.json\n".encode()
    before = exclude.read_bytes().replace(ours, b"")
    exclude.write_bytes(before + b"/.claude/settings.local.json\n" + mine)  # as an older install left it, then yours
    undone = lamar(env, repo, "uninstall")
    assert undone.returncode == 0 and f"{exclude}: no longer lists /.claude/settings.local.json" in undone.stdout
    assert exclude.read_bytes() == before + mine, exclude.read_text()
    # With no hooks of Lamar's removed, the same line is no evidence of an install: it may be yours, and stays.
    exclude.write_bytes(before + mine + b"/.claude/settings.local.json\n")
    again = lamar(env, repo, "uninstall")
    assert again.returncode == 0 and exclude.read_bytes() == before + mine + b"/.claude/settings.local.json\n"

def test_install_puts_its_exclude_line_on_a_line_of_its_own(repo: Path, env: dict[str, str]) -> None:
    # An exclude file edited by hand may end without a newline: the line appended ran into its last line.
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("*.log")
    assert lamar(env, repo, "install").returncode == 0
    assert {"*.log", "/.claude/settings.local.json"} <= set(exclude.read_text().splitlines()), exclude.read_text()
    (repo / "debug.log").write_text("x")
    assert git(repo, "status", "--porcelain") == ""


def test_uninstall_keeps_a_tracked_or_linked_settings_file_it_leaves_empty(repo: Path, env: dict[str, str],
                                                                           tmp_path: Path) -> None:
    # A committed team file deleted would be a deletion in the next commit; a link kept in a dotfiles folder
    # deleted would unlink it: both are left holding `{}`.
    team = repo / ".claude" / "settings.json"
    assert lamar(env, repo, "install", "--project").returncode == 0
    git(repo, "add", ".claude/settings.json")
    git(repo, "commit", "-q", "-m", "team hooks")
    assert lamar(env, repo, "uninstall", "--project").returncode == 0
    assert json.loads(team.read_text()) == {}
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    user = Path(env["HOME"]) / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.symlink_to(dotfiles)
    assert lamar(env, repo, "install", "--user").returncode == 0 and dotfiles.exists()
    assert lamar(env, repo, "uninstall", "--user").returncode == 0
    assert user.is_symlink() and json.loads(dotfiles.read_text()) == {}


def test_install_outside_git_refuses_unless_told_where(tmp_path: Path, env: dict[str, str]) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    store = tmp_path / "mine.db"
    refused = lamar(env, folder, "install", "--store", str(store))
    assert refused.returncode == 1 and "not inside a git repository" in refused.stderr
    assert "--user" in refused.stderr and "--dir" in refused.stderr
    assert not (folder / ".claude").exists() and not store.exists()  # nothing written, not even the store
    # Uninstall outside git is refused the same way, not told of a project "to install into".
    undone = lamar(env, folder, "uninstall")
    assert undone.returncode == 1 and "not inside a git repository" in undone.stderr, undone.stderr
    assert "install into" not in undone.stderr and "--user" in undone.stderr and "--dir" in undone.stderr
    there = lamar(env, folder, "install", "--dir", str(folder), "--store", str(store))
    assert there.returncode == 0, there.stderr
    assert len(installed(folder / ".claude" / "settings.local.json")) == 5


def test_status_shows_the_last_event_and_failures(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    hook = [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(store)]
    subprocess.run(hook, input=json.dumps(payload("UserPromptSubmit", "s9", repo, prompt="why?")), text=True,
                   env=env, check=True, timeout=60)
    subprocess.run(hook, input="not json", text=True, env=env, check=True, timeout=60)
    status = lamar(env, repo, "status", "--store", str(store))
    assert "last event: UserPromptSubmit" in status.stdout and "session s9" in status.stdout
    assert "event: JSONDecodeError" in status.stdout
    assert "readable by other users" not in status.stdout  # the hooks made it their user's only


def test_status_exits_4_when_an_entry_fails(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    # It printed FAILS and exited 0: a script or a check in CI took the hooks for working while Lamar was off.
    # Then it exited 1, as a usage error does: a script could not tell "Lamar is off" from a mistyped command.
    store = tmp_path / "lessons.db"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    healthy = lamar(env, repo, "status")
    assert healthy.returncode == 0 and "FAILS" not in healthy.stdout, healthy.stdout + healthy.stderr
    settings = repo / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    entry = data["hooks"]["Stop"][-1]["hooks"][0]
    entry["command"] = entry["command"].replace(sys.executable, str(tmp_path / "deleted-venv" / "bin" / "python"))
    settings.write_text(json.dumps(data))
    broken = lamar(env, repo, "status")
    assert broken.returncode == 4 and broken.stdout.count("FAILS") == 1, broken.stdout + broken.stderr
    assert broken.stderr == ""  # every line is still printed, to stdout as before
    from lamar.cli import EXIT_USAGE
    from lamar.cli.claude_code import EXIT_HOOKS_FAIL

    assert broken.returncode == EXIT_HOOKS_FAIL
    mistyped = lamar(env, repo, "status", "--quiet")
    assert mistyped.returncode == EXIT_USAGE == 1 and "FAILS" not in mistyped.stdout, mistyped.stderr


def test_status_names_a_store_others_can_read(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """A store made before Lamar made the hooks' store private keeps the umask's modes; status says so."""
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the build fails", "clean the cache"))
    store.chmod(0o644)
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0  # an existing store keeps its modes
    status = lamar(env, repo, "status", "--store", str(store))
    assert status.returncode == 0, status.stderr
    line = next(line for line in status.stdout.splitlines() if "readable by other users" in line)
    assert line.endswith(f"chmod 600 {store}"), line
    store.chmod(0o600)
    assert "readable by other users" not in lamar(env, repo, "status", "--store", str(store)).stdout


def test_status_counts_injected_characters_only_for_a_prompt(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """After a Stop, status said "0 characters injected", which read as a failed injection."""
    store = tmp_path / "lessons.db"
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first"))
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    hook = [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(store)]
    for event, extra in (("UserPromptSubmit", {"prompt": "the tests fail"}), ("Stop", {})):
        subprocess.run(hook, input=json.dumps(payload(event, "s9", repo, **extra)), text=True, env=env, check=True,
                       timeout=60)
        status = lamar(env, repo, "status", "--store", str(store)).stdout
        last = [line for line in status.splitlines() if line.startswith("last event: ")]
        assert len(last) == 1 and last[0].startswith(f"last event: {event} at "), last
        assert ("characters injected" in last[0]) == (event == "UserPromptSubmit"), last


def test_status_says_no_episode_rather_than_none(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """A session's start has no episode, and status printed "(session s8, episode None)", a Python value
    that read as a fault."""
    store = tmp_path / "lessons.db"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    hook = [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(store)]
    subprocess.run(hook, input=json.dumps(payload("SessionStart", "s8", repo, source="startup")), text=True, env=env,
                   check=True, timeout=60)
    status = lamar(env, repo, "status", "--store", str(store)).stdout
    (last,) = [line for line in status.splitlines() if line.startswith("last event: ")]
    assert last.endswith("(session s8, no episode)") and "None" not in last, last


def test_install_creates_a_json_store_too_so_the_first_prompt_finds_it(repo: Path, env: dict[str, str],
                                                                       tmp_path: Path) -> None:
    store = tmp_path / "lessons.json"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    assert store.exists() and oct(store.stat().st_mode & 0o777) == oct(0o600)
    hook = [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(store)]
    subprocess.run(hook, input=json.dumps(payload("UserPromptSubmit", "s1", repo, prompt="add a flag")), text=True,
                   env=env, check=True, timeout=60)
    assert not store.with_name(store.name + ".claude-code.log").exists()  # no "no store" failure logged
    with Lamar(str(store)) as lam:
        assert lam.stats()["episodes"] == 1


def test_install_over_an_empty_store_says_how_to_give_it_lessons(repo: Path, env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    """Hooks over a store with no lessons inject nothing, and install used to end without a word about it."""
    store = tmp_path / "lessons.db"
    first = lamar(env, repo, "install", "--store", str(store))
    assert first.returncode == 0, first.stderr
    hint = [line for line in first.stdout.splitlines() if line.startswith("next: ")]
    assert hint == [("next: the store holds no lessons yet, so no prompt gets any. "
                     f"`lamar import-rules --store {store}` "
                     "shows the rules of this repository's CLAUDE.md or AGENTS.md as lessons (add --apply to keep "
                     f"them); `lamar add --store {store} --precondition .. --action .. --scope project=shop` "
                     "writes one by hand for this project (without --scope, for every project)")]
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first"))
    again = lamar(env, repo, "install", "--store", str(store))
    assert again.returncode == 0 and "next: " not in again.stdout


def test_install_over_an_empty_store_names_the_store_beside_it_that_holds_lessons(
        repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """docs/rules.md fills the default experience.json; docs/claude-code.md then installs with
    `--store ~/.lamar/experience.db`, whose hint said only "no lessons yet"."""
    json_store = tmp_path / "experience.json"
    with Lamar(str(json_store)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first"))
    store = tmp_path / "experience.db"
    first = lamar(env, repo, "install", "--store", str(store))
    assert first.returncode == 0, first.stderr
    hint = next(line for line in first.stdout.splitlines() if line.startswith("next: "))
    assert hint.endswith(f"; {json_store} beside it holds lessons that the hooks do not read: "
                         f"`lamar import {json_store} --store {store}` copies them in"), hint
    copied = subprocess.run([sys.executable, "-m", "lamar.cli", "import", str(json_store), "--store", str(store)],
                            env=env, cwd=repo, capture_output=True, text=True, timeout=60, check=False)
    assert copied.returncode == 0, copied.stderr
    assert "next: " not in lamar(env, repo, "install", "--store", str(store)).stdout


def test_an_empty_store_elsewhere_names_the_usual_store_that_holds_lessons(repo: Path, env: dict[str, str],
                                                                          tmp_path: Path) -> None:
    """Hooks installed with the docs' `--store ~/.lamar/experience.db`, then the plugin (its store under
    ~/.local/share/lamar/): status said only "no lessons yet, import-rules", and the lessons and their
    evidence stayed behind unnamed."""
    usual = Path(env["HOME"]) / ".lamar" / "experience.db"
    usual.parent.mkdir()
    with Lamar(str(usual)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first"))
    store = Path(env["HOME"]) / ".local" / "share" / "lamar" / "experience.db"
    first = lamar(env, repo, "install", "--store", str(store))
    assert first.returncode == 0, first.stderr
    hint = next(line for line in first.stdout.splitlines() if line.startswith("next: "))
    assert hint.endswith(f"; {usual} holds lessons that the hooks do not read: "
                         f"`lamar import {usual} --store {store}` copies them in, with their evidence"), hint


def test_status_without_store_reads_the_store_the_installed_hooks_name(repo: Path, env: dict[str, str],
                                                                       tmp_path: Path) -> None:
    """`install --store X` then a bare `status` showed the default store, "missing", "none seen yet"."""
    store = tmp_path / "lessons.db"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    bare = {k: v for k, v in env.items() if k != "LAMAR_STORE"}
    status = lamar(bare, repo, "status")
    assert status.returncode == 0, status.stderr
    assert f"store: {store} (named by the installed hooks)" in status.stdout.splitlines()
    assert f"log: {store}.claude-code.log" in status.stdout
    assert (f"traces for sleep: {store}.claude-code.traces.jsonl (none yet: a turn once two more have followed it "
            "in its session, a session's last turns when it ends)") in status.stdout.splitlines()
    other = tmp_path / "other.db"
    assert f"store: {other} (missing)" in lamar(bare, repo, "status", "--store", str(other)).stdout.splitlines()
    helped = " ".join(lamar(bare, repo, "status", "--help").stdout.split())  # and its --help says so
    assert ("the store (default: $LAMAR_STORE, else the one the installed hook commands name, else the enabled "
            "plugin's when no settings file holds an entry, else ") in helped


def test_settle_without_store_settles_the_store_the_installed_hooks_name(repo: Path, env: dict[str, str],
                                                                        tmp_path: Path) -> None:
    """`install --store X` then a bare `settle` settled ~/.lamar/experience.json, or failed for want of it."""
    store = tmp_path / "lessons.db"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    bare = {k: v for k, v in env.items() if k != "LAMAR_STORE"}
    settled = lamar(bare, repo, "settle")
    assert settled.returncode == 0, settled.stderr
    assert settled.stdout == f"store: {store} (named by the installed hooks)\nsettled 0 outcomes\n"
    other = tmp_path / "other.db"
    with Lamar(str(other)):
        pass
    assert lamar(bare, repo, "settle", "--store", str(other)).stdout.startswith(f"store: {other}\n")
    # Hooks in two settings files that write to two stores: which to settle is not settle's guess.
    assert lamar(env, repo, "install", "--user", "--store", str(other)).returncode == 0
    torn = lamar(bare, repo, "settle")
    assert torn.returncode == 1 and f"write to 2 stores ({store}, {other}): pass --store PATH" in torn.stderr
    helped = " ".join(lamar(bare, repo, "settle", "--help").stdout.split())
    assert "the store (default: $LAMAR_STORE, else the one the installed hook commands name, else " in helped


def test_a_settings_error_is_a_lamar_error_that_says_what_to_do(repo: Path, tmp_path: Path) -> None:
    from lamar_claude_code.settings import install, settings_path

    broken = repo / ".claude" / "settings.json"
    broken.parent.mkdir()
    broken.write_text('{"hooks": ')
    with pytest.raises(LamarError, match="not valid JSON .*fix it by hand") as caught:
        install(broken, "lamar claude-code hook")
    assert isinstance(caught.value, ValueError) and broken.read_text() == '{"hooks": '
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(LamarError, match="pass --user .* or --dir FOLDER"):
        settings_path("local", outside)


def test_status_reads_each_settings_file_once(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from lamar.cli import main
    from lamar_claude_code.settings import install

    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(repo)
    local, team, user = (repo / ".claude" / "settings.local.json", repo / ".claude" / "settings.json",
                         home / ".claude" / "settings.json")
    install(local, "lamar claude-code hook")
    team.write_text(json.dumps(THEIRS))
    user.write_text('{"hooks": ')
    reads: list[str] = []
    read_bytes = Path.read_bytes

    def counted(self: Path) -> bytes:
        if self.name.startswith("settings"):
            reads.append(str(self))
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    # 4: a bare `lamar` is not found on the PATH Claude Code may start with, so its entries FAIL
    assert main(["claude-code", "status", "--store", str(tmp_path / "lessons.db")]) == 4
    out = capsys.readouterr().out
    assert f"local settings {local}: installed" in out and f"project settings {team}: not installed" in out
    assert f"user settings {user}: cannot be read" in out
    assert sorted(reads) == sorted([str(local), str(team), str(user)])


def _plugin_installed(env: dict[str, str]) -> Path:
    """The plugin lamar@lamar in Claude Code's plugin cache, with one hook event (not yet enabled):
    returns the ~/.claude folder."""
    claude = Path(env["HOME"]) / ".claude"
    copy = claude / "plugins" / "cache" / "lamar" / "lamar" / "0.2.0"
    (copy / "hooks").mkdir(parents=True)
    (copy / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": []}}))
    (claude / "plugins" / "installed_plugins.json").write_text(
        json.dumps({"plugins": {"lamar@lamar": [{"installPath": str(copy)}]}}))
    return claude


def test_the_plugin_beside_settings_entries_is_named_as_running_twice(repo: Path, env: dict[str, str]) -> None:
    """Claude Code runs an enabled plugin's hooks beside the settings' entries: every prompt was recalled twice."""
    claude = _plugin_installed(env)
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"lamar@lamar": True}}))
    assert "twice" not in lamar(env, repo, "status").stdout  # the plugin alone

    done = lamar(env, repo, "install", "--project")
    assert done.returncode == 0, done.stderr
    team = repo / ".claude" / "settings.json"
    note = (f"note: the plugin lamar@lamar and the entries in {team} both run Lamar's hooks, so each prompt would "
            "be recalled and injected twice: keep one (`claude plugin disable lamar@lamar`, or `lamar claude-code "
            "uninstall` with --local, --project or --user)")
    assert note in done.stderr.splitlines()
    assert note in lamar(env, repo, "status").stdout.splitlines()
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"lamar@lamar": False}}))
    assert "twice" not in lamar(env, repo, "status").stdout


def test_uninstall_names_the_plugin_that_still_runs_lamar(repo: Path, env: dict[str, str]) -> None:
    # With the plugin enabled, uninstall said only "no Lamar hooks to remove", which reads as Lamar off.
    claude = _plugin_installed(env)
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"lamar@lamar": True}}))
    done = lamar(env, repo, "uninstall")
    assert done.returncode == 0 and "no Lamar hooks to remove" in done.stdout
    assert ("note: the plugin lamar@lamar still runs Lamar's hooks: `claude plugin disable lamar@lamar` turns it off"
            in done.stderr.splitlines()), done.stderr
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"lamar@lamar": False}}))
    assert "plugin" not in lamar(env, repo, "uninstall").stderr



def test_a_disabled_plugin_that_fails_is_reported_without_failing_status(repo: Path, env: dict[str, str],
                                                                        tmp_path: Path) -> None:
    """A disabled copy of the plugin whose hooks would not start made status exit as "Lamar is off", though
    Claude Code runs none of its hooks: the entries that do run were fine."""
    assert lamar(env, repo, "install", "--store", str(tmp_path / "lessons.db")).returncode == 0
    claude = _plugin_installed(env)  # no launcher: its hooks would fail
    python = tmp_path / "deleted-venv" / "bin" / "python"
    for options in ({}, {"python": str(python)}):
        (claude / "settings.json").write_text(json.dumps({
            "enabledPlugins": {"lamar@lamar": False}, "pluginConfigs": {"lamar@lamar": {"options": options}}}))
        shown = lamar(env, repo, "status")
        assert shown.returncode == 0 and "FAILS" not in shown.stdout, shown.stdout
        lines = shown.stdout.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("plugin lamar@lamar (disabled)"))
        assert lines[at + 1].startswith("    not run while disabled; once enabled it would fail"), lines[at + 1]
        (claude / "settings.json").write_text(json.dumps({
            "enabledPlugins": {"lamar@lamar": True}, "pluginConfigs": {"lamar@lamar": {"options": options}}}))
        assert lamar(env, repo, "status").returncode == 4  # enabled, the same copy fails status

def test_status_of_the_plugin_alone_reads_the_plugins_store(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """With the plugin installed and no settings entries, a bare `status` showed ~/.lamar/experience.json,
    "(missing)", "last event: none seen yet", while the plugin's hooks wrote to the plugin's store."""
    claude = _plugin_installed(env)
    store = tmp_path / "plugin.db"
    (claude / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"lamar@lamar": True},
        "pluginConfigs": {"lamar@lamar": {"options": {"store": str(store)}}}}))
    bare = {k: v for k, v in env.items() if k not in ("LAMAR_STORE", "XDG_DATA_HOME")}
    status = lamar(bare, repo, "status")
    assert status.returncode == 4, status.stderr  # this copy of the plugin has no launcher: its hooks FAIL
    assert f"store: {store} (the plugin lamar@lamar's, missing)" in status.stdout.splitlines(), status.stdout
    assert ") (" not in status.stdout, status.stdout  # one clause, never two brackets in a row
    assert f"log: {store}.claude-code.log" in status.stdout
    default = Path(bare["HOME"]) / ".local" / "share" / "lamar" / "experience.db"  # the option left empty
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"lamar@lamar": True}}))
    assert f"store: {default} (the plugin lamar@lamar's, missing)" in lamar(bare, repo, "status").stdout.splitlines()
    assert lamar(env, repo, "install", "--store", str(tmp_path / "lessons.db")).returncode == 0
    # Beside settings entries (each prompt then runs both), the entries' store is the one shown.
    shown = lamar(bare, repo, "status").stdout.splitlines()
    assert f"store: {tmp_path / 'lessons.db'} (named by the installed hooks)" in shown


def test_status_over_a_store_with_no_lessons_says_how_to_give_it_some(repo: Path, env: dict[str, str],
                                                                      tmp_path: Path) -> None:
    """The plugin's users never run `install`, whose last line is the only advice for an empty store: their
    sessions ran, `status` said all was well, and no prompt ever got a lesson from their CLAUDE.md."""
    claude = _plugin_installed(env)
    store = tmp_path / "plugin.db"
    (claude / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"lamar@lamar": True},
        "pluginConfigs": {"lamar@lamar": {"options": {"store": str(store)}}}}))
    bare = {k: v for k, v in env.items() if k not in ("LAMAR_STORE", "XDG_DATA_HOME")}
    advice = ("next: the store holds no lessons yet, so no prompt gets any. `lamar import-rules` shows the rules of "
              "this repository's CLAUDE.md or AGENTS.md as lessons (add --apply to keep them); `lamar add "
              "--precondition .. --action .. --scope project=shop` writes one by hand for this project (without "
              "--scope, for every project)")
    status = lamar(bare, repo, "status")
    assert status.returncode == 4, status.stderr  # this copy of the plugin has no launcher: its hooks FAIL
    assert advice in status.stdout.splitlines(), status.stdout
    assert not store.exists()  # status looked, and made no store
    with Lamar(str(store)) as lam:  # as the first hook leaves it: a store, still with no lesson
        lam.stats()
    assert advice in lamar(bare, repo, "status").stdout.splitlines()
    explicit = lamar(bare, repo, "status", "--store", str(store)).stdout
    assert f"`lamar import-rules --store {store}` shows" in explicit
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first"))
    assert "next: " not in lamar(bare, repo, "status").stdout


def test_install_run_by_its_full_path_names_that_path_in_its_advice(repo: Path, env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    """The quick start runs `~/lamar/.venv/bin/lamar claude-code install`, with no `lamar` on PATH:
    advice to type a bare `lamar` was "command not found"."""
    program = tmp_path / "venv" / "bin" / "lamar"  # a console script, as pip writes one
    program.parent.mkdir(parents=True)
    program.write_text(f"#!{sys.executable}\nimport sys\nfrom lamar.cli import main\nsys.exit(main())\n")
    program.chmod(0o755)
    store = tmp_path / "lessons.db"
    for path, typed in ((STRIPPED_PATH, str(program)), (f"{program.parent}{os.pathsep}{STRIPPED_PATH}", "lamar")):
        done = subprocess.run([str(program), "claude-code", "install", "--store", str(store)], cwd=repo,
                              env={**env, "PATH": path}, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert f"`{typed} import-rules --store {store}`" in done.stdout, done.stdout
        assert f"`{typed} add --store {store} --precondition .. --action .. --scope project=shop`" in done.stdout


def test_import_rules_without_a_store_uses_the_one_the_hooks_read(repo: Path, env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    """A plugin user who typed `lamar import-rules --apply` filled ~/.lamar/experience.json, a store
    the plugin's hooks never read, so no rule was ever recalled. Without --store the rules now go to
    the hooks' store, which is made if the hooks have not made it yet, and the command says which.
    Made there, it was 0644 in a 0755 folder (the umask's), where the hooks make it their user's only."""
    claude = _plugin_installed(env)
    store = tmp_path / "data" / "plugin.db"
    (claude / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"lamar@lamar": True},
        "pluginConfigs": {"lamar@lamar": {"options": {"store": str(store)}}}}))
    (repo / "CLAUDE.md").write_text("- Run `pytest -x` before every commit.\n")
    bare = {k: v for k, v in env.items() if k not in ("LAMAR_STORE", "XDG_DATA_HOME")}

    def rules(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "lamar.cli", "import-rules", *args], cwd=repo, env=bare,
                              capture_output=True, text=True, timeout=60, check=False, umask=0o022)

    named = f"store: {store} (the plugin lamar@lamar's)"
    shown = rules()
    assert shown.returncode == 0 and named in shown.stderr, shown.stderr
    assert "1 lesson to add" in shown.stdout and not store.exists()
    added = rules("--apply")
    assert added.returncode == 0 and named in added.stderr, added.stderr
    assert not (Path(bare["HOME"]) / ".lamar" / "experience.json").exists()
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in store.parent.iterdir()} == {"plugin.db": "0o600"}
    assert oct(store.parent.stat().st_mode & 0o777) == "0o700"
    with Lamar(str(store)) as lam:
        assert ["pytest -x" in e.action for e in lam.experiences()] == [True]


def test_export_rules_without_a_store_uses_the_one_the_hooks_read(repo: Path, env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    """Without --store, export-rules read the default store: refused as missing, or, when one existed,
    a section written from evidence the hooks never gathered. It now reads the hooks' store."""
    store = tmp_path / "lessons.db"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    with Lamar(str(store)) as lam:
        lam.add(Experience("a release", "tag it", scope={"project": "shop"}))
    bare = {k: v for k, v in env.items() if k != "LAMAR_STORE"}
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "export-rules", "--to", str(repo / "CLAUDE.md")],
                          cwd=tmp_path, env=bare, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert f"store: {store} (named by the installed hooks)" in done.stderr
    assert not (Path(bare["HOME"]) / ".lamar" / "experience.json").exists()
    assert (repo / "CLAUDE.md").exists()



def test_install_with_another_store_names_the_lessons_it_leaves_behind(repo: Path, env: dict[str, str],
                                                                       tmp_path: Path) -> None:
    """Run again with another --store (the page's ~/.lamar/experience.db after a first try elsewhere), install
    moved the hooks to an empty store without a word of the lessons and evidence left in the old one."""
    old, new = tmp_path / "first.db", tmp_path / "second.db"
    assert lamar(env, repo, "install", "--store", str(old)).returncode == 0
    with Lamar(str(old)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first"))
    moved = lamar(env, repo, "install", "--store", str(new))
    assert moved.returncode == 0, moved.stderr
    assert (f"note: these hooks wrote to {old} until now; its lessons and their evidence stay there: "
            f"`lamar import {old} --store {new}` copies them in") in moved.stdout.splitlines(), moved.stdout
    copied = subprocess.run([sys.executable, "-m", "lamar.cli", "import", str(old), "--store", str(new)], cwd=repo,
                            env=env, capture_output=True, text=True, timeout=60, check=False)
    assert copied.returncode == 0, copied.stderr
    with Lamar(str(new)) as lam:
        assert [e.action for e in lam.experiences()] == ["run the failing test alone first"]
    again = lamar(env, repo, "install", "--store", str(new))  # the same store again: nothing to say
    assert "note: these hooks wrote to" not in again.stdout


def test_install_with_another_store_carries_the_episodes_still_open(repo: Path, env: dict[str, str],
                                                                    tmp_path: Path) -> None:
    """Moved to another store, the hooks' state there knew nothing of the turn in progress: its next prompt
    and its commit settled nothing, and the episode stayed pending in both stores for good."""
    from .conftest import Hook

    old, new = tmp_path / "first.db", tmp_path / "second.db"
    assert lamar(env, repo, "install", "--store", str(old)).returncode == 0
    with Lamar(str(old)) as lam:
        lam.add(Experience("the cart", "run the cart tests first"))
    assert Hook(old, env)(payload("UserPromptSubmit", "s1", repo, prompt="add a discount to the cart")).returncode == 0
    episode = json.loads(Hook(old, env).state_file.read_text())["sessions"]["s1"]["episode"]
    moved = lamar(env, repo, "install", "--store", str(new))
    assert moved.returncode == 0, moved.stderr
    assert (f"note: 1 episode the hooks on {old} still watch, not in {new}, can take no outcome there: "
            f"`lamar import {old} --store {new}` copies them in, then this install run again carries them"
            ) in moved.stderr, moved.stderr
    copied = subprocess.run([sys.executable, "-m", "lamar.cli", "import", str(old), "--store", str(new)], cwd=repo,
                            env=env, capture_output=True, text=True, timeout=60, check=False)
    assert copied.returncode == 0, copied.stderr
    again = lamar(env, repo, "install", "--store", str(new))
    assert (f"carried 1 episode the hooks on {old} still watched: the next prompt, git and the session's end "
            f"settle them in {new}") in again.stdout.splitlines(), again.stdout
    assert "note: 1 episode" not in again.stderr
    assert Hook(new, env)(payload("UserPromptSubmit", "s1", repo, prompt="now show the total")).returncode == 0
    with Lamar(str(new)) as lam:
        assert lam.episode(episode).signal is not None  # the next prompt read it, in the store the hooks use
    assert lamar(env, repo, "install", "--store", str(new)).stdout.count("carried") == 0  # nothing twice


def test_status_names_a_hook_command_whose_python_or_hook_is_gone(repo: Path, env: dict[str, str],
                                                                  tmp_path: Path) -> None:
    """A virtual environment deleted after install: Claude Code shows each event as a non-blocking hook error
    ('/bin/sh: 1: .../python: not found'), and status blamed the PATH Claude Code starts with."""
    store = tmp_path / "experience.db"
    assert lamar(env, repo, "install", "--store", str(store)).returncode == 0
    settings = repo / ".claude" / "settings.local.json"
    python, quick = tmp_path / "old-venv" / "bin" / "python", tmp_path / "old-clone" / "lamar_claude_code" / "quick.py"
    data = json.loads(settings.read_text())
    first, second = (data["hooks"][event][-1]["hooks"][0] for event in ("SessionStart", "Stop"))
    first["command"] = first["command"].replace(sys.executable, str(python))
    second["command"] = second["command"].replace(
        str(Path(__file__).parents[3] / "integrations" / "lamar_claude_code" / "quick.py"), str(quick))
    settings.write_text(json.dumps(data))
    shown = lamar(env, repo, "status")
    assert shown.returncode == 4, shown.stderr  # Lamar is off: a script checking status reads it from the exit
    lines = shown.stdout.splitlines()
    reinstall = f"`lamar claude-code install --store {store}` writes this Lamar's instead"
    assert (f"    FAILS: its Python {python} is gone (its virtual environment deleted or moved), so Lamar is off; "
            f"{reinstall}") in lines, shown.stdout
    assert (f"    FAILS: its hook {quick} is gone (the Lamar it belonged to deleted or moved), so Lamar is off; "
            f"{reinstall}") in lines, shown.stdout
    assert "FAILS without your PATH" not in shown.stdout


def test_status_names_a_plugin_python_option_that_is_gone(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """The plugin's python option naming a deleted virtual environment: the session's start says Lamar is off,
    and status blamed the PATH, its advice cut off at 300 characters."""
    claude = _plugin_installed(env)
    python = tmp_path / "deleted-venv" / "bin" / "python"
    (claude / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"lamar@lamar": True},
        "pluginConfigs": {"lamar@lamar": {"options": {"python": str(python)}}}}))
    shown = lamar(env, repo, "status")
    assert shown.returncode == 4, shown.stderr
    assert (f"    FAILS: its python option names {python}, which is gone (its virtual environment deleted or moved), "
            f"so Lamar is off; `claude plugin install lamar@lamar --config python={sys.executable}` sets it to "
            "this Lamar's") in shown.stdout.splitlines(), shown.stdout
    assert "without your PATH" not in shown.stdout
