"""Slash commands in a real Claude Code session's trace: a custom command as typed, a built-in one not at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Lamar

from .conftest import ClaudeRun
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


# Three command files for one name, each asking for another task; the front matter's description keeps
# Claude Code's listing of the commands from quoting the bodies, so a body in a request was expanded.
_ASKS = {"user command": ("~/.claude/commands/foo.md", "Explain why the code in $ARGUMENTS works", "question"),
         "project command": (".claude/commands/foo.md", "The test suite fails on $ARGUMENTS; fix it", "tests_fail"),
         "project skill": (".claude/skills/foo/SKILL.md", "Refactor the module $ARGUMENTS", "refactor")}


@pytest.mark.parametrize(("files", "winner"), [(("project command", "user command"), "user command"),
                                               (("project command", "project skill"), "project skill"),
                                               (("user command", "project skill"), "project skill")])
def test_a_command_defined_twice_is_read_as_claude_code_expands_it(files: tuple[str, str], winner: str, repo: Path,
                                                                    env: dict[str, str], store: Path,
                                                                    claude_answered: ClaudeRun) -> None:
    """Lamar read the project's file first, while Claude Code (2.1.337) expands a user's command over a project's
    and a skill over a command: the task came from a prompt Claude never got."""
    subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install", "--store", str(store)], cwd=repo,
                   env=env, capture_output=True, text=True, timeout=60, check=True)
    for name in files:
        where, body, _ = _ASKS[name]
        path = Path(where.replace("~", env["HOME"])) if where.startswith("~") else repo / where
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: foo\ndescription: the {name}\n---\n{body}\n")
    done, bodies = claude_answered("/foo cart.py")
    assert done.returncode == 0, done.stderr
    expanded = [name for name, (_, body, _) in _ASKS.items()
                if any(body.replace("$ARGUMENTS", "cart.py").encode() in sent for sent in bodies)]
    assert expanded == [winner]  # what Claude Code itself made of the prompt
    session = json.loads(done.stdout)["session_id"]
    state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    (episode,) = [e for e, r in state["episodes"].items() if r["session"] == session]
    with Lamar(str(store)) as lam:
        assert lam.episode(episode).context["task"] == _ASKS[winner][2]


def test_the_command_files_are_searched_in_claude_codes_order(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # As the real CLI expands them (the test above): skills before commands, the user's before the project's,
    # the nearest project folder first; a namespaced name is a command in a sub-folder, never a skill.
    from lamar_claude_code.commands import command_prompt

    home = tmp_path / "claude-home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    sub = repo / "web"
    for folder, text in ((repo / ".claude", "top"), (sub / ".claude", "nearest"), (home, "user")):
        (folder / "commands" / "ci").mkdir(parents=True)
        (folder / "commands" / "foo.md").write_text(f"{text} command\n")
        (folder / "commands" / "ci" / "foo.md").write_text(f"{text} ci command\n")
    (repo / ".claude" / "skills" / "foo").mkdir(parents=True)
    (repo / ".claude" / "skills" / "foo" / "SKILL.md").write_text("top skill\n")

    def read(prompt: str) -> str:
        found = command_prompt(prompt, str(sub), repo)
        assert found is not None
        return found[0].strip()

    assert read("/foo") == "top skill"
    assert read("/ci:foo") == "user ci command"
    (home / "commands" / "ci" / "foo.md").unlink()
    assert read("/ci:foo") == "nearest ci command"
    (repo / ".claude" / "skills" / "foo" / "SKILL.md").unlink()
    assert read("/foo") == "user command"
    (home / "commands" / "foo.md").unlink()
    assert read("/foo") == "nearest command"
