"""Every script in tools/ says in its --help what it measures, in whole sentences."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent.parent / "tools"
PARSED = sorted(path for path in TOOLS.glob("*.py") if "ArgumentParser(" in path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", PARSED, ids=lambda path: path.stem)
def test_the_help_gives_the_docstrings_first_paragraph_whole(path: Path) -> None:
    # A description cut at the docstring's first line ended mid-sentence ("... kept in the").
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(TOOLS.parent), os.environ.get("PYTHONPATH")]))}
    shown = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=120,
                           env=env, cwd=TOOLS.parent, check=True).stdout
    assert first and first in " ".join(shown.split()), shown


def test_a_tool_whose_child_lacks_an_extra_says_which_to_install(tmp_path: Path) -> None:
    # langgraph_turn.py runs each backend in a child process; the child's refusal, which names the
    # extra, was swallowed into a CalledProcessError traceback.
    (tmp_path / "langchain_core.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'langchain_core'\", name='langchain_core')\n", encoding="utf-8")
    path = os.pathsep.join([str(tmp_path), str(TOOLS.parent), str(TOOLS.parent / "integrations")])
    done = subprocess.run([sys.executable, str(TOOLS / "langgraph_turn.py"), "--turns", "1"], check=False,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": path},
                          cwd=tmp_path)
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr and "the langgraph extra" in done.stderr.splitlines()[-1], done.stderr


def test_ui_pages_without_the_test_client_says_what_to_install(tmp_path: Path) -> None:
    # starlette's test client needs httpx2, which the ui extra does not bring; the tool built its
    # store first, then ended in a CalledProcessError traceback that hid starlette's own advice.
    for name in ("httpx2", "httpx"):
        (tmp_path / f"{name}.py").write_text(f"raise ModuleNotFoundError('No module named {name}', name='{name}')\n",
                                             encoding="utf-8")
    path = os.pathsep.join([str(tmp_path), str(TOOLS.parent), str(TOOLS.parent / "integrations")])
    done = subprocess.run([sys.executable, str(TOOLS / "ui_pages.py"), "--lessons", "20", "--episodes", "1"],
                          check=False, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": path, "TMPDIR": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 1, done
    assert "Traceback" not in done.stderr and "pip install httpx2" in done.stderr, done.stderr
    assert "[test]" in done.stderr and "built" not in done.stdout, done
