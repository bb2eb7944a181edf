"""The hooks and the plugin run on Lamar alone: the `claude-code` extra (the Agent SDK) is for the SDK's callbacks."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.hook_answers import lessons_given

from .conftest import ROOT, payload


def _without_sdk(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The environment with `claude_agent_sdk` unimportable, as in a virtual environment without the extra."""
    blocker = tmp_path / "blocker" / "claude_agent_sdk"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('claude-agent-sdk is not installed')\n")
    return {**env, "PYTHONPATH": os.pathsep.join([str(blocker.parent), env["PYTHONPATH"]])}


def test_the_installed_hooks_inject_lessons_without_the_agent_sdk(repo: Path, env: dict[str, str], store: Path,
                                                                   tmp_path: Path) -> None:
    bare = _without_sdk(env, tmp_path)
    blocked = subprocess.run([sys.executable, "-c", "import claude_agent_sdk"], env=bare, capture_output=True,
                             timeout=60, check=False)
    assert blocked.returncode == 1 and b"not installed" in blocked.stderr
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "install", "--store", str(store)],
                          cwd=repo, env=bare, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][-1]["hooks"][0]["command"]
    event = payload("UserPromptSubmit", "s1", repo, prompt="the tests fail with KeyError")
    answer = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event), env=bare, capture_output=True,
                            text=True, timeout=60, check=False)
    assert answer.returncode == 0, answer.stderr
    given = lessons_given(store, "s1", answer.stdout, event["prompt"])
    assert given is None or "<lamar-lessons>" in given


def test_the_documented_install_asks_for_no_extra_the_hooks_do_not_need() -> None:
    """docs/claude-code.md installed `.[claude-code]` for the hooks: the Agent SDK, which bundles a
    Claude Code binary of its own, and which neither the hooks nor the plugin import."""
    page = (ROOT / "docs" / "claude-code.md").read_text()
    first = re.search(r"```console\n\$ (.*?)\n", page.split("## Install in two commands", 1)[1])
    assert first is not None
    assert re.search(r"pip install -e \.(\s|$)", first.group(1)), first.group(1)
