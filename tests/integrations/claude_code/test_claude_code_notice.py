"""A hook that fails once Lamar runs (a corrupt store, a store folder that takes no file) tells the user at
the next session's start, through the installed command, the plugin's entry and the real `claude`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from lamar import Lamar
from tests.hook_answers import lessons_given

from .conftest import Hook, payload, project_config
from .fake_anthropic import serve
from .test_claude_code_real_cli import CLAUDE

OFF = "Lamar is off, so no lessons are recalled and nothing is learned: "
Run = Callable[[dict[str, object]], subprocess.CompletedProcess[bytes]]


def _installed(store: Path | str, env: dict[str, str]) -> Run:
    """The command `lamar claude-code install` writes, run as Claude Code runs it (its daemon included)."""
    from lamar_claude_code.settings import hook_command

    command = hook_command(str(store))
    return lambda event: subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event).encode(), env=env,
                                        capture_output=True, timeout=60, check=False)


def _plugin(store: Path, env: dict[str, str]) -> Run:
    """The plugin's hook entry, its store named by its option."""
    return lambda event: subprocess.run([sys.executable, "-m", "lamar_claude_code.plugin", "hook"],
                                        input=json.dumps(event).encode(),
                                        env={**env, "CLAUDE_PLUGIN_OPTION_STORE": str(store)},
                                        capture_output=True, timeout=60, check=False)


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    (message,) = json.loads(done.stdout).values()  # the systemMessage alone: nothing for the model
    assert isinstance(message, str)
    return message


def _quiet(done: subprocess.CompletedProcess[bytes]) -> None:
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b""), done


@pytest.mark.parametrize("route", ["installed", "plugin"])
def test_a_corrupt_store_is_told_at_each_session_start_until_a_hook_uses_the_store(
        store: Path, env: dict[str, str], repo: Path, route: str) -> None:
    run = (_installed if route == "installed" else _plugin)(store, env)
    _quiet(run(payload("SessionStart", "s1", repo, source="startup")))  # nothing has failed
    store.write_bytes(b"this is not sqlite at all" * 100)
    for event in (payload("UserPromptSubmit", "s1", repo, prompt="fix the build"),
                  payload("Stop", "s1", repo, stop_hook_active=False),
                  payload("SessionEnd", "s1", repo, reason="other")):
        _quiet(run(event))  # the turn goes on, as before
    for source in ("startup", "resume", "clear"):
        message = _said(run(payload("SessionStart", "s2", repo, source=source)))
        assert message.startswith(OFF + "its UserPromptSubmit hook failed at "), message
        assert f"CorruptStore: {store} is not a readable Lamar SQLite store" in message
        assert "restore it from a backup" in message  # the store's own advice
        assert ("/plugin configure lamar@lamar" if route == "plugin" else "claude-code install --store PATH") \
            in message
        assert ("/lamar:status" if route == "plugin" else "claude-code status --store") in message
        assert f"{store}.claude-code.log" in message
    # said once a session: never at a compaction, a prompt, a tool call or an end
    _quiet(run(payload("SessionStart", "s2", repo, source="compact")))
    _quiet(run(payload("UserPromptSubmit", "s2", repo, prompt="again")))
    _quiet(run(payload("PostToolUse", "s2", repo, tool_name="Write", tool_input={"file_path": str(repo / "a.py")},
                       tool_response={"success": True})))

    status = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status", "--store", str(store)],
                            cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    (line,) = [line for line in status.stdout.splitlines() if line.startswith("  hooks failing since ")]
    assert "(UserPromptSubmit: CorruptStore: " in line and "nothing is learned" in line, status.stdout

    store.unlink()  # fixed: a new store in its place
    Lamar(str(store)).close()
    _quiet(run(payload("UserPromptSubmit", "s2", repo, prompt="fix the build")))  # stored an episode
    _quiet(run(payload("SessionStart", "s3", repo, source="startup")))
    status = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status", "--store", str(store)],
                            cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert "hooks failing" not in status.stdout, status.stdout


def test_a_store_fixed_before_the_next_session_is_not_told_as_off(store: Path, env: dict[str, str],
                                                                  repo: Path) -> None:
    # The store deleted, a prompt failing on it, then `lamar claude-code install` making it again: the next
    # session's start still said "Lamar is off ... no store", since a start alone never opens the store.
    run = _installed(store, env)
    store.unlink()
    _quiet(run(payload("UserPromptSubmit", "s1", repo, prompt="fix the build")))
    message = _said(run(payload("SessionStart", "s2", repo, source="startup")))
    assert message.startswith(OFF) and "no store at" in message  # still missing: said
    Lamar(str(store)).close()  # fixed
    _quiet(run(payload("SessionStart", "s3", repo, source="startup")))
    status = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status", "--store", str(store)],
                            cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert "hooks failing" not in status.stdout, status.stdout


def test_a_store_folder_that_takes_no_file_is_told_by_the_session_start_that_meets_it(
        env: dict[str, str], repo: Path, tmp_path: Path) -> None:
    # The session's start fails too (its state beside the store cannot be written): it tells of its own failure.
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's folder should be\n")
    store = blocked / "experience.db"
    message = _said(_plugin(store, env)(payload("SessionStart", "s1", repo, source="startup")))
    assert message.startswith(OFF + "its SessionStart hook failed at "), message
    assert f"FileExistsError: [Errno 17] File exists: '{blocked}'" in message
    assert "To use another store, set the plugin's store option" in message
    assert (Path(env["HOME"]) / ".lamar").is_dir()  # the failure is kept where the store's folder is not


