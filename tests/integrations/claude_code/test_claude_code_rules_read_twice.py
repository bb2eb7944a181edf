"""A rule imported from CLAUDE.md still reaches Claude through CLAUDE.md: `import-rules` says so, and how to stop it.

The real Claude Code binary, against a local stand-in for the Messages API, shows what each request
carries: the CLAUDE.md text on every prompt, held-out ones included, until `claudeMdExcludes` names it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import git
from .fake_anthropic import serve
from .test_claude_code_real_cli import _claude

RULE = "Never hand-edit the zebra migrations"  # words no lesson fence or prompt of this test holds elsewhere


def _import(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "import-rules", "--store", str(repo.parent / "l.db")],
                          cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)


def _sent(repo: Path, env: dict[str, str]) -> str:
    server, url = serve(str(repo))
    try:
        done = _claude(repo, env, url, "thanks, that is all")
        assert done.returncode == 0, done.stderr
        return b"".join(server.bodies).decode()
    finally:
        server.shutdown()


def test_import_rules_says_claude_code_still_reads_the_rules_and_how_to_exclude_them(
        repo: Path, env: dict[str, str]) -> None:
    """The imported rules stayed in CLAUDE.md, which Claude Code sends with every request, so the prompts
    where recall held a rule out still showed it to Claude: the control group was treated too, and no
    rule's evidence could ever show it helps or harms. Nothing said so."""
    (repo / "docs").mkdir()
    (repo / "docs" / "git.md").write_text("- Always rebase before pushing\n")
    (repo / "CLAUDE.md").write_text(f"- {RULE}\n- Git workflow @docs/git.md\n")
    (repo / "AGENTS.md").write_text("- Prefer small commits\n")  # Codex's file: Claude Code does not read it
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "rules")
    assert RULE in _sent(repo, env)

    done = _import(repo, env)
    assert done.returncode == 0, done.stderr
    (note,) = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    assert "reads CLAUDE.md, docs/git.md into its sessions" in note and "AGENTS.md" not in note
    excludes = json.loads("{" + note.split("settings.local.json: ")[1].split(" (")[0] + "}")
    assert excludes == {"claudeMdExcludes": [str(repo / "CLAUDE.md")]}

    # The advice works: with the key in the personal settings, no request carries the rule, nor its import.
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(excludes))
    sent = _sent(repo, env)
    assert RULE not in sent and "rebase before pushing" not in sent

    # AGENTS.md alone is no file Claude Code reads: no note.
    (repo / "CLAUDE.md").unlink()
    alone = _import(repo, env)
    assert alone.returncode == 0 and "would add" in alone.stdout and "note:" not in alone.stdout, alone.stdout

