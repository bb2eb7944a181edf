"""The real Claude Code binary (bundled with claude-agent-sdk) runs Lamar's installed hooks.

A local stand-in for the Messages API makes Claude write a file, so every payload, the
injected context and the transcript are Claude Code's own, not recorded copies.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import claude_agent_sdk
import pytest

from lamar import Lamar
from lamar.recall import render_prompt

from .conftest import git
from .fake_anthropic import serve

CLAUDE = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


def _claude(repo: Path, env: dict[str, str], url: str, *args: str) -> subprocess.CompletedProcess[str]:
    run_env = {**env, "ANTHROPIC_API_KEY": "sk-ant-offline-test", "ANTHROPIC_BASE_URL": url,
               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    return subprocess.run([str(CLAUDE), "-p", *args, "--permission-mode", "acceptEdits", "--output-format", "json"],
                          cwd=repo, env=run_env, capture_output=True, text=True, timeout=120, check=False)


def test_claude_code_runs_the_installed_hooks(repo: Path, env: dict[str, str], store: Path) -> None:
    assert CLAUDE.exists(), "claude-agent-sdk ships the Claude Code binary; reinstall lamar[claude-code]"
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install", "--store", str(store)],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.count("added") == 5
    server, url = serve(str(repo))
    try:
        first = _claude(repo, env, url, "please create version.py with the version number")
        assert first.returncode == 0, first.stderr
        assert (repo / "version.py").read_text() == "VALUE = 1\n"  # Claude's Write tool ran
        session = json.loads(first.stdout)["session_id"]

        state_file = store.with_name(store.name + ".claude-code.state.json")
        state = json.loads(state_file.read_text())
        (episode,) = [e for e, r in state["episodes"].items() if r["session"] == session]
        record = state["episodes"][episode]
        assert record["files"] == ["version.py"]  # from Claude Code's own PostToolUse payload
        assert record["signal"] == "accepted"  # SessionEnd: no correction came
        lam = Lamar(str(store))
        assert lam.episode(episode).context == {"project": "shop", "language": "python", "task": "feature"}
        expected = render_prompt([lam.get(i) for i in lam.episode(episode).injected])
        lam.close()

        transcript = next((Path(env["HOME"]) / ".claude" / "projects").glob(f"*/{session}.jsonl"))
        attached = [json.loads(line)["attachment"]["content"] for line in transcript.read_text().splitlines()
                    if '"hook_additional_context"' in line]
        assert attached == ([[expected]] if expected else [])  # what Claude was shown, verbatim

        traces = [json.loads(line) for line in
                  store.with_name(store.name + ".claude-code.traces.jsonl").read_text().splitlines()]
        assert traces[-1]["episode_id"] == episode
        assert traces[-1]["attempted"] == [f"Write: {repo / 'version.py'}"]
        assert traces[-1]["output"] == "Done."

        git(repo, "add", "version.py")
        git(repo, "commit", "-q", "-m", "version")
        second = _claude(repo, env, url, "--continue", "now explain what you changed?")
        assert second.returncode == 0, second.stderr
    finally:
        server.shutdown()
    state = json.loads(state_file.read_text())
    assert [a[1] for a in state["episodes"][episode]["audit"]] == ["accepted", "shipped"]
    lam = Lamar(str(store))
    assert lam.episode(episode).signal == "shipped"
    assert lam.stats()["episodes"] == 2
    lam.close()


def test_a_write_that_leaves_the_file_as_it_was_is_not_read_as_discarded(repo: Path, env: dict[str, str],
                                                                       store: Path) -> None:
    subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install", "--store", str(store)],
                   cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=True)
    server, url = serve(str(repo))
    try:
        assert _claude(repo, env, url, "please create version.py with the version number").returncode == 0
        git(repo, "add", "version.py")
        git(repo, "commit", "-q", "-m", "version")
        # Claude writes the committed file again, byte for byte: the file stays clean, as a discarded edit leaves it.
        again = _claude(repo, env, url, "--continue", "write version.py again")
        assert again.returncode == 0, again.stderr
        session = json.loads(again.stdout)["session_id"]
        (repo / "NOTES.md").write_text("notes\n")  # any later commit makes git look again
        git(repo, "add", "NOTES.md")
        git(repo, "commit", "-q", "-m", "notes")
        assert _claude(repo, env, url, "--continue", "now explain what you changed?").returncode == 0
    finally:
        server.shutdown()
    assert (repo / "version.py").read_text() == "VALUE = 1\n"
    state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    first, rewrite, _ = sorted((r for r in state["episodes"].values() if r["session"] == session),
                               key=lambda r: float(r["time"]))
    assert (first["signal"], first["files"]) == ("shipped", ["version.py"])
    assert (rewrite["signal"], rewrite["files"]) == ("accepted", [])  # moved on from, never "discarded"


def test_claude_shows_a_deleted_virtual_environment_with_its_fix(repo: Path, env: dict[str, str], store: Path,
                                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    # The hooks' Python deleted after install: each event was a hook error saying only
    # "/bin/sh: 1: .../python: not found", which names no fix.
    from lamar_claude_code import settings

    monkeypatch.setattr(sys, "executable", str(tmp_path / "deleted-venv" / "bin" / "python"))
    assert len(settings.install(repo / ".claude" / "settings.local.json", settings.hook_command(str(store)))) == 5
    server, url = serve(str(repo))
    try:
        done = _claude(repo, env, url, "hello")
    finally:
        server.shutdown()
    assert done.returncode == 0, done.stderr  # the turn went on
    session = json.loads(done.stdout)["session_id"]
    transcript = next((Path(env["HOME"]) / ".claude" / "projects").glob(f"*/{session}.jsonl"))
    errors = [(a["hookName"], a["exitCode"], a["stderr"]) for a in
              (json.loads(line).get("attachment") or {} for line in transcript.read_text().splitlines())
              if a.get("type") == "hook_non_blocking_error"]
    assert [name for name, _, _ in errors] == ["SessionStart:startup", "UserPromptSubmit", "Stop"], errors
    for _, code, said in errors:  # what Claude Code shows the user, as "<hook> hook error: ..."
        assert code == 1 and "Lamar is off" in said and "`lamar claude-code status`" in said, said
        assert "not found" not in said
    assert not any(b"Lamar is off" in body for body in server.bodies)  # never sent to the model
