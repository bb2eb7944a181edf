"""The note `import-rules` ends with sends the user to a personal settings file; git must not commit it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _note(repo: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "import-rules", "--store", str(repo / "store.db")],
                          cwd=repo, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    (note,) = [line for line in done.stdout.splitlines() if line.startswith("note: ")]
    return note


def test_the_note_says_how_to_keep_the_personal_settings_out_of_git_when_git_does_not(tmp_path: Path) -> None:
    # A plugin user has no `lamar claude-code install` to list the file in .git/info/exclude: the file
    # they make by hand would show in `git status` and go into the next `git add -A` with their paths.
    repo = tmp_path / "shop"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "CLAUDE.md").write_text("- Run `make test` before committing.\n")
    exclude = (repo / ".git" / "info" / "exclude").resolve()
    note = _note(repo)
    assert note.endswith(f"; git does not ignore .claude/settings.local.json here: add the line "
                         f"/.claude/settings.local.json to {exclude}, so it is never committed"), note
    with exclude.open("a") as handle:
        handle.write("/.claude/settings.local.json\n")
    assert "git does not ignore" not in _note(repo)
