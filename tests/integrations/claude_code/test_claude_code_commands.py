"""Slash commands in a real Claude Code session's trace: a custom command as typed, a built-in one not at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .fake_anthropic import serve
from .test_claude_code_real_cli import _claude


def test_a_custom_command_is_traced_as_typed_and_a_built_in_one_is_no_turn(repo: Path, env: dict[str, str],
                                                                           store: Path) -> None:
    """Claude Code writes a slash command into the transcript as tags. The trace of a custom command's turn
    read "<command-message>fixit</command-message>\\n<command-name>/fixit</command-name>..." and, that text
    being no prompt the hook saw, had no episode, context or outcome for sleep; `/context` and `/compact`,
    which no model answers, each became a trace of their own."""
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install", "--store", str(store)],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.returncode == 0
    commands = repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fixit.md").write_text("---\ndescription: fix it\n---\nPlease create fixit.py that fixes $ARGUMENTS\n")
    server, url = serve(str(repo))
    try:
        first = _claude(repo, env, url, "/fixit the cart rounding")
        assert first.returncode == 0, first.stderr
        session = json.loads(first.stdout)["session_id"]
        for typed in ("/context", "thanks, that is all"):
            assert _claude(repo, env, url, "--resume", session, typed).returncode == 0
    finally:
        server.shutdown()
    traces = [json.loads(line) for line in
              store.with_name(store.name + ".claude-code.traces.jsonl").read_text().splitlines()]
    mine = [t for t in traces if t["metadata"]["session"] == session]
    assert [t["input"] for t in mine] == ["/fixit the cart rounding", "thanks, that is all"]
    state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    fixit = mine[0]
    assert fixit["episode_id"] in state["episodes"] and fixit["outcome"] == "accepted"
    assert fixit["attempted"] == [f"Write: {repo / 'fixit.py'}"] and fixit["context"]["project"] == "shop"
