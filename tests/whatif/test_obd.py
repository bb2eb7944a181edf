"""The real-data check's parts (the Thompson action distribution, the readers, the estimators, the
evidence fold) on data with known answers, and the check itself on the Open Bandit Dataset sample."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from lamar import LamarError
from lamar.whatif.obd import check_campaign, off_policy
from lamar.whatif.obd import main as obd_main
from lamar.whatif.obd_data import Round, data_dir, load_prior, load_rounds
from lamar.whatif.obd_evidence import fold_evidence
from lamar.whatif.thompson import action_distribution, sampled_distribution
from tests.conftest import IN_CI

ALPHA = [30.0, 12.0, 9.0, 3.0, 50.0, 2.0]
BETA = [6000.0, 2000.0, 3000.0, 1500.0, 12000.0, 900.0]


def test_the_integral_agrees_with_obps_monte_carlo_procedure() -> None:
    exact = action_distribution(ALPHA, BETA, 3)
    sampled = sampled_distribution(ALPHA, BETA, 3, 20_000, seed=4)
    for c in range(3):
        assert sum(row[c] for row in exact) == pytest.approx(1.0, abs=1e-5)
    for i in range(len(ALPHA)):
        for c in range(3):
            sd = math.sqrt(max(exact[i][c] * (1 - exact[i][c]), 1e-6) / 20_000)
            assert abs(exact[i][c] - sampled[i][c]) < 4.5 * sd, (i, c, exact[i][c], sampled[i][c])


def test_two_identical_items_split_the_first_position() -> None:
    dist = action_distribution([5.0, 5.0], [900.0, 900.0], 1)
    assert dist[0][0] == pytest.approx(0.5, abs=1e-9) and dist[1][0] == pytest.approx(0.5, abs=1e-9)


def test_the_prior_is_read_strictly(tmp_path: Path) -> None:
    conf = tmp_path / "policy" / "conf"
    conf.mkdir(parents=True)
    (conf / "prior_bts.yaml").write_text("all:\n  alpha:\n    - 2.0\n    - 3.0\n  beta:\n    - 10.0\n    - 20.0\n"
                                         "men:\n  alpha:\n    - 1.0\n  beta:\n    - 5.0\n")
    assert load_prior(tmp_path, "all") == ([2.0, 3.0], [10.0, 20.0])
    assert load_prior(tmp_path, "men") == ([1.0], [5.0])
    with pytest.raises(LamarError, match="no alpha and beta"):
        load_prior(tmp_path, "women")
    (conf / "prior_bts.yaml").write_text("all:\n  alpha: [2.0, 3.0]\n")
    with pytest.raises(LamarError, match="unexpected line"):
        load_prior(tmp_path, "all")


def test_rounds_are_read_in_time_order_with_positions_from_zero(tmp_path: Path) -> None:
    folder = tmp_path / "dataset" / "obd" / "random" / "men"
    folder.mkdir(parents=True)
    (folder / "men.csv").write_text(
        ",timestamp,item_id,position,click,propensity_score,user_feature_0\n"
        "0,2019-11-24 00:00:09+00:00,4,3,0,0.0294,x\n"
        "1,2019-11-24 00:00:01+00:00,7,1,1,0.0294,y\n")
    assert load_rounds(tmp_path, "random", "men") == [Round(7, 0, 1, 0.0294), Round(4, 2, 0, 0.0294)]
    with pytest.raises(LamarError, match="obd_fixture.py"):
        load_rounds(tmp_path, "bts", "men")


def _uniform_log(rates: list[list[float]], rounds: int, seed: int) -> list[Round]:
    rng = random.Random(seed)
    items = len(rates)
    out = []
    for _ in range(rounds):
        item, position = rng.randrange(items), rng.randrange(3)
        out.append(Round(item, position, int(rng.random() < rates[item][position]), 1.0 / items))
    return out


def test_the_estimators_recover_a_known_policy_value() -> None:
    rates = [[0.30, 0.20, 0.10], [0.05, 0.04, 0.03], [0.10, 0.08, 0.06], [0.02, 0.02, 0.01]]
    target = [[0.7, 0.1, 0.1], [0.1, 0.1, 0.3], [0.1, 0.7, 0.1], [0.1, 0.1, 0.5]]  # per position, sums to 1
    # The target's click rate, each position a third of the rounds as in the log.
    truth = sum(target[i][c] * rates[i][c] for i in range(4) for c in range(3)) / 3
    found = off_policy(_uniform_log(rates, 20_000, seed=8), target)
    for name, estimate in found.items():
        assert estimate.covers(truth), (name, estimate, truth)
        assert abs(estimate.value - truth) < 0.01, name


def test_lamars_evidence_over_a_logged_random_policy_bounds_each_items_lift() -> None:
    # Item 0 is clicked at 0.6, the others at 0.1: shown one item in four, item 0's lift is
    # 0.6 - 0.1 = 0.5 and each other's 0.1 - (0.6 + 0.1 + 0.1) / 3 = -0.167.
    rates = [[0.6, 0.6, 0.6], [0.1, 0.1, 0.1], [0.1, 0.1, 0.1], [0.1, 0.1, 0.1]]
    evidence = fold_evidence(_uniform_log(rates, 3000, seed=2), "test")
    assert evidence[0][1] < 0.5 < evidence[0][2] and evidence[0][1] > 0.0
    for item in (1, 2, 3):
        verdict, lower, upper = evidence[item]
        assert lower < -0.167 < upper < 0.0 and verdict == "harms"


def _real_data() -> Path:
    folder = data_dir()
    if (folder / "policy" / "conf" / "prior_bts.yaml").is_file():
        return folder
    message = f"the Open Bandit Dataset sample is not in {folder}: run `python tools/obd_fixture.py`"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize("campaign", ["all", "men", "women"])
def test_on_the_real_sample_dr_covers_thompson_samplings_own_click_rate(campaign: str) -> None:
    found = check_campaign(_real_data(), campaign, grid=2000)
    assert found.on_policy.n == 10_000
    assert found.estimates["dr"].covers(found.on_policy.value), found


def test_a_missing_fixture_is_an_argument_error_before_any_table(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # It ended in a LamarError traceback after the table's header was printed.
    with pytest.raises(SystemExit) as exit_info:
        obd_main(["--data", str(tmp_path), "--no-evidence"])
    printed = capsys.readouterr()
    assert exit_info.value.code == 2 and "prior_bts.yaml is missing: run `python tools/obd_fixture.py`" in printed.err
    assert printed.out == ""
