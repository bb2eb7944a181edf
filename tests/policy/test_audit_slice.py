"""A small slice of the verdict audit (`python -m lamar.audit`): few runs, short, fixed seeds.

Each run reads every verdict after every report through the public API, so these are the
audit's own measurements at a reduced size; the thresholds are the issue's targets scaled to
what so few runs can show (docs/decisions.md has the full-size table).
"""

from __future__ import annotations

import pytest

from lamar.audit import clopper_pearson, run_one, summarize
from lamar.audit.__main__ import main


def _runs(scenario: str, runs: int, episodes: int, **tuning: object) -> list[dict]:
    return [run_one(scenario, seed, episodes, **tuning) for seed in range(runs)]


def test_no_verdict_is_wrong_on_inert_lessons_or_under_drift() -> None:
    rows = _runs("null", 6, 1500) + _runs("square_100", 6, 3000) + _runs("drift_falling", 4, 3000)
    assert sum(r["wrong_helps"] + r["wrong_harms"] for r in rows) == 0
    drift = [r for r in rows if r["scenario"] != "null"]
    # a base rate swinging 0.8 <-> 0.1 drags every injected reward down at each step, and the fall
    # detector closes segments of lessons that still help (the price docs/decisions.md prints);
    # the helpful lesson is still among the lessons injected most
    assert all(r["steady_helpful"] == 1 for r in drift)


def test_a_stale_helps_is_withdrawn_within_the_grace_window() -> None:
    rows = _runs("flip", 6, 4000, holdout=0.3) + _runs("stop_020", 6, 4000, holdout=0.3)
    judged = [r for r in rows if r["withdrawn_300"] is not None]
    assert len(judged) >= 4  # the lesson was proven to help before its change in most runs
    # the fall detector closes the segment within a few dozen injected episodes of a +0.2 -> -0.2
    # flip and ~100 of a stop (`python -m lamar.audit --physics`)
    assert sum(r["withdrawn_300"] for r in judged) >= len(judged) - 1
    assert sum(r["wrong_helps"] for r in rows) <= 1


def test_many_lessons_in_many_scopes_make_no_wrong_verdict() -> None:
    rows = _runs("many_scopes", 2, 3000)
    assert sum(r["wrong_helps"] + r["wrong_harms"] for r in rows) == 0


def test_clopper_pearson_matches_known_values() -> None:
    assert clopper_pearson(0, 200)[1] == pytest.approx(1 - 0.025 ** (1 / 200), abs=1e-6)
    lo, hi = clopper_pearson(3, 10)
    assert lo == pytest.approx(0.0667, abs=1e-3) and hi == pytest.approx(0.6525, abs=1e-3)


