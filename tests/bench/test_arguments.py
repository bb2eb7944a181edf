"""The benchmarks' command lines refuse, before they start, what would time nothing, crash
half-way or never end (placement with fewer agents than namespaces looped for ever)."""

from __future__ import annotations

import subprocess
import sys
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
    (fleet, ["--lessons", "0"], "--lessons is at least 2"),
    (fleet, ["--rate", "nan"], "--rate and --turn finite and at least 0"),
    (fleet, ["--json", "{folder}"], "name a file in a folder that exists"),
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
