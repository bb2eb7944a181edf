"""A store path that is a symbolic link leading nowhere (a loop, or a target gone) is named as such by the
commands and the Claude Code hook, not taken for a typo or a store never made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("target", ["s.json", "gone.json"])
def test_a_link_that_leads_nowhere_is_named(tmp_path: Path, target: str) -> None:
    store = tmp_path / "s.json"
    store.symlink_to(target)
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "--store", str(store), "stats"], capture_output=True,
                          text=True, timeout=60, check=False)
    said = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{store} is a symbolic link that leads nowhere" in said and "typo" not in said, said
    assert os.readlink(store) == target and sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]


def test_the_hook_names_a_store_link_that_leads_nowhere(tmp_path: Path) -> None:
    store = tmp_path / "experience.db"
    store.symlink_to("experience.db")
    event = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit", "prompt": "fix it"}
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(store)],
                          input=json.dumps(event), capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "HOME": str(tmp_path)})
    assert (done.returncode, done.stdout) == (0, "")
    log = (tmp_path / "experience.db.claude-code.log").read_text()
    assert f"{store} is a symbolic link that leads nowhere" in log, log