def test_the_command_prints_rows_and_a_table(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    out = tmp_path / "rows.jsonl"
    assert main(["--runs", "2", "--episodes", "300", "--scenario", "null", "--scenario", "stop_010",
                 "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| null | 2 |" in printed and "| stop_010 | 2 |" in printed
    assert len(out.read_text().splitlines()) == 4
    assert [s["runs"] for s in summarize(_runs("null", 2, 300))] == [2]


def test_the_physical_limit_is_the_bound_read_in_expectation() -> None:
    from lamar.audit.physics import bound, needed

    # `needed` is where the expected bound clears zero by 0.84 standard errors, read both ways
    for effect, q in ((0.2, 0.06), (-0.2, 0.15), (0.3, 0.3)):
        n = needed(effect, q, 2.5e-4)
        assert n is not None
        end, se = bound(effect, q, n, 2.5e-4)
        before, se_before = bound(effect, q, n - 1, 2.5e-4)
        side = 1 if effect > 0 else -1
        assert side * end - 0.84 * se > 0 >= side * before - 0.84 * se_before
    # more coin, fewer episodes; a smaller effect, more
    assert needed(0.2, 0.15, 2.5e-4) < needed(0.2, 0.06, 2.5e-4) < needed(0.15, 0.06, 2.5e-4)
    assert needed(0.0, 0.5, 0.05) is None


@pytest.mark.parametrize(("argv", "message"), [
    (["--null", "-1"], "--null is from 2 to 1_000_000"),
    (["--null", "1"], "--null is from 2 to 1_000_000"),
    (["--runs", "0"], "--runs and --jobs are at least 1"),
    (["--episodes", "10"], "--episodes at least 100"),
    (["--lamar", "holdot=0.3"], "unknown tuning keyword 'holdot'"),
])
def test_the_command_refuses_what_would_measure_nothing(argv: list[str], message: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # These printed an empty table, divided by zero, or ended in a traceback from the first run.
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_a_file_that_is_not_the_audits_rows_is_refused(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    # --summarize ended in FileNotFoundError, JSONDecodeError or KeyError, and an empty file printed
    # an empty table; --json naming a folder in IsADirectoryError.
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path / "other.jsonl").write_text('{"a": 1}\n')
    (tmp_path / "empty.jsonl").write_text("\n")
    for name, message in (("absent.jsonl", "cannot read it"), ("bad.jsonl", "line 1 is not a run's row"),
                          ("other.jsonl", "line 1 is not a run's row"), ("empty.jsonl", "it holds no row")):
        with pytest.raises(SystemExit) as exit_info:
            main(["--summarize", str(tmp_path / name)])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["--runs", "1", "--scenario", "null", "--json", str(tmp_path)])
    assert exit_info.value.code == 2 and "cannot append to it" in capsys.readouterr().err
    rows = tmp_path / "rows.jsonl"
    assert main(["--runs", "1", "--episodes", "200", "--scenario", "null", "--quiet", "--json", str(rows)]) == 0
    capsys.readouterr()
    assert main(["--summarize", str(rows)]) == 0 and "| null | 1 |" in capsys.readouterr().out


def test_the_null_calibration_runs_every_replicate_asked_for() -> None:
    # An odd N ran one replicate fewer than asked, and N = 1 divided by zero.
    from lamar.audit.null import calibrate

    rows = [line.split(" | ") for line in calibrate(3).splitlines() if line.startswith("| 0.")]
    assert [(row[0], row[1]) for row in rows] == [("| 0.04", "2"), ("| 0.04", "2"), ("| 0.15", "1"), ("| 0.15", "1")]


def test_still_helping_withdrawals_print_as_a_rate_not_a_share() -> None:
    # 2 runs of 4 000 episodes, one still-helping lesson each, closed 9 and 8 times: 17 closes over
    # 4 lesson-and-2 000-episode spans is 4.25 per span, not a share of lessons ("425.0%").
    from lamar.audit.summary import table

    row = {"scenario": "square_100", "episodes": 4000, "wrong_helps": 0, "wrong_harms": 0, "withdrawn_300": None,
           "steady_helpful": 1, "success": 0.5, "holdout_cost": 0.001}
    summaries = summarize([{**row, "steady_restarts": 9}, {**row, "steady_restarts": 8}])
    assert summaries[0]["steady_withdrawn"] == 4.25
    head, _, line = table(summaries).splitlines()
    assert "still-helping withdrawn per 2 000 ep." in head
    assert "| 4.250 |" in line and "%" not in line.split("|")[6]


def test_no_more_worker_processes_start_than_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # --jobs 99 for 1 run started 99 processes on a 2-CPU machine.
    import multiprocessing

    started: list[int] = []

    class Pool:
        def __init__(self, processes: int, initializer: object = None) -> None:
            started.append(processes)

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        def imap(self, job, work, chunksize=1):  # type: ignore[no-untyped-def]
            return map(job, work)

    monkeypatch.setattr(multiprocessing, "Pool", Pool)
    assert main(["--runs", "2", "--episodes", "200", "--scenario", "null", "--jobs", "4", "--quiet"]) == 0
    assert started == [2]