def test_one_bad_event_followed_by_a_good_one_says_nothing(hook: Hook, repo: Path) -> None:
    _quiet(hook(payload("UserPromptSubmit", "s1", repo)))  # no prompt field: logged
    assert "no string 'prompt'" in hook.log_file.read_text()
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert done.returncode == 0
    lessons_given(hook.store, "s1", done.stdout, "the tests fail")  # the lessons, or none: the episode held them out
    _quiet(hook(payload("SessionStart", "s2", repo, source="startup")))
    _quiet(hook(None, raw=b"[1, 2, 3]"))  # not an event at all: nothing of the setup to tell
    _quiet(hook(payload("SessionStart", "s3", repo, source="startup")))


def test_claude_shows_the_failure_to_the_user_and_never_to_the_model(
        repo: Path, env: dict[str, str], store: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install", "--store", str(store)],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.count("added") == 5
    store.write_bytes(b"this is not sqlite at all" * 100)
    server, url = serve(str(repo))
    run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    try:
        sessions = []
        for prompt in ("hello", "hello again"):
            done = subprocess.run([str(CLAUDE), "-p", prompt, "--output-format", "json"], cwd=repo, env=run_env,
                                  capture_output=True, text=True, timeout=120, check=False)
            assert done.returncode == 0, done.stderr  # the turn went on
            sessions.append(json.loads(done.stdout)["session_id"])
    finally:
        server.shutdown()
    shown = []
    for session in sessions:
        transcript = next((Path(env["HOME"]) / ".claude" / "projects").glob(f"*/{session}.jsonl"))
        lines = [json.loads(line) for line in transcript.read_text().splitlines()]
        shown.append([(a["hookName"], a["content"]) for a in (line.get("attachment") or {} for line in lines)
                      if a.get("type") == "hook_system_message"])
    assert shown[0] == []  # nothing had failed when the first session started
    ((hook, content),) = shown[1]  # what the interactive UI shows as "SessionStart:startup says: ..."
    assert hook == "SessionStart:startup" and content.startswith(OFF + "its "), content
    assert "CorruptStore" in content
    assert server.bodies and not any(b"Lamar is off" in body for body in server.bodies)
    assert os.path.exists(store)  # left untouched


def test_an_installed_hook_whose_python_cannot_load_lamar_tells_the_session_start(
        store: Path, env: dict[str, str], repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtual environment rebuilt without Lamar: quick.py runs, its hook cannot load, and every
    # event exited 0 with a line in the log only (the plugin's launcher said so; the installed command did not).
    from lamar_claude_code.settings import hook_command

    other = "/usr/bin/python3"
    bare = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    if subprocess.run([other, "-c", "import lamar_claude_code"], env=bare, capture_output=True,
                      check=False).returncode == 0:
        pytest.skip("this machine's /usr/bin/python3 has Lamar installed")
    monkeypatch.setattr(sys, "executable", other)
    command = hook_command(str(store))

    def run(event: dict[str, object]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event).encode(), env=bare,
                              capture_output=True, timeout=60, check=False)

    message = _said(run(payload("SessionStart", "s1", repo, source="startup")))
    assert message.startswith(OFF + f"{other} cannot load Lamar's hook (ModuleNotFoundError: "), message
    assert "run `lamar claude-code install` again" in message and f"{store}.claude-code.log" in message
    for event in (payload("SessionStart", "s1", repo, source="compact"),
                  payload("UserPromptSubmit", "s1", repo, prompt="fix the build")):
        _quiet(run(event))
    logged = store.with_name(store.name + ".claude-code.log").read_text()
    assert "the hook could not start: ModuleNotFoundError" in logged


@pytest.mark.parametrize("stamp", ["1e300", "NaN", "-1e20"])
def test_a_kept_failure_whose_time_no_clock_shows_is_dropped_as_a_hand_edit(
        store: Path, env: dict[str, str], repo: Path, monkeypatch: pytest.MonkeyPatch, stamp: str) -> None:
    from lamar_claude_code.notice import failure_path

    monkeypatch.setenv("HOME", env["HOME"])
    kept = failure_path(str(store))
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(f'{{"time": {stamp}, "event": "UserPromptSubmit", "error": "CorruptStore: edited"}}')
    status = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status", "--store", str(store)],
                            cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert status.returncode == 0 and "hooks failing" not in status.stdout, status.stderr
    _quiet(_installed(store, env)(payload("SessionStart", "s1", repo, source="startup")))


def test_a_postgresql_password_stays_out_of_the_notice_and_its_file(
        env: dict[str, str], repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Claude Code keeps a systemMessage in the session's transcript; the URL's password belongs to the settings.
    pytest.importorskip("psycopg")
    from lamar_claude_code.notice import failure_path

    secret = "s3cr3t-Passw0rd-review1"
    url = f"postgresql://bob:{secret}@127.0.0.1:1/lamar"  # nothing listens on port 1: every event fails
    project_config(repo, "[hook]\nbudget_seconds = 30\n", env["HOME"])  # a loaded machine fails, never overruns
    run = _installed(url, env)
    _quiet(run(payload("UserPromptSubmit", "s1", repo, prompt="fix the build")))
    message = _said(run(payload("SessionStart", "s2", repo, source="startup")))
    assert message.startswith(OFF + "its UserPromptSubmit hook failed at "), message
    assert "claude-code status --store 'postgresql://bob:[REDACTED:database-password]@127.0.0.1:1/lamar'" in message
    assert secret not in message
    monkeypatch.setenv("HOME", env["HOME"])
    assert secret not in failure_path(url).read_text()
