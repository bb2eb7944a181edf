"""`lamar review` and `lamar apply` of a sleep report a person edited by hand: each field the edit could
reach is printed on one line of bounded length, so the report cannot forge a line or fill the screen."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope

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


def _mined(p: dict[str, Any]) -> None:
    # A mined lesson's support: its traces' outcomes are the trace file's own words.
    lesson = p["payload"]["into"]
    p["evidence"][lesson] = {"traces": 2, "outcomes": {"shipped" + FORGED + "x" * 10_000: 2}, "with_tool_errors": 0}


def _sliced(p: dict[str, Any]) -> None:
    lesson = p["payload"]["into"]
    p["evidence"][lesson]["slices"] = {"os=mac" + FORGED: {"verdict": "unknown", "randomized": 0}}


def _candidate(data: dict[str, Any]) -> None:
    # A lesson admits a line break in a scope value; review printed the new lesson's scope as written.
    lesson = Experience("the build fails", "clear the cache", scope=Scope(project="trace" + FORGED),
                        id="exp_mined", status="candidate")
    data["proposals"] = [{"id": "candidate_1", "kind": "candidate", "experience_ids": [lesson.id], "reason": "mined",
                          "payload": {"experience": lesson.to_dict()}}]


def _one(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """`change` made to the report's one proposal."""
    return lambda data: change(data["proposals"][0])


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "a long id": _one(lambda p: p.update(id="merge_" + "x" * 10_000)),
    "an id with lines of its own": _one(lambda p: p.update(id="merge_1\x1b[2J" + FORGED)),
    "a long kind with lines of its own": _one(lambda p: p.update(kind="merge" + FORGED + "k" * 10_000)),
    "a reason with lines of its own": _one(lambda p: p.update(reason="two wordings" + FORGED + "\n  reason: forged")),
    "a long reason": _one(lambda p: p.update(reason="r" * 50_000)),
    "a narrow key and value": _one(_narrow),
    "a mined lesson's outcome": _one(_mined),
    "a slice's name": _one(_sliced),
    "the mining error": lambda data: data.update(summary={"mining": {"error": "timed out" + FORGED}}),
    "a new lesson's scope": _candidate,
}


def _forged(out: str) -> list[str]:
    """The lines of `out` a hand edit wrote, rather than review or apply."""
    starts = ("applied  merge_forged", "[2/2]", "reason: forged")
    return [line for line in out.splitlines() if line.lstrip().startswith(starts)]


@pytest.mark.parametrize("edit", EDITS)
def test_review_and_apply_print_each_edited_field_on_one_bounded_line(run_cli, twins: Path, report: Path,
                                                                     edit: str) -> None:
    data = json.loads(report.read_text())
    EDITS[edit](data)
    report.write_text(json.dumps(data))
    reviewed = run_cli("review", report, "--store", twins, stdin="y\n")
    assert reviewed.returncode == 0, reviewed.stderr
    applied = run_cli("apply", report, "--store", twins)
    for out in (reviewed.stdout, reviewed.stderr, applied.stdout, applied.stderr):
        assert _forged(out) == [], out[:2_000]
        assert max(map(len, out.splitlines()), default=0) <= LONGEST, [len(line) for line in out.splitlines()]


def _digests(*paths: Path) -> list[str]:
    return [hashlib.sha256(path.read_bytes()).hexdigest() for path in paths]


@pytest.mark.parametrize("twice", ["approved", "id"])
def test_a_report_with_a_key_written_twice_is_refused_with_nothing_changed(run_cli, twins: Path, report: Path,
                                                                          twice: str) -> None:
    # JSON keeps the last of two equal keys: an "approved" list added by hand above the one review
    # wrote, or an id edited in a copy of the line, was read as the other one and applied.
    text = report.read_text()
    pid = json.loads(text)["proposals"][0]["id"]
    if twice == "approved":
        text = text.replace('"format"', f'"approved": [], "approved": ["{pid}"], "format"', 1)
    else:
        text = text.replace(f'"id": "{pid}"', f'"id": "merge_edited", "id": "{pid}"', 1)
    report.write_text(text)
    before = _digests(twins, report)
    for command in ("review", "apply"):
        out = run_cli(command, report, "--store", twins, stdin="y\n")
        assert out.returncode == 1 and out.stdout == "", out.stdout
        assert out.stderr.startswith(f"lamar: error: cannot read the sleep report {report}: the key '{twice}' is "
                                     "written twice in one object") and out.stderr.count("\n") == 1, out.stderr
        assert "delete the one not meant" in out.stderr
    assert _digests(twins, report) == before


