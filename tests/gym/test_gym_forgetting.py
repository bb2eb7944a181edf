"""The forgetting frontier: lamar at several discounts beside river's two forgetting extremes, its
figures the family table's own."""

from __future__ import annotations

import pytest

from lamar.gym import forgetting as forgetting_module
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.family_report import (
    fastest_forgetter,
    forgetting,
    forgetting_line,
    forgetting_paired,
    summary_table,
)
from lamar.gym.family_run import run_family
from lamar.gym.forgetting import FASTEST, PEERS, frontier, main


def _row(policy: str, world: int, kept: list[float], drops: list[int]) -> dict[str, object]:
    """A family row's forgetting columns as `family_run` computes them from its fossils."""
    return {"policy": policy, "world": world, "fossil_kept": sum(kept) / len(kept) if kept else None,
            "fossil_kept_sum": sum(kept), "fossil_kept_n": len(kept),
            "fossil_drop": sorted(drops)[len(drops) // 2] if drops else None}


def test_forgetting_is_paired_only_over_worlds_where_both_used_a_fossil() -> None:
    rows = [_row("lamar", 1, [0.2, 0.1], [80, 120, 100]), _row("fade", 1, [0.05], [40]),
            _row("lamar", 2, [0.0], [30]), _row("fade", 2, [], []),  # fade used no fossil in world 2
            _row("lamar", 3, [0.1], [60]), _row("fade", 3, [0.3], [90]),
            _row("fade", 4, [0.0], [10])]  # lamar never ran world 4
    kept, drop = forgetting_paired(rows, "lamar", "fade")
    assert [round(x, 6) for x in kept] == [0.1, -0.2] and drop == [60.0, -30.0]
    # the fastest to forget is the one that kept the least, pooled: fade 0.35 / 3 against lamar 0.4 / 4
    assert fastest_forgetter(rows, ["lamar", "fade"]) == "lamar"
    assert fastest_forgetter(rows, ["fade"]) == "fade" and fastest_forgetter(rows, ["absent"]) is None
    first, second = forgetting_line(rows, "lamar", ["fade"])
    assert "lamar minus fade" in first
    assert "kept -5.0 ±" in second and "(2 worlds)" in second and "dropped after 15 ±" in second


pytest.importorskip("river")


def test_the_frontier_prints_each_discount_and_both_peers_with_the_family_tables_figures(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[list[dict[str, object]]] = []

    def kept_rows(*args: object, **kwargs: object) -> list[dict[str, object]]:
        ran.append(run_family(*args, **kwargs))  # type: ignore[arg-type]
        return ran[-1]

    monkeypatch.setattr(forgetting_module, "run_family", kept_rows)
    out = frontier(2, tuning=True, discounts=(1.0, 0.99), workers=1)
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    assert {"lamar", "lamar discount=0.99", *PEERS} <= set(lines)
    assert "(tuning seeds 100000-100001)" in out
    # The frontier's own rows through the family's own table give the same forgetting figures.
    (frontier_rows,) = ran
    rows = [row for row in frontier_rows if row["policy"] in {"none", "oracle", "lamar discount=0.99"}]
    assert sorted({row["world"] for row in rows}) == [TUNING_SEEDS, TUNING_SEEDS + 1]
    mine = [row for row in rows if row["policy"] == "lamar discount=0.99"]
    kept, drop = forgetting(mine)
    assert f"{kept:>13}{drop:>15}" in lines["lamar discount=0.99"]
    (table_line,) = [line for line in summary_table(rows, ["lamar discount=0.99"], "lamar discount=0.99", ())
                     if line.startswith("lamar discount=0.99")]
    assert f"{kept:>13}{drop:>15}" in table_line
    # paired against lamar's default and against river-ts, with the latter's lower end
    assert len(lines["lamar discount=0.99"].split("±")) == 4 and lines["river-ts"].count("±") == 2
    assert len(lines[FASTEST]) < len(lines["river-ts"])  # the fastest is not paired with itself


def test_the_command_refuses_a_discount_that_is_not_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["2", "--discounts", "0.99,often"])
    assert "--discounts" in capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["0"], "worlds is the number of worlds to draw, from 1 to 100_000"), (["-1"], "; got -1"),
    (["1000000000"], "(the reported worlds stop where the tuning worlds start); got 1_000_000_000"),
    (["2", "--workers", "0"], "--workers must be at least 1; got 0"),
    (["2", "--discounts", "2"], "discount must be in (0, 1]"),
    (["2", "--discounts", "0.99,0.99"], "--discounts takes distinct values"),
])
def test_the_command_refuses_what_would_measure_nothing(argv: list[str], message: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # 0 worlds printed an empty table; --discounts 2 raised InvalidArgument from inside the run.
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_the_command_bounds_its_workers_as_the_gym_does(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Any count was taken: each worker is an interpreter, and a huge count forks until the machine runs out.
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    with pytest.raises(SystemExit) as exit_info:
        main(["2", "--workers", "100000"])
    assert exit_info.value.code == 2
    assert ("--workers is from 1 to 8 on this machine (4 per CPU: the runs are CPU-bound, so more processes only "
            "share the same CPUs); got 100_000") in capsys.readouterr().err


def test_a_discount_that_is_not_a_number_is_named_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse printed "invalid <lambda> value: '0.99,often'".
    with pytest.raises(SystemExit) as exit_info:
        main(["2", "--discounts", "0.99,often"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "<lambda>" not in err and "numbers in (0, 1], comma separated" in err
