"""The plugin's MCP server needs the `mcp` extra, which the documented core install leaves out: status says so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT
from .test_claude_code_plugin import _claude, _trust


def _python_without_mcp(tmp_path: Path) -> Path:
    """An interpreter with Lamar (this tree) and none of the site-packages: a core-only install."""
    wrapper = tmp_path / "core-only-python"
    path = os.pathsep.join([str(ROOT), str(ROOT / "integrations")])
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{path}" exec "{sys.executable}" -S "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def test_status_says_when_the_plugins_mcp_server_cannot_start(claude_env: dict[str, str],
                                                               repo: Path, tmp_path: Path) -> None:
    """Installed as the page said (`pip install -e .`, "all the hooks and the plugin need"), the plugin's
    hooks ran, but its MCP server failed to connect in `claude mcp list` with no word of why anywhere a
    user looks: `lamar claude-code status` said the plugin runs."""
    python = _python_without_mcp(tmp_path)
    assert _claude(claude_env, "plugin", "marketplace", "add", str(ROOT)).returncode == 0
    installed = _claude(claude_env, "plugin", "install", "lamar@lamar", "--config", f"python={python}")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    _trust(claude_env, repo)
    servers = _claude(claude_env, "mcp", "list", cwd=repo)
    assert "plugin:lamar:lamar" in servers.stdout and "Failed to connect" in servers.stdout, servers.stdout

    status = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status"], cwd=repo,
                            env={**os.environ, **claude_env, "PATH": os.environ["PATH"]}, capture_output=True,
                            text=True, timeout=120, check=False)
    lines = status.stdout.splitlines()
    # the interpreter the option's wrapper starts
    runs = next(i for i, line in enumerate(lines)
                if line.startswith(f"    runs without your PATH (python {sys.executable},"))
    assert lines[runs + 1].startswith("    but its MCP server (plugin:lamar:lamar in `claude mcp list`) cannot start")
    assert f'{sys.executable} -m pip install -e ".[mcp]"' in lines[runs + 1], lines[runs + 1]


def test_with_the_mcp_sdk_the_check_says_only_what_runs(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "lamar_claude_code.plugin", "check"], capture_output=True, text=True,
                          env={**os.environ, "HOME": str(tmp_path)}, timeout=60, check=True)
    store = tmp_path / ".local" / "share" / "lamar" / "experience.db"
    assert done.stdout.splitlines() == [f"python {sys.executable}, store {store}"]
