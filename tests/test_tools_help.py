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
