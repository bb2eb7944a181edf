"""The examples of docs/guarantees.md run as written and print what the page says they print.

Each ```python block runs alone in a fresh folder; the ```text block after `<!-- output -->`
is its exact stdout (the docs' code-block convention)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guarantees.md"
_BLOCK = re.compile(r"```python\n(.*?)```\s*\n<!-- output -->\n```text\n(.*?)```", re.DOTALL)


def _examples() -> list[tuple[str, str]]:
    return _BLOCK.findall(PAGE.read_text(encoding="utf-8"))


def test_the_page_has_its_three_examples() -> None:
    assert len(_examples()) == 3


@pytest.mark.parametrize("index", range(3))
def test_each_example_prints_what_the_page_says(index: int, tmp_path: Path) -> None:
    code, expected = _examples()[index]
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected


def test_the_published_held_out_figures_match_the_test_floors() -> None:
    from tests.safety import test_heldout_figures as figures
    from tests.safety.heldout_corpus import ORDINARY, SECRETS

    text = PAGE.read_text(encoding="utf-8")
    assert f"**{figures.FLOOR_CAUGHT} of {len(SECRETS)} (" in text
    assert f"**{figures.CEILING_FLAGGED} of {len(ORDINARY)} (" in text
