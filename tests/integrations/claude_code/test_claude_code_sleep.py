"""`lamar sleep` after real Claude Code sessions: what it says of the turns the hooks traced for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from .conftest import ClaudeRun


def _lamar(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    user = {key: value for key, value in env.items() if key != "LAMAR_STORE"}  # the store the hooks name
    return subprocess.run([sys.executable, "-m", "lamar.cli", *args], cwd=repo, env=user, capture_output=True,
                          text=True, timeout=120, check=False)


def test_a_sleep_without_traces_names_the_turns_the_hooks_traced(repo: Path, env: dict[str, str], store: Path,
                                                                 tmp_path: Path, claude_answered: ClaudeRun) -> None:
    # A sleep without --traces only consolidates: it said "0 proposals, 0 dropped" and nothing of the
    # sessions the hooks had traced for it, so a user took it that there was nothing to learn from them.
    assert _lamar(repo, env, "claude-code", "install", "--store", str(store)).returncode == 0
    traces = store.with_name(store.name + ".claude-code.traces.jsonl")
    before = _lamar(repo, env, "sleep")
    assert before.returncode == 0, before.stderr
    assert "not mined" not in before.stdout  # no session yet, nothing to name
    assert "not mined" not in _lamar(repo, env, "stats").stdout
    done, _ = claude_answered("please create version.py with the version number")
    assert done.returncode == 0, done.stderr
    assert len(traces.read_text().splitlines()) == 1  # the session's end traced its one turn
    asleep = _lamar(repo, env, "sleep")  # the store the installed hooks name, as a user in the repository runs it
    assert asleep.returncode == 0, asleep.stderr
    (line,) = [line for line in asleep.stdout.splitlines() if "not mined" in line]
    command = line.split("(mining takes a model): ", 1)[1]
    assert line.startswith(f"  not mined: 1 turn that Claude Code's hooks traced in {traces} ")
    assert command == (f"lamar sleep --store {store} --traces {traces} --model PROVIDER:MODEL --out report.json")
    # `lamar stats` said only "no traces mined" of the last sleep: it names the same turns, with the same command.
    stats = _lamar(repo, env, "stats")
    assert stats.returncode == 0 and f"\n{' ' * 11}{command}\n" in stats.stdout, stats.stdout  # whole, to copy
    said = stats.stdout.split("\nmining ", 1)[1].split(command, 1)[0]
    assert " ".join(said.split()) == " ".join(line.split(": lamar sleep ", 1)[0].split()) + ":"
    assert "not mined" not in _lamar(repo, env, "stats", "--json").stdout  # a script's output holds the figures alone
    # The command it gives runs as printed, up to the model, which has no key here.
    run = _lamar(repo, {**env, "ANTHROPIC_API_KEY": ""}, *command.split()[1:-4], "--model", "anthropic:x")
    assert run.returncode == 2 and "set ANTHROPIC_API_KEY" in run.stderr, run.stderr
    mined = _lamar(repo, env, "sleep", "--json")  # a script's output holds the report alone
    assert mined.returncode == 0 and "not mined" not in mined.stdout
    assert json.loads(mined.stdout)["proposals"] == []
    saved = _lamar(repo, env, "sleep", "--out", str(tmp_path / "my report.json"))  # the mining saves where this did
    assert f"--out '{tmp_path / 'my report.json'}'" in saved.stdout, saved.stdout
    os.remove(traces)
    assert "not mined" not in _lamar(repo, env, "sleep").stdout
    assert "not mined" not in _lamar(repo, env, "stats").stdout
