"""docs/guarantees.md shows its five examples (tests/test_docs.py runs them) and publishes the
held-out secret figures that tests/safety/test_heldout_figures.py measures."""

from __future__ import annotations

import re
from pathlib import Path

from tests.safety import test_heldout_figures as figures
from tests.safety.heldout_corpus import ORDINARY, SECRETS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "guarantees.md"


def test_the_page_has_its_five_examples_with_their_output() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert len(re.findall(r"```python\n.*?```\s*\n<!-- output -->\n```text\n", text, flags=re.DOTALL)) == 5


def test_the_published_held_out_figures_are_the_measured_ones() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert f"**{figures.FLOOR_CAUGHT} of {len(SECRETS)} (" in text
    assert f"**{figures.CEILING_FLAGGED} of {len(ORDINARY)} (" in text
    assert "python -m pytest tests/safety/test_heldout_figures.py -s -p no:cacheprovider" in text
