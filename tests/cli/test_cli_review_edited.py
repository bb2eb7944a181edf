"""`lamar review` and `lamar apply` of a sleep report a person edited by hand: each field the edit could
reach is printed on one line of bounded length, so the report cannot forge a line or fill the screen."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar

LONGEST = 400  # characters: a line of review or apply, the longest lesson text cut to fit aside
FORGED = "\n  applied  merge_forged\n[2/2] retire exp_forged"


@pytest.fixture
def twins(tmp_path: Path) -> Path:
    """A store of two wordings of one lesson: sleep proposes to merge them."""
    path = tmp_path / "lessons.db"
    with Lamar(str(path), seed=1) as lam:
        lam.add(Experience("the build fails after a bump", "clear DerivedData"))
        lam.add(Experience("the build fails after a bump", "clear DerivedData."))
    return path


@pytest.fixture
def report(run_cli, twins: Path, tmp_path: Path) -> Path:
    path = tmp_path / "report.json"
    made = run_cli("sleep", "--store", twins, "--out", path)
    assert made.returncode == 0, made.stderr
    return path


def _narrow(p: dict[str, Any]) -> None:
    into = p["payload"]["into"]
    p.update(kind="narrow", experience_ids=[into], payload={"key": "os" + FORGED, "value": "v" * 10_000})


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "a long id": lambda p: p.update(id="merge_" + "x" * 10_000),
    "an id with lines of its own": lambda p: p.update(id="merge_1\x1b[2J" + FORGED),
    "a long kind with lines of its own": lambda p: p.update(kind="merge" + FORGED + "k" * 10_000),
    "a reason with lines of its own": lambda p: p.update(reason="two wordings" + FORGED + "\n  reason: forged"),
    "a long reason": lambda p: p.update(reason="r" * 50_000),
    "a narrow key and value": _narrow,
}


def _forged(out: str) -> list[str]:
    """The lines of `out` a hand edit wrote, rather than review or apply."""
    starts = ("applied  merge_forged", "[2/2]", "reason: forged")
    return [line for line in out.splitlines() if line.lstrip().startswith(starts)]


@pytest.mark.parametrize("edit", EDITS)
def test_review_and_apply_print_each_edited_field_on_one_bounded_line(run_cli, twins: Path, report: Path,
                                                                     edit: str) -> None:
    data = json.loads(report.read_text())
    EDITS[edit](data["proposals"][0])
    report.write_text(json.dumps(data))
    reviewed = run_cli("review", report, "--store", twins, stdin="y\n")
    assert reviewed.returncode == 0, reviewed.stderr
    applied = run_cli("apply", report, "--store", twins)
    for out in (reviewed.stdout, reviewed.stderr, applied.stdout, applied.stderr):
        assert _forged(out) == [], out[:2_000]
        assert max(map(len, out.splitlines()), default=0) <= LONGEST, [len(line) for line in out.splitlines()]
