"""The hooks (and the cron command) run git in every repository Claude Code opens, one unpacked from someone's
archive included: no command that repository's .git/config names as core.fsmonitor runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

from lamar_claude_code import context, outcomes, settings


def test_the_hooks_git_runs_no_command_a_repositorys_config_names(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    (repo / "app.py").write_text("print('hi')\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "app.py"], check=True)
    marker = tmp_path / "ran"
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"], check=True)

    assert "app.py" in (context._tracked_files(repo) or [])  # git still answers
    assert not marker.exists()
    assert "app.py" in (outcomes.git(str(repo), "status", "--porcelain", "--ignored", "--untracked-files=all") or "")
    assert not marker.exists()
    assert settings.tracked(repo / "app.py")  # lamar-claude-code install asks it of a project's settings
    assert not marker.exists()
