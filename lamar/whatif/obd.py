"""The real-data check on the Open Bandit Dataset sample (Saito et al. 2021; ZOZOTOWN; CC BY 4.0):
`python -m lamar.whatif.obd` estimates Thompson sampling's click rate from the random policy's log
against its own log's (the dataset paper's protocol), and runs Lamar's per-item evidence."""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from collections.abc import Sequence
from pathlib import Path

from lamar._errors import LamarError
from lamar.whatif.estimators import Z95, Accumulator, Estimate
from lamar.whatif.model import FOLDS
from lamar.whatif.obd_data import CAMPAIGNS, POSITIONS, Round, data_dir, load_prior, load_rounds
from lamar.whatif.thompson import action_distribution

CTR_PRIOR = 200.0  # rounds: an item's click rate at a position is shrunk towards the position's
ESTIMATORS = ("ips", "snips", "dr")


@dataclasses.dataclass(frozen=True)
class Campaign:
    """One campaign's check: the on-policy click rate of Thompson sampling in its own log, and
    each estimator's estimate of it from the random log."""

    campaign: str
    on_policy: Estimate
    estimates: dict[str, Estimate]

    def relative(self, name: str) -> tuple[float, float, float]:
        """An estimate's relative error against the on-policy rate, and its interval's ends, relative."""
        e, truth = self.estimates[name], self.on_policy.value
        return (e.value - truth) / truth, (e.lower - truth) / truth, (e.upper - truth) / truth


def off_policy(random_log: Sequence[Round], dist: list[list[float]]) -> dict[str, Estimate]:
    """IPS, SNIPS and cross-fitted DR of the policy with action distribution `dist[item][position]`
    from a log whose propensities are logged per round (the per-position protocol of obp)."""
    models = [_click_model(random_log, fold) for fold in range(FOLDS)]
    sums = Accumulator()
    for j, row in enumerate(random_log):
        model = models[j % FOLDS]
        weight = dist[row.item][row.position] / row.propensity
        expected = sum(dist[item][row.position] * model[item][row.position] for item in range(len(dist)))
        y = float(row.click)
        sums.add(1, y, y * y, weight, weight)
        sums.add_model(weight, weight, [(1, y, y * y, expected, model[row.item][row.position])])
    found = sums.estimates(0.0, 1.0, len(random_log))
    return {name: found[name] for name in ESTIMATORS}


def _click_model(rounds: Sequence[Round], fold: int) -> list[list[float]]:
    """Click rate per (item, position) from the rounds outside `fold`, shrunk towards the position's rate."""
    items = 1 + max(row.item for row in rounds)
    shown = [[0] * POSITIONS for _ in range(items)]
    clicks = [[0] * POSITIONS for _ in range(items)]
    for j, row in enumerate(rounds):
        if j % FOLDS != fold:
            shown[row.item][row.position] += 1
            clicks[row.item][row.position] += row.click
    base = [sum(clicks[i][c] for i in range(items)) / max(1, sum(shown[i][c] for i in range(items)))
            for c in range(POSITIONS)]
    return [[(clicks[i][c] + CTR_PRIOR * base[c]) / (shown[i][c] + CTR_PRIOR) for c in range(POSITIONS)]
            for i in range(items)]


def on_policy(rounds: Sequence[Round]) -> Estimate:
    """The click rate a log got, with a Wilson 95% interval."""
    n = len(rounds)
    clicks = sum(row.click for row in rounds)
    rate = clicks / n
    centre = (rate + Z95 * Z95 / (2 * n)) / (1 + Z95 * Z95 / n)
    half = Z95 * math.sqrt(rate * (1 - rate) / n + Z95 * Z95 / (4 * n * n)) / (1 + Z95 * Z95 / n)
    return Estimate(rate, centre - half, centre + half, n)


def check_campaign(directory: Path, campaign: str, grid: int = 4000) -> Campaign:
    alpha, beta = load_prior(directory, campaign)
    dist = action_distribution(alpha, beta, POSITIONS, grid)
    random_log = load_rounds(directory, "random", campaign)
    return Campaign(campaign, on_policy(load_rounds(directory, "bts", campaign)), off_policy(random_log, dist))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lamar.whatif.obd", description=__doc__)
    parser.add_argument("--data", default=None, help="the fixture's folder (default $LAMAR_OBD_DIR or "
                        "~/.cache/lamar/obd; fill it with `python tools/obd_fixture.py`)")
    parser.add_argument("--campaigns", nargs="+", choices=CAMPAIGNS, default=list(CAMPAIGNS))
    parser.add_argument("--no-evidence", action="store_true", help="skip Lamar's per-item evidence")
    args = parser.parse_args(argv)
    directory = data_dir(args.data)
    campaigns = {}
    try:  # a missing or malformed fixture is named before any table is printed
        for campaign in args.campaigns:
            campaigns[campaign] = check_campaign(directory, campaign)
    except LamarError as exc:
        parser.error(str(exc))
    print("Open Bandit Dataset sample (Saito et al. 2021, ZOZOTOWN, CC BY 4.0), 10 000 rounds per log.")
    print("Thompson sampling's click rate: estimated from the uniform-random log, against its own log.\n")
    print("campaign | on-policy click rate [95%] | estimator | estimate [95%] | relative error [95%] | covers")
    print("---|---|---|---|---|---")
    for campaign, found in campaigns.items():
        truth = found.on_policy
        for name in ESTIMATORS:
            e = found.estimates[name]
            rel, lo, hi = found.relative(name)
            print(f"{campaign} | {100 * truth.value:.3f}% [{100 * truth.lower:.3f}, {100 * truth.upper:.3f}] | "
                  f"{name} | {100 * e.value:.3f}% [{100 * e.lower:.3f}, {100 * e.upper:.3f}] | "
                  f"{100 * rel:+.1f}% [{100 * lo:+.1f}, {100 * hi:+.1f}] | {'yes' if e.covers(truth.value) else 'no'}")
    if not args.no_evidence:
        from lamar.whatif.obd_evidence import evidence_table

        started = time.perf_counter()
        print()
        print(evidence_table(directory, args.campaigns))
        print(f"\n(evidence folded in {time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
