"""The gym's progress: a bar redrawn in place on a terminal, plain lines at each tenth and every few seconds
anywhere else."""

from __future__ import annotations

import io
import subprocess
import sys
import time

import pytest

from lamar.gym.__main__ import ProgressBar, main


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(progress: ProgressBar, total: int) -> None:
    for done in range(total + 1):
        progress(done, total)


def test_progress_on_a_log_is_a_line_at_each_tenth_and_no_redraw() -> None:
    log = io.StringIO()
    progress = ProgressBar(log)
    _run(progress, 40)
    _run(progress, 5)  # a mode that runs a second set of jobs starts again at 0
    out = log.getvalue()
    assert "\r" not in out
    counts = [line.split(" runs")[0] for line in out.splitlines()]
    assert counts == [f"{n}/40" for n in range(0, 41, 4)] + [f"{n}/5" for n in range(6)]


def test_progress_on_a_log_writes_a_line_when_the_interval_passes_between_tenths() -> None:
    log, now = io.StringIO(), [0.0]
    progress = ProgressBar(log, every=10.0, clock=lambda: now[0])
    for done, at in [(0, 0.0), (1, 6.0), (2, 12.0), (3, 14.0), (4, 30.0), (4, 45.0), (10, 46.0), (11, 47.0)]:
        now[0] = at
        progress(done, 100)
    counts = [line.split(" runs")[0] for line in log.getvalue().splitlines()]
    # a line 10 s after the last one, when a job has finished since; at each tenth whatever the time
    assert counts == ["0/100", "2/100", "4/100", "10/100"]


def test_the_gym_piped_writes_progress_lines_while_it_runs() -> None:
    # stdout and stderr are pipes, as under `| tee` or in a CI log: every line is flushed as it comes
    proc = subprocess.Popen([sys.executable, "-m", "lamar.gym", "--episodes", "300", "--seeds", "4",
                             "--policies", "lamar,none,oracle", "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    seen: list[tuple[str, bool]] = []
    started = time.perf_counter()
    for line in proc.stderr:
        seen.append((line.split(" runs")[0], proc.poll() is None))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "lamar" in out, time.perf_counter() - started
    counts = [count for count, _ in seen]
    assert counts == [f"{n}/12" for n in (0, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12)]
    assert sum(running for _, running in seen) >= 3, seen  # read while the run went on, not at its end


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
