"""`python -m lamar.bench`: arguments that would time nothing, or fail after the run, are refused first."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar.bench.__main__ import main
from tests.full_disk import capped


@pytest.mark.parametrize(("argv", "message"), [
    (["--reps", "0"], "is a finite number above 0"),
    (["--json-reps", "-1"], "is a finite number above 0"),
    (["--backends", "mem"], "--backends takes names from memory,json,sqlite"),
    (["--sizes", "ten"], "--sizes takes whole numbers of at least 1"),
    (["--sizes", "0"], "--sizes takes whole numbers of at least 1"),
    (["--eligible", "6,-1"], "--eligible takes whole numbers of at least 1"),
    (["--sizes", "10", "--eligible", "50"], "every --eligible count is above every --sizes"),
    (["--json", "{folder}"], "name a file in a folder that exists"),
    (["--json", "{folder}/absent/rows.json"], "name a file in a folder that exists"),
    # Timed the same configuration twice, as two rows.
    (["--sizes", "10,10"], "--sizes gives 10 twice; give each value once"),
    (["--eligible", "6,50,6"], "--eligible gives 6 twice"),
    (["--backends", "memory,memory"], "--backends gives memory twice; give each name once"),
    # Built a store of that many lessons in memory, or timed episodes, for ever.
    (["--sizes", "10,99999999999999999999"], "--sizes is from 1 to 1_000_000; got 99_999_999_999_999_999_999"),
    (["--reps", "99999999999999999999"], "--reps is from 1 to 100_000; got 99_999_999_999_999_999_999"),
    (["--json-reps", "1000000"], "--json-reps is from 1 to 100_000"),
])
def test_arguments_that_time_nothing_are_refused(argv: list[str], message: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # --reps 0 ended in a StatisticsError, a misspelt backend in a KeyError, --json naming a folder
    # in IsADirectoryError after the whole run.
    with pytest.raises(SystemExit) as exit_info:
        main([arg.format(folder=tmp_path) for arg in argv])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_a_small_run_writes_its_rows(tmp_path: Path) -> None:
    rows = tmp_path / "rows.json"
    assert main(["--sizes", "10", "--eligible", "6", "--backends", "memory", "--reps", "3", "--json", str(rows)]) == 0
    assert '"backend": "memory"' in rows.read_text()


def test_rows_the_disk_cannot_take_leave_the_previous_file_whole_and_say_so_in_one_line(tmp_path: Path) -> None:
    # --json was written in place: a disk that filled mid-write left a truncated file and a traceback.
    out = tmp_path / "rows.json"
    out.write_text("[]\n")
    argv = ["--sizes", "10", "--eligible", "6", "--backends", "memory", "--reps", "3", "--json", str(out)]
    # One real row is a few hundred bytes: the timing is stood in by a row past the file size limit.
    keys = ["recall_median_us", "recall_p99_us", "report_median_us", "report_p99_us", "episode_median_us",
            "similarity_median_us", "heap_mib"]
    done = capped("import lamar.bench.speed as speed\nfrom lamar.bench.arguments import command\n"
                  f"speed.measure = lambda *a: {{'note': 'x' * 20000, **dict.fromkeys({keys!r}, 0.0)}}\n"
                  f"sys.exit(command('python -m lamar.bench', lambda: speed.main({argv!r})))", tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("python -m lamar.bench: error: could not write the rows to ") and "left as it was" in line
    assert out.read_text() == "[]\n" and sorted(p.name for p in tmp_path.iterdir()) == ["rows.json"]


def test_the_help_names_the_cold_start_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    # The README runs `python -m lamar.bench --cold`, which the speed benchmark's help never named.
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "python -m lamar.bench --cold" in capsys.readouterr().out
