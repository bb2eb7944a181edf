"""The gym's progress: a bar redrawn in place on a terminal, plain lines at each quarter anywhere else."""

from __future__ import annotations

import io

import pytest

from lamar.gym.__main__ import ProgressBar, main


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(progress: ProgressBar, total: int) -> None:
    for done in range(total + 1):
        progress(done, total)


def test_progress_on_a_log_is_a_line_at_each_quarter_and_no_redraw() -> None:
    log = io.StringIO()
    progress = ProgressBar(log)
    _run(progress, 40)
    _run(progress, 8)  # a mode that runs a second set of jobs starts again at 0
    out = log.getvalue()
    assert "\r" not in out
    counts = [line.split(" runs")[0] for line in out.splitlines()]
    assert counts == ["0/40", "10/40", "20/40", "30/40", "40/40", "0/8", "2/8", "4/8", "6/8", "8/8"]


def test_progress_on_a_terminal_is_a_bar_redrawn_in_place() -> None:
    terminal = Terminal()
    _run(ProgressBar(terminal), 40)
    out = terminal.getvalue()
    assert out.count("\r") == 41 and out.endswith("\n") and out.count("\n") == 1
    assert "[" + "#" * 30 + "] 40/40 runs" in out


def test_the_gym_writes_no_redraw_to_a_stderr_that_is_no_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--episodes", "100", "--seeds", "1", "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines()[-1].startswith("5/5 runs")


def test_quiet_writes_no_progress(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--episodes", "100", "--seeds", "1", "--workers", "1", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
