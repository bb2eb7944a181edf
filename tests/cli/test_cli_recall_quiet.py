"""`lamar recall -q`: the episode id alone on stdout and the lessons on stderr, so the shell recipe in
docs/cli.md keeps the id in a variable, hands the lessons to the agent and reports the outcome."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lamar import Lamar
from tests.cli.conftest import Run
from tests.docblocks import ROOT, parse


def test_quiet_recall_prints_the_id_alone_and_the_lessons_on_stderr(tmp_path: Path, run_cli: Run) -> None:
    store = tmp_path / "s.db"
    run_cli("add", "--create", "--store", store, "--precondition", "the build fails", "--action", "clear the cache",
            "--scope", "project=trace")
    done = run_cli("recall", "-q", "--store", store, "project=trace")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ep_") and done.stdout.count("\n") == 1, done.stdout
    episode = done.stdout.strip()
    # `lamar recall` has no seed to set, and the evidence coin holds the one lesson out of a few recalls in a hundred:
    # then stderr is rightly empty, and the logged episode says why.
    if _injected(store, episode):
        assert "clear the cache" in done.stderr and episode not in done.stderr
    else:
        assert done.stderr == "", done.stderr
    assert run_cli("report", "--store", store, episode, "shipped").returncode == 0
    # No lesson eligible: the id still, and stderr stays empty (it is the prompt a script keeps).
    none = run_cli("recall", "--quiet", "--store", store, "project=shop")
    assert none.returncode == 0 and none.stdout.startswith("ep_") and none.stderr == "", none
    for flag in ("--dry-run", "--json"):
        refused = run_cli("recall", "-q", flag, "--store", store)
        assert refused.returncode == 1 and f"drop {flag} or --quiet" in refused.stderr, refused.stderr


def test_the_documented_shell_recipe_reports_the_episode_it_recalled(tmp_path: Path, run_cli: Run) -> None:
    recipe = next(b.code for b in parse(ROOT / "docs" / "cli.md")
                  if b.lang == "sh" and "lamar recall -q" in b.code and "lamar report" in b.code)
    store = tmp_path / "s.db"
    run_cli("add", "--create", "--store", store, "--precondition", "the build fails", "--action", "clear the cache",
            "--scope", "project=trace")
    # Stand-ins: the agent keeps the prompt it was given; the tests fail, so the outcome is reverted.
    script = ('my-agent() { [ "$1" = --system-prompt ] && printf %s "$2" > agent-prompt.txt; }\n'
              "make() { return 1; }\n" + recipe)
    env = {**os.environ, "LAMAR_STORE": str(store), "HOME": str(tmp_path),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("reported ep_") and done.stdout.strip().endswith(": reverted"), done.stdout
    prompt = (tmp_path / "agent-prompt.txt").read_text(encoding="utf-8")
    episode = done.stdout.split()[1].rstrip(":")
    assert ("clear the cache" in prompt) if _injected(store, episode) else (prompt == "")  # held out: no lesson
    shown = run_cli("stats", "--json", "--store", store)
    assert json.loads(shown.stdout)["reports"] == 1, shown.stdout


def _injected(store: Path, episode: str) -> bool:
    """Whether the logged episode injected its lesson; else it must have held it out."""
    with Lamar(str(store)) as lam:
        logged = lam.episode(episode)
    assert logged.injected or logged.held_out, logged
    return bool(logged.injected)
