"""The forgetting frontier: lamar at several discounts beside river's two forgetting extremes, its
figures the family table's own."""

from __future__ import annotations

import pytest

from lamar.gym.family import TUNING_SEEDS
from lamar.gym.family_report import forgetting, summary_table
from lamar.gym.family_run import run_family, spec
from lamar.gym.forgetting import PEERS, frontier, main

pytest.importorskip("river")


def test_the_frontier_prints_each_discount_and_both_peers_with_the_family_tables_figures() -> None:
    out = frontier(2, tuning=True, discounts=(1.0, 0.99), workers=1)
    lines = {line.split("  ")[0]: line for line in out.splitlines()}
    assert {"lamar", "lamar discount=0.99", *PEERS} <= set(lines)
    assert "(tuning seeds 100000-100001)" in out
    # The same rows through the family's own table give the same forgetting figures.
    rows = run_family(range(TUNING_SEEDS, TUNING_SEEDS + 2),
                      [spec("none"), spec("oracle"), spec("lamar discount=0.99", "lamar", discount=0.99)], workers=1)
    mine = [row for row in rows if row["policy"] == "lamar discount=0.99"]
    kept, drop = forgetting(mine)
    assert lines["lamar discount=0.99"].split()[-2:] == [kept, drop]
    (table_line,) = [line for line in summary_table(rows, ["lamar discount=0.99"], "lamar discount=0.99", ())
                     if line.startswith("lamar discount=0.99")]
    assert f"{kept:>13}{drop:>15}" in table_line
    # paired against lamar's default and against river-ts, with the latter's lower end
    assert len(lines["lamar discount=0.99"].split("±")) == 4 and lines["river-ts"].count("±") == 2


def test_the_command_refuses_a_discount_that_is_not_a_number(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["2", "--discounts", "0.99,often"])
    assert "--discounts" in capsys.readouterr().err
