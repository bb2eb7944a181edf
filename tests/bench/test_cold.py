"""`python -m lamar.bench --cold`: arguments that would time nothing are refused before anything runs."""

from __future__ import annotations

import pytest

from lamar.bench.__main__ import main


@pytest.mark.parametrize(("argv", "message"), [
    (["--runs", "0"], "is a finite number above 0"), (["--hook-runs", "0"], "is a finite number above 0"), (["--reps", "0"], "is a finite number above 0"),
    (["--lessons", "0"], "is a finite number above 0"), (["--episodes", "-5"], "is a finite number above 0"),
    (["--skip", "stat"], "--skip takes names from start,open,hook,warm,cli,quickstart"),
    (["--sizes", "1000,x"], "--sizes takes whole numbers of at least 1"),
])
def test_arguments_that_time_nothing_are_refused(argv: list[str], message: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # --runs 0 ended in a StatisticsError; a misspelt --skip was ignored and ran the 40-minute section.
    with pytest.raises(SystemExit) as exit_info:
        main(["--cold", *argv])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_a_warm_section_alone_runs() -> None:
    assert main(["--cold", "--skip", "start,open,hook,cli,quickstart", "--sizes", "50", "--reps", "3"]) == 0
