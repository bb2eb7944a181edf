"""A short gym on fixed seeds: the ordering of the policies, the fossil's fall, reproducible flat rows."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lamar.extras import install_command
from lamar.gym import GymConfig, GymResult, check_targets, plot_result, render, run_gym
from lamar.gym.__main__ import main
from lamar.gym.metrics import column, runs_of
from lamar.gym.plot import require_matplotlib
from lamar.gym.recorder import needed_randomized
from lamar.policy.alpha import lesson_alpha
from tests.full_disk import capped

SHORT = GymConfig(episodes=3000, seeds=3, workers=1)
TINY = ("--episodes", "100", "--seeds", "1", "--workers", "1", "--quiet")  # a run that ends in a second


@pytest.fixture(scope="module")
def result() -> GymResult:
    return run_gym(SHORT)


def mean(result: GymResult, policy: str, key: str) -> float:
    values = column(runs_of(result.runs, policy), key)
    return sum(values) / len(values)


def test_after_the_flip_oracle_beats_lamar_and_lamar_beats_similarity(result: GymResult) -> None:
    assert mean(result, "oracle", "success_post") >= mean(result, "lamar", "success_post")
    pairs = zip(runs_of(result.runs, "lamar"), runs_of(result.runs, "similarity"), strict=True)
    for lamar, similarity in pairs:
        assert lamar["seed"] == similarity["seed"]
        assert lamar["success_post"] > similarity["success_post"] + 0.05


def test_similarity_cannot_disbelieve_so_after_the_flip_it_does_worse_than_nothing(result: GymResult) -> None:
    assert mean(result, "similarity", "success_post") < mean(result, "none", "success_post")
    assert mean(result, "similarity", "share_fossil_post") > 0.03  # still picks it, at random


def test_lamar_stops_injecting_the_fossil_after_the_flip(result: GymResult) -> None:
    for row in runs_of(result.runs, "lamar"):
        assert row["share_fossil_pre"] > 0.05
        assert row["share_fossil_post"] < row["share_fossil_pre"] / 4
        assert row["fossil_off_latency"] is not None and row["fossil_off_latency"] < 300


def test_captured_share_is_measured_between_none_and_the_oracle(result: GymResult) -> None:
    for phase in ("pre", "post"):
        assert column(runs_of(result.runs, "none"), f"captured_{phase}") == [0.0] * 3
        assert column(runs_of(result.runs, "oracle"), f"captured_{phase}") == [1.0] * 3
        assert 0.2 < mean(result, "lamar", f"captured_{phase}") <= 1.0


def test_only_lamar_holds_lessons_out_and_its_holdout_cost_is_counted(result: GymResult) -> None:
    assert 0.0 < mean(result, "lamar", "holdout_cost_pre") < 0.1
    for policy in ("none", "similarity", "qvalue", "oracle"):
        assert mean(result, policy, "holdout_cost_pre") == 0.0


def test_verdicts_are_counted_against_the_truth_of_the_moment(result: GymResult) -> None:
    for row in runs_of(result.runs, "lamar"):
        assert (row["helpful_flip"], row["harmful_flip"]) == (4, 4)
        assert (row["helpful_end"], row["harmful_end"]) == (3, 5)  # the fossil changed sides
        assert row["wrong_flip"] == sum(row[k] for k in row if k.startswith("wrong_") and k.endswith("_flip")
                                        and k != "wrong_flip")
        assert row["holdout_q"] > 0.0
    lessons = [row for row in result.lessons if row["seed"] == 0]
    assert len(lessons) == 24
    fossil = next(row for row in lessons if row["kind"] == "fossil")
    assert fossil["effect_pre"] > 0 > fossil["effect_post"]
    # both sides are randomized by the evidence coin; each lesson's bound is at its own level
    assert fossil["needed_flip"] == needed_randomized(0.2, 0.04, lesson_alpha(0.02, fossil["rank"], 1))
    assert fossil["needed_end"] == needed_randomized(
        -0.2, 0.04, lesson_alpha(0.05, fossil["rank"], fossil["restarts_end"] + 1))
    inert = next(row for row in lessons if row["kind"] == "inert")
    assert inert["needed_end"] is None and inert["provable_end"] is False


def test_the_same_seeds_give_identical_rows_however_many_workers(result: GymResult) -> None:
    again = run_gym(SHORT, workers=2)
    assert again.workers == 2
    assert again.runs == result.runs
    assert again.lessons == result.lessons
    assert again.series == result.series


def test_rows_are_flat_json_objects(result: GymResult, tmp_path: Path) -> None:
    path = tmp_path / "gym.json"
    result.to_json(path)
    rows = json.loads(path.read_text())
    assert isinstance(rows, list) and all(isinstance(row, dict) for row in rows)
    assert {row["table"] for row in rows} == {"run", "lesson", "series"}
    assert sum(row["table"] == "run" for row in rows) == 5 * 3
    for row in rows:
        assert all(v is None or isinstance(v, (str, int, float, bool)) for v in row.values())
        assert all(not (isinstance(v, float) and math.isnan(v)) for v in row.values())
    windows = [row for row in rows
               if row.get("series") == "success" and row["policy"] == "none" and row["seed"] == 0]
    assert len(windows) == SHORT.episodes // SHORT.window


def test_the_report_prints_every_table_and_judges_every_target(result: GymResult) -> None:
    text = render(result)
    for heading in ("1. Success rate by phase", "2. Share of injected slots", "3. lamar's verdicts",
                    "4. The fossil", "Lamar's goals"):
        assert heading in text
    targets = check_targets(result)
    assert len(targets) == 11
    assert {t.status for t in targets} <= {"PASS", "MISS", "n/a"}
    by_name = {t.name: t for t in targets}
    assert by_name["similarity post-flip worse than none"].status == "PASS"


def test_plot_draws_a_png(result: GymResult, tmp_path: Path) -> None:
    path = tmp_path / "gym.png"
    plot_result(result, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plotting_without_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=re.escape(f"the plot extra: {install_command('plot')}")):
        require_matplotlib()


def test_the_command_runs_and_writes_rows(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    proc = subprocess.run(
        [sys.executable, "-m", "lamar.gym", "--episodes", "400", "--seeds", "2", "--policies",
         "none,similarity,lamar,oracle", "--workers", "2", "--json", str(out)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "1. Success rate by phase" in proc.stdout and "elapsed:" in proc.stdout
    assert "8/8 runs" in proc.stderr  # the progress bar
    # A first run explains itself and does not read as a failed product: the goals need --goals.
    assert "What this shows:" in proc.stdout and "lamar captured" in proc.stdout
    assert "MISS" not in proc.stdout and "PASS" not in proc.stdout and "goals (set for" not in proc.stdout
    rows = json.loads(out.read_text())
    policies = {row["policy"] for row in rows if row["table"] == "run"}
    assert policies == {"none", "similarity", "lamar", "oracle"}


def test_goals_print_their_pass_and_miss_lines_and_the_run_still_exits_0(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--episodes", "400", "--seeds", "2", "--workers", "1", "--quiet", "--goals"]) == 0
    out = capsys.readouterr().out
    assert "Lamar's goals (set for" in out and "Lamar's goals in a moving world" in out
    assert "MISS" in out or "PASS" in out
    assert "What this shows:" not in out


def test_the_command_refuses_an_unknown_policy(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--policies", "none,bandit"])
    assert exit_info.value.code == 2
    assert "choose from none, similarity, qvalue, lamar, oracle" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--family", "0"], "--family is the number of worlds to draw, from 1 to 100_000"),
    (["--family", "-3", "--peers"], "; got -3"),
    # A huge count raised OverflowError, or built its job list until the memory ran out.
    (["--seeds", "99999999999999999999"], "seeds must be at most 100_000; got 99_999_999_999_999_999_999"),
    (["--seeds", "1000000000"], "seeds must be at most 100_000"),
    (["--family", "1000000000"], "(the reported worlds stop where the tuning worlds start); got 1_000_000_000"),
    (["--lessons", "1000000000", "--k", "2"], "lessons must be at most 1_000"),
    (["--lamar", "holdot=0.1"], "no knob 'holdot'; the knobs are alpha_harms, alpha_helps, discount"),
    (["--k", "-1"], "k is the lesson slots per episode, from 1 to 5 (a task has 6 lessons, --lessons); got -1"),
    # --k 0 injected nothing (captured: nan%) and --k 99 every lesson of the task, with exit 0.
    (["--k", "0", *TINY], "from 1 to 5 (a task has 6 lessons, --lessons); got 0"),
    (["--k", "6", *TINY], "from 1 to 5 (a task has 6 lessons, --lessons); got 6"),
    (["--k", "99", "--lessons", "20", *TINY], "from 1 to 19 (a task has 20 lessons, --lessons); got 99"),
    (["--first-seed", "-3"], "first_seed must be >= 0; got -3"),
    # `--json "$OUT"` with OUT unset ran and wrote no file, status 0.
    (["--json", "", *TINY], "--json names no file (an empty name)"),
    # `--plot "$PNG"` with PNG unset ran and drew no file, status 0; a missing folder failed after the run.
    (["--plot", "", *TINY], "--plot names no file (an empty name)"),
    (["--plot", "/nonexistent-folder/gym.png", *TINY], "--plot /nonexistent-folder/gym.png: name a file in a folder"),
    # Built every world's episodes before the first one, silently, for ever.
    (["--episodes", "99999999999999999999"], "episodes must be at most 1_000_000; got 99_999_999_999_999_999_999"),
    # Every report fell due after the run's end: lamar learnt nothing and the tables said nothing of it.
    (["--report-delay", "99999999999999999999"], "report_delay is at most half the run, 4_000 episodes"),
    (["--report-delay", "51", *TINY], "report_delay is at most half the run, 50 episodes of --episodes 100"),
    # Started that many processes at once (a pool of 100 000 with --seeds 100000) until the machine stopped.
    ([*TINY, "--workers", "99999"], "--workers is from 1 to"),
    # The last of a knob given twice won, silently; a tuning with no lamar among the policies ran untuned.
    (["--lamar", "discount=0.99,discount=0.9", *TINY], "discount is given twice; give each knob once"),
    (["--lamar", "discount=0.99", "--policies", "none,oracle", *TINY], "the policies none, oracle leave it out"),
])
def test_the_command_refuses_what_would_measure_nothing(argv: list[str], message: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # An empty family printed empty tables and exit 0; a misspelt knob a Python TypeError.
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["--variants", "--json", "rows.json"], "--json is not used by --variants"),
    (["--volume", "--json", "rows.json"], "--json is not used by --volume"),
    (["--variants", "--plot", "gym.png"], "--plot is not used by --variants"),
    (["--family", "2", "--goals"], "--goals is not used by --family"),
    (["--frontier", "--variants"], "--variants is not used by --frontier"),
    (["--tuning-seeds"], "--tuning-seeds draws the worlds of --family N"),
    (["--volume", "--episodes", "100"], "--episodes is not used by --volume, which runs its own project"),
    (["--volume", "--policies", "lamar"], "--policies is not used by --volume"),
    (["--volume", "--context"], "--context is not used by --volume"),
])
def test_a_flag_the_mode_would_ignore_is_refused(argv: list[str], message: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # --variants --json rows.json ran, printed its table and wrote no file, with exit 0.
    with pytest.raises(SystemExit) as exit_info:
        main([arg if not arg.endswith((".json", ".png")) else str(tmp_path / arg) for arg in argv])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_a_json_path_that_cannot_be_written_is_refused_before_the_run(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # The run used to finish, then end in IsADirectoryError or FileNotFoundError.
    for where in (tmp_path, tmp_path / "absent" / "rows.json"):
        with pytest.raises(SystemExit) as exit_info:
            main(["--episodes", "100", "--seeds", "1", "--workers", "1", "--quiet", "--json", str(where)])
        assert exit_info.value.code == 2 and "name a file in a folder that exists" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "missing", "extra"), [
    (["--plot", "gym.png"], "matplotlib", "plot"),
    (["--peers"], "vowpalwabbit", "peers"),
])
def test_a_missing_optional_package_is_a_usage_error_before_the_run(option, missing, extra, monkeypatch, capsys,
                                                                    tmp_path):
    """Without matplotlib or Vowpal Wabbit the gym ended in a traceback (--peers: from inside a worker)."""
    monkeypatch.setitem(sys.modules, missing, None)  # None in sys.modules: not installed
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main([*option, "--episodes", "200", "--seeds", "1"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert f"error: the gym's peer policies need {missing}" in err or f"needs {missing}" in err
    assert f"the {extra} extra: {install_command(extra)}" in err and "Traceback" not in err and "runs" not in err


def test_rows_the_disk_cannot_take_leave_the_previous_file_whole_and_say_so_in_one_line(tmp_path: Path) -> None:
    # --json was written in place: a run cut short mid-write left a truncated file over the previous good one.
    out = tmp_path / "rows.json"
    previous = '[{"table":"run","policy":"lamar"}]\n'
    out.write_text(previous)
    done = capped(f"from lamar.gym.__main__ import main; sys.exit(main([*{TINY!r}, '--json', {str(out)!r}]))",
                   tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("python -m lamar.gym: error: could not write the rows to ") and "left as it was" in line
    assert out.read_text() == previous
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.json"]  # no temporary copy left behind


@pytest.mark.parametrize("write", ["GymResult.to_json", "modes"])
def test_every_writer_of_rows_replaces_the_file_whole_or_not_at_all(write: str, tmp_path: Path) -> None:
    # --family and --frontier wrote their rows with a json.dump of their own, in place as well.
    out = tmp_path / "rows.json"
    out.write_text("[]\n")
    rows = "[{'table': 'run', 'note': 'x' * 100} for _ in range(1000)]"
    call = (f"GymResult(GymConfig(), {rows}, [], []).to_json({str(out)!r})" if write == "GymResult.to_json"
            else f"modes._write({str(out)!r}, {rows})")
    done = capped(f"from lamar.gym import GymConfig, GymResult, modes\ntry:\n    {call}\nexcept OSError: pass",
                   tmp_path)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == "[]\n" and len(list(tmp_path.iterdir())) == 1
