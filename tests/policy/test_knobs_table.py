"""docs/decisions.md's table of the knobs names each field of Policy with its default and its range, and
both Policy and Lamar(...) take every value in that range and refuse the values just outside it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from lamar import Lamar, LamarError, Policy, Signal

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "decisions.md"
# Each range the table may write, with values inside it and values just outside it.
PROBES: dict[str, tuple[list[Any], list[Any]]] = {
    "a number >= 0": ([0, 0.65, 1e6], [-1e-9, float("inf"), float("nan"), True, "1"]),
    "a whole number >= 1": ([1, 3, 1000], [0, 2.5, 3.0, True, "3"]),
    "[0, 1)": ([0, 0.0, 0.5, 0.999], [1, 1.0, -1e-9, float("nan")]),
    "(0, 1]": ([1, 1.0, 1e-9], [0, 1.000001, -0.5]),
    "(0, 1)": ([1e-9, 0.5, 0.999], [0, 1, 1.0]),
    "seconds >= 0, or None": ([None, 0, 3600.5], [-1, float("inf"), True]),
    "a Signal or a reward in [-1, 1], or None": ([None, Signal.SHIPPED, -1, 1, 0.5], [1.5, -1.01, float("nan")]),
}


def _rows() -> list[list[str]]:
    table = DOC.read_text(encoding="utf-8").split("## The knobs\n", 1)[1].split("\n## ", 1)[0]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()
            if re.match(r"\| `\w+` \|", line)]


def test_the_table_names_every_field_with_its_default() -> None:
    fields = dataclasses.fields(Policy)
    assert [row[0].strip("`") for row in _rows()] == [f.name for f in fields]
    assert [row[1] for row in _rows()] == [str(f.default) for f in fields]


@pytest.mark.parametrize("row", _rows(), ids=lambda row: row[0].strip("`"))
def test_the_engine_takes_the_range_the_table_gives(row: list[str]) -> None:
    name, written = row[0].strip("`"), row[2]
    assert written in PROBES, f"{name}: the range {written!r} has no probes here"
    inside, outside = PROBES[written]
    for value in inside:
        assert getattr(Policy(**{name: value}), name) == value
        Lamar(":memory:", **{name: value}).close()
    for value in outside:
        with pytest.raises(LamarError, match=name if name != "pending_outcome" else "reward"):
            Policy(**{name: value})
        with pytest.raises(LamarError, match=name if name != "pending_outcome" else "reward"):
            Lamar(":memory:", **{name: value})


def test_a_warmup_that_is_no_count_of_tries_is_refused_by_policy_as_by_lamar() -> None:
    # Lamar(warmup=...) takes a whole number only; Policy is the same record and asks the same.
    with pytest.raises(LamarError, match="warmup must be a whole number, at least 1; got 2.5"):
        Policy(warmup=2.5)
    with pytest.raises(LamarError, match="warmup must be a whole number, at least 1; got True"):
        Policy(warmup=True)
