"""The post-commit hook of docs/cli.md, "Reporting from a git hook", run as a git repository runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Signal
from tests.docblocks import ROOT, parse

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def hook() -> str:
    blocks = [b.code for b in parse(ROOT / "docs" / "cli.md") if "# .git/hooks/post-commit" in b.code]
    assert len(blocks) == 1
    return blocks[0]


def git(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=True)


def test_the_hook_reports_a_revert_of_a_commit_whose_episode_was_already_reported(tmp_path: Path) -> None:
    # The agent's commit was reported shipped when it landed; its revert came days later. The hook ran
    # `lamar report EPISODE reverted`, which a reported episode refuses: the revert never reached the store.
    store = tmp_path / "lessons.db"
    lam = Lamar(str(store), seed=1)
    lam.add(Experience("a deploy times out", "raise the health-check grace period"))
    episode, unreported = lam.recall({}).episode_id, lam.recall({}).episode_id
    lam.close()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "lamar"  # the `lamar` a user's PATH finds, running this checkout
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m lamar.cli "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ, LAMAR_STORE=str(store), HOME=str(tmp_path),
               PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "integrations")]), GIT_AUTHOR_NAME="a",
               GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@example.com")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", ".", env=env)
    post_commit = repo / ".git" / "hooks" / "post-commit"
    post_commit.write_text(hook())
    post_commit.chmod(0o755)
    (repo / "deploy.yml").write_text("grace: 60\n")
    git(repo, "add", "deploy.yml", env=env)
    git(repo, "commit", "-q", "-m", f"raise the grace period\n\nLamar-Episode: {episode}", env=env)
    with Lamar(str(store)) as lam:
        lam.report(episode, Signal.SHIPPED)
    git(repo, "revert", "--no-edit", "HEAD", env=env)
    with Lamar(str(store)) as lam:
        assert lam.episode(episode).signal == "reverted"
    (repo / "deploy.yml").write_text("grace: 90\n")  # a commit nobody reported before its revert
    git(repo, "add", "deploy.yml", env=env)
    git(repo, "commit", "-q", "-m", f"raise it again\n\nLamar-Episode: {unreported}", env=env)
    git(repo, "revert", "--no-edit", "HEAD", env=env)
    with Lamar(str(store)) as lam:
        assert lam.episode(unreported).signal == "reverted"
