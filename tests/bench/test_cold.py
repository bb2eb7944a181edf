"""`python -m lamar.bench --cold`: arguments that would time nothing are refused before anything runs."""

from __future__ import annotations

import pytest

from lamar.bench.__main__ import main


@pytest.mark.parametrize(("argv", "message"), [
    (["--runs", "0"], "is a finite number above 0"), (["--hook-runs", "0"], "is a finite number above 0"),
    (["--reps", "0"], "is a finite number above 0"),
    (["--lessons", "0"], "is a finite number above 0"), (["--episodes", "-5"], "is a finite number above 0"),
    (["--skip", "stat"], "--skip takes names from start,open,hook,warm,cli,quickstart"),
    (["--sizes", "1000,x"], "--sizes takes whole numbers of at least 1"),
    # Printed the header alone and exit 0; timed a size twice; built its stores until the memory ran out.
    (["--skip", "start,open,hook,warm,cli,quickstart"], "--skip leaves out every section"),
    (["--sizes", "1000,1000"], "--sizes gives 1000 twice"),
    (["--episodes", "99999999999999999999"], "--episodes is from 1 to 1_000_000; got 99_999_999_999_999_999_999"),
    (["--lessons", "1000000"], "--lessons is from 1 to 1_000"),
    (["--runs", "10001"], "--runs is from 1 to 10_000"), (["--hook-runs", "10001"], "--hook-runs is from 1 to 10_000"),
    (["--reps", "100001"], "--reps is from 1 to 100_000"), (["--sizes", "1000001"], "--sizes is from 1 to 1_000_000"),
])
def test_arguments_that_time_nothing_are_refused(argv: list[str], message: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # --runs 0 ended in a StatisticsError; a misspelt --skip was ignored and ran the 40-minute section.
    with pytest.raises(SystemExit) as exit_info:
        main(["--cold", *argv])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_a_warm_section_alone_runs() -> None:
    assert main(["--cold", "--skip", "start,open,hook,cli,quickstart", "--sizes", "50", "--reps", "3"]) == 0
