"""The shell session in docs/cli.md is typed again, command by command, and prints what the page
shows: same lines, same words, with ids, figures and chart bars (which vary) masked."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.docblocks import ROOT, parse

PAGE = ROOT / "docs" / "cli.md"
SHOWN_STORE = "/tmp/lamar-demo/experience.db"  # the path the page shows; the test uses its own folder


def mask(text: str) -> list[str]:
    """What must not vary: every word and line. What may: ids, numbers, chart bars, alignment."""
    text = re.sub(r"\b(?:exp|ep|merge|candidate)_[0-9a-f]+", "ID", text)
    text = re.sub(r"[0-9]+", "N", text)
    text = re.sub(r"[-.|*<>]{5,}", "BAR", text)
    return [re.sub(r"\s+", " ", line).strip() for line in text.splitlines()]


def test_the_documented_session_runs_as_shown(tmp_path: Path) -> None:
    blocks = parse(PAGE)
    agent = next(b for b in blocks if b.lang == "python" and "Stand-in for an agent" in b.code)
    session = next(b for b in blocks if b.lang == "console" and f"$ export LAMAR_STORE={SHOWN_STORE}" in b.code)
    (tmp_path / "agent.py").write_text(agent.code, encoding="utf-8")
    # The session count the prose gives is the figure a reader checks the output by.
    said = re.search(r"runs ([\d ]+) sessions", " ".join(PAGE.read_text(encoding="utf-8").split()))
    assert said and f"range({said.group(1).replace(' ', '')})" in agent.code, said
    commands = [line[2:] for line in session.code.splitlines() if line.startswith("$ ")]
    assert len(commands) >= 20
    # Each command is echoed, run, and its exit status shown as the page shows it.
    store = str(tmp_path / "experience.db")
    script = "exec 2>&1\n" + "".join(f'echo {_quote("$ " + c)}\n{c.replace(SHOWN_STORE, store)}\n'
                                     'rc=$?; [ $rc -ne 0 ] && echo "[exit $rc]"\n' for c in commands)
    env = {k: v for k, v in os.environ.items() if k != "LAMAR_STORE"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # lamar, python
    env["HOME"] = str(tmp_path)
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    printed = done.stdout.replace(str(tmp_path / "experience.db"), SHOWN_STORE)
    assert "Traceback" not in printed
    got, want = mask(printed), mask(session.code)
    for n, (g, w) in enumerate(zip(got, want, strict=False)):
        assert g == w, f"line {n + 1} of the session: the page shows\n  {w}\nbut the command printed\n  {g}"
    assert len(got) == len(want), printed


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"
