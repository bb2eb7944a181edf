"""The examples in the Guarantees section run as written and print what the text says they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _section() -> str:
    return (ROOT / "docs" / "guarantees.md").read_text(encoding="utf-8")


def test_python_examples_print_what_they_claim() -> None:
    blocks = re.findall(r"```python\n(.*?)```", _section(), flags=re.DOTALL)
    assert len(blocks) == 2
    for block in blocks:
        expected = [line[3:] for line in block.splitlines() if line.startswith("#> ")]
        out = io.StringIO()
        # The documented example is the code under test, so it is run as written.
        with contextlib.redirect_stdout(out):
            exec(compile(block, "guarantees.md", "exec"), {})  # noqa: S102
        assert out.getvalue().splitlines() == expected
