"""Setting the plugin's options from a shell, as docs/claude-code.md tells a user to, against the real `claude`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT
from .test_claude_code_plugin import _claude

DOC = ROOT / "docs" / "claude-code.md"


def _status(env: dict[str, str], repo: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status"], cwd=repo,
                          env={**os.environ, **env, "PATH": os.environ["PATH"]}, capture_output=True, text=True,
                          timeout=120, check=False)
    return done.stdout + done.stderr


def test_the_documented_one_step_install_and_configure_set_the_python_option(
        claude_env: dict[str, str], repo: Path, tmp_path: Path) -> None:
    # The page said "the `claude` command has no `plugin configure`": the CLI that claude-agent-sdk bundles has
    # one, and installs from a marketplace not yet added in one step.
    text = " ".join(DOC.read_text().split())
    assert "has no `plugin configure`" not in text
    one_step = re.search(r"\$ (claude plugin install lamar --marketplace ~/lamar --config python=\S+)", DOC.read_text())
    configure = "claude plugin configure lamar@lamar --values-stdin"
    assert one_step and configure in text, "the page names the one-step install and configure --values-stdin"

    installed = _claude(claude_env, "plugin", "install", "lamar", "--marketplace", str(ROOT), "--config",
                        f"python={sys.executable}", cwd=repo)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert f"runs without your PATH (python {sys.executable}," in _status(claude_env, repo)

    other = tmp_path / "venv" / "bin" / "python"  # a virtual environment moved: the option names a file now gone
    done = _claude(claude_env, "plugin", "configure", "lamar@lamar", "--values-stdin", cwd=repo,
                   stdin=json.dumps({"python": str(other)}))
    assert done.returncode == 0, done.stdout + done.stderr
    assert str(other) in _status(claude_env, repo)
