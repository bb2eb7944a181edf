"""The benchmarks' command lines refuse, before they start, what would time nothing, crash
half-way or never end (placement with fewer agents than namespaces looped for ever)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lamar.bench.fleet.cli import main as fleet
from lamar.bench.floor import main as floor
from lamar.bench.growth import main as growth
from lamar.bench.placement import main as placement
from lamar.bench.rows import main as rows

CASES = [
    (placement, ["--agents", "5", "--namespaces", "10"], "--agents is at least --namespaces (10)"),
    (placement, ["--namespaces", "0"], "--namespaces is a finite number above 0"),
    (rows, ["--number", "0"], "--number is a finite number above 0"),
    (growth, ["--rows", "0"], "--rows is a finite number above 0"),
    (growth, ["--every", "0"], "--every is a finite number above 0"),
    (growth, ["--episodes", "0", "--sqlite-episodes", "0", "--plain-episodes", "0", "--plain-sqlite-episodes", "0"],
     "one of them at least 1"),
    (floor, ["--seconds", "0"], "--seconds is a finite number above 0"),
    (floor, ["--clients", "0"], "--clients takes whole numbers of at least 1"),
    (fleet, ["--seconds", "0"], "--seconds is a finite number above 0"),
    (fleet, ["--clients", "x"], "--clients takes whole numbers of at least 1"),
    (fleet, ["--workloads", "nope"], "--workloads takes names from shared,spread"),
    (fleet, ["--clients", "4,4"], "--clients gives 4 twice"),
    (fleet, ["--lessons", "0"], "--lessons is at least 2"),
    (fleet, ["--rate", "nan"], "--rate and --turn finite and at least 0"),
    (fleet, ["--json", "{folder}"], "name a file in a folder that exists"),
    # `--json "$OUT"` with OUT unset ran and wrote no file, status 0.
    (fleet, ["--json", ""], "--json names no file (an empty name)"),
]


@pytest.mark.parametrize(("main", "argv", "message"), CASES)
def test_arguments_that_time_nothing_are_refused(main, argv: list[str], message: str,  # type: ignore[no-untyped-def]
                                                 tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([arg.format(folder=tmp_path) for arg in argv])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_placement_runs_with_one_agent_per_namespace() -> None:
    done = subprocess.run([sys.executable, "-m", "lamar.bench.placement", "--agents", "10", "--namespaces", "10"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "10 agents over 10 namespaces" in done.stdout


def test_a_json_file_that_cannot_be_created_is_refused_before_the_run(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # A folder that exists but where the file cannot be made (read-only, or a name too long) used to
    # pass the check: the run finished, then ended in a traceback and wrote nothing.
    from lamar.gym.__main__ import main as gym

    with pytest.raises(SystemExit) as exit_info:
        gym(["--episodes", "100", "--seeds", "1", "--workers", "1", "--quiet", "--json", str(tmp_path / ("r" * 300))])
    assert exit_info.value.code == 2 and "cannot write it" in capsys.readouterr().err


def test_the_early_check_leaves_no_file_and_an_existing_one_as_it_was(tmp_path: Path) -> None:
    import argparse

    from lamar.bench.arguments import writable

    writable(argparse.ArgumentParser(), "--json", str(tmp_path / "new.json"))
    (tmp_path / "old.json").write_text("[1]\n")
    writable(argparse.ArgumentParser(), "--json", str(tmp_path / "old.json"))
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"] and (tmp_path / "old.json").read_text() == "[1]\n"


QUICK_RUNS = [
    ["lamar.gym", "--seeds", "1", "--episodes", "200", "--workers", "1", "--quiet"],
    ["lamar.audit", "--runs", "1", "--episodes", "200", "--scenario", "null"],
    ["lamar.bench", "--sizes", "100", "--eligible", "6", "--reps", "3", "--backends", "memory"],
]


@pytest.mark.parametrize("argv", QUICK_RUNS, ids=lambda argv: argv[0])
def test_a_reader_that_went_away_ends_the_run_quietly(argv: list[str]) -> None:
    # `python -m lamar.gym | head -3` printed a BrokenPipeError traceback; a pipe whose reader is
    # already gone makes the first write fail every time.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", *argv], stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=120, check=False)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (0, "")


def test_ctrl_c_ends_the_gym_in_one_line_with_its_workers_and_no_file(tmp_path: Path) -> None:
    # A Ctrl+C printed a traceback from the parent and one from every worker.
    rows = tmp_path / "rows.json"
    child = subprocess.Popen(  # a process group of its own, as a terminal's foreground job
        [sys.executable, "-m", "lamar.gym", "--seeds", "20", "--episodes", "8000", "--workers", "2",
         "--json", str(rows)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # noqa: PLW1509 - a fresh child
    assert child.stderr is not None
    assert child.stderr.readline().startswith("0/100 runs")
    time.sleep(1.0)  # the workers are running, far from done (100 jobs)
    os.killpg(child.pid, signal.SIGINT)  # what a terminal's Ctrl+C does: the parent and every worker
    _, err = child.communicate(timeout=30)
    assert child.returncode == 130 and err.strip() == "python -m lamar.gym: error: interrupted"
    time.sleep(0.5)
    with pytest.raises(ProcessLookupError):
        os.killpg(child.pid, 0)  # no worker is left behind
    assert not rows.exists()


def test_an_os_error_of_the_run_itself_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the --json file the run could not write is one line: a bug that fails on a file of the
    # run's own (its temporary store, a program it starts) must show where it happened.
    from lamar.bench import speed
    from lamar.bench.arguments import command

    def broken(*args: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", "/tmp/gone/store.db")

    monkeypatch.setattr(speed, "measure", broken)
    argv = ["--sizes", "10", "--eligible", "6", "--backends", "memory", "--reps", "3"]
    with pytest.raises(FileNotFoundError, match="store.db"):
        command("python -m lamar.bench", lambda: speed.main(argv))