def test_a_report_saved_with_a_byte_order_mark_is_read_as_written(run_cli, twins: Path, report: Path) -> None:
    # Some editors save UTF-8 with a byte-order mark; the report was then "not valid JSON".
    report.write_bytes(b"\xef\xbb\xbf" + report.read_bytes().replace(b"\n", b"\r\n"))
    reviewed = run_cli("review", report, "--store", twins, stdin="y\n")
    assert reviewed.returncode == 0 and "1 approved, 0 rejected" in reviewed.stdout, reviewed.stderr
    applied = run_cli("apply", report, "--store", twins)
    assert applied.returncode == 0 and applied.stdout.startswith("applied 1, skipped 0"), applied.stderr
    report.write_bytes(b"\xef\xbb\xbf" + report.read_bytes())
    again = run_cli("sleep", "--store", twins, "--out", report)  # its own report, replaced without --force
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("version", ["1", 1.0, 0, True, None])
def test_a_lesson_version_edited_into_another_type_is_refused_not_passed_over(run_cli, twins: Path, report: Path,
                                                                            version: object) -> None:
    # Apply refuses a merge into a lesson edited since the report by the version the report noted;
    # a version edited into a string or a float made it skip that check and merge over the edit.
    data = json.loads(report.read_text())
    proposal = data["proposals"][0]
    for evidence in proposal["evidence"].values():
        evidence["version"] = version
    report.write_text(json.dumps(data))
    with Lamar(str(twins)) as lam:
        lam.edit(proposal["payload"]["into"], action="clear DerivedData, then rebuild")
    before = _digests(twins, report)
    out = run_cli("apply", report, "--store", twins)
    assert out.returncode == 1, out.stdout
    assert "'version' must be a whole number >= 1 (the lesson's version when proposed)" in out.stderr, out.stderr
    assert _digests(twins, report) == before


def test_review_without_its_store_prints_an_edited_lesson_id_on_one_line(run_cli, report: Path,
                                                                          tmp_path: Path) -> None:
    # With the store unavailable, review shows the ids alone: an id not in the store was shown
    # cut only when the store could say so.
    data = json.loads(report.read_text())
    data["proposals"][0].update(kind="retire", experience_ids=["exp_1" + FORGED + "x" * 10_000])
    report.write_text(json.dumps(data))
    out = run_cli("review", report, "--store", tmp_path / "elsewhere.db", stdin="n\n")
    assert out.returncode == 0 and "(store unavailable, showing ids only" in out.stderr, out.stderr
    assert _forged(out.stdout) == [] and max(map(len, out.stdout.splitlines())) <= LONGEST, out.stdout[:2_000]


@pytest.mark.parametrize(("field", "value"), [("traces", "x" * 10_000), ("with_tool_errors", -1), ("sessions", True),
                                              ("outcomes", ["shipped"]), ("outcomes", {"shipped": "2"})])
def test_a_mined_lessons_support_edited_into_another_type_is_refused(run_cli, twins: Path, report: Path,
                                                                    field: str, value: object) -> None:
    data = json.loads(report.read_text())
    proposal = data["proposals"][0]
    proposal["evidence"][proposal["payload"]["into"]] = {"traces": 2, "outcomes": {"shipped": 2},
                                                         "with_tool_errors": 0, field: value}
    report.write_text(json.dumps(data))
    before = _digests(twins, report)
    for command in ("review", "apply"):
        out = run_cli(command, report, "--store", twins, stdin="y\n")
        assert out.returncode == 1 and out.stdout == "", out.stdout[:2_000]
        assert out.stderr.startswith(f"lamar: error: proposal '{proposal['id']}': the evidence of ") \
            and f"'{field}'" in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert _digests(twins, report) == before
