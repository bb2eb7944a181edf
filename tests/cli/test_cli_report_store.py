"""`lamar review` and `lamar apply` of a report made with `lamar sleep --store X`, run without --store."""

from __future__ import annotations

import json
from pathlib import Path

from lamar import Lamar, Status

from .conftest import Run


def test_review_and_apply_read_the_store_the_report_was_made_from(lamar_cli: Run, sqlite_store: Path,
                                                                 ids: dict[str, str], tmp_path: Path) -> None:
    # Without --store they read the default store (or the Claude Code hooks'), where none of the report's lessons
    # is: review showed "(not in this store)" and apply refused every proposal with no word of --store.
    report = tmp_path / "report.json"
    made = lamar_cli("sleep", "--store", sqlite_store, "--out", report)
    assert made.returncode == 0, made.stderr
    assert json.loads(report.read_text())["store"] == str(sqlite_store.resolve())
    merge = next(p["id"] for p in json.loads(report.read_text())["proposals"] if p["kind"] == "merge")

    reviewed = lamar_cli("review", report, stdin="y\nn\n")
    assert reviewed.returncode == 0, reviewed.stderr
    assert f"store: {sqlite_store.resolve()} (the one {report} was made from)" in reviewed.stderr
    assert "not in this store" not in reviewed.stdout and "REFUSED" not in reviewed.stdout
    applied = lamar_cli("apply", report)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert f"applied  {merge}" in applied.stdout
    with Lamar(str(sqlite_store)) as lam:
        assert lam.get(ids["twin"]).status is Status.RETIRED

    # Another store named on purpose is read, with a word of the store the report was made from.
    other = tmp_path / "other.db"
    Lamar(str(other)).close()
    elsewhere = lamar_cli("apply", report, "--store", other)
    assert f"{report} was made from {sqlite_store.resolve()}, not from {other}" in elsewhere.stderr
