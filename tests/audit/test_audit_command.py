"""`python -m lamar.audit` refuses, in one line with status 2, what would fill the memory or
mix its modes, and says in one line with status 1 when its --json file stops taking rows."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lamar.audit.__main__ import main

TINY = ["--quiet", "--runs", "1", "--episodes", "200", "--scenario", "null", "--jobs", "1"]


@pytest.mark.parametrize(("argv", "message"), [
    # Built their list of runs or replicates until MemoryError, a traceback.
    (["--runs", "99999999999999999999"], "--runs is at most 100_000 per scenario; got 99_999_999_999_999_999_999"),
    (["--null", "99999999999999999999"], "--null is from 2 to 1_000_000"),
    # --physics printed its limits and --null or --summarize was silently not done.
    (["--physics", "--null", "5"], "argument --null: not allowed with argument --physics"),
    (["--summarize", "rows.jsonl", "--physics"], "argument --physics: not allowed with argument --summarize"),
    # `--json "$OUT"` with OUT unset ran and wrote no file, status 0.
    ([*TINY, "--json", ""], "--json names no file (an empty name)"),
    # One run went on for ever, printing nothing.
    (["--episodes", "99999999999999999999"], "--episodes is from 100 to 1_000_000 per run; got 99_999_999_999"),
    # Ran the scenario's runs twice and counted each twice in its table.
    (["--scenario", "null", "--scenario", "flip", "--scenario", "null"], "--scenario null is given twice"),
    # Printed its own table with exit 0 and wrote no --json file, applied no --lamar tuning.
    (["--physics", "--json", "rows.jsonl"], "--json is not used by --physics, which prints its own table"),
    (["--null", "4", "--json", "rows.jsonl"], "--json is not used by --null"),
    (["--null", "4", "--lamar", "holdout=0.3"], "--lamar is not used by --null"),
    (["--summarize", "rows.jsonl", "--runs", "5"], "--runs is not used by --summarize"),
    # Started a pool of that many processes (one per run) until the machine stopped.
    ([*TINY, "--jobs", "99999"], "--jobs is from 1 to"),
    ([*TINY, "--lamar", "holdout=0.3,holdout=0.1"], "holdout is given twice; give each knob once"),
])
def test_the_command_refuses_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full, a file that is always full")
def test_a_json_file_that_stops_taking_rows_is_one_line_and_status_1(capsys: pytest.CaptureFixture[str]) -> None:
    # An OSError traceback from the row's write, then another from closing the file.
    assert main([*TINY, "--json", "/dev/full"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--json /dev/full: cannot append a run's row (No space left on device)" in err


def test_a_json_file_gets_every_row(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    assert main([*TINY, "--runs", "2", "--json", str(rows)]) == 0
    assert len(rows.read_text().splitlines()) == 2
