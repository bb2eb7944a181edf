"""What the engine's reach rule costs the what-if's 95% interval, coin by coin, on a known world.

Three lessons on one task add +0.25, -0.10 and 0 to a base success rate of 0.4 (a win pays 1, a
loss -0.5); the engine (k = 2, seeded) logs `--episodes` recalls through the public API, reports
every outcome, and `lam.whatif` evaluates six alternatives (none, holdout:0, holdout:0.5, k:1,
without the helpful lesson, without the harmful one) for success and reward. Each doubly robust
estimate's 95% interval, and separately its confidence sequence, is checked against the world's
true value over the same supported episodes, with the reach rule of `lamar.policy.choose` on
(the engine's) and off (a coin whenever a verdict is undecided). One line per rule and coin:
coverage with its Clopper-Pearson 95% interval, and the least covered alternative.

    python tools/whatif_coverage.py --coins 0.3 --seeds 200 --episodes 600
    python tools/whatif_coverage.py --coins 0.04 --seeds 100 --episodes 3000
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterable, Mapping, Sequence

from lamar import Experience, Lamar, Scope
from lamar.audit.summary import clopper_pearson
from lamar.whatif.alternatives import parse
from lamar.whatif.ask import beliefs_of, logged_k
from lamar.whatif.check import expected_over_coins, reach_rule
from lamar.whatif.estimators import slate_weight
from lamar.whatif.log import read_log
from lamar.whatif.model import FOLDS

BASE = 0.4
EFFECTS = (0.25, -0.10, 0.0)  # lesson A helps, B harms, C does nothing
WIN, LOSE = 1.0, -0.5
ALTERNATIVES = ("none", "holdout:0", "holdout:0.5", "k:1", "without:A", "without:B")


def success(injected: Iterable[int]) -> float:
    return min(1.0, max(0.0, BASE + sum(EFFECTS[i] for i in injected)))


def expected_success(inclusion: Mapping[int, float]) -> float:
    """The world's success rate when each lesson is injected with its own probability."""
    return expected_over_coins(inclusion, success)


def world_rows(seed: int, coin: float, episodes: int, k: int = 2) -> list[dict[str, object]]:
    """One row per (alternative, outcome) the log can evaluate: whether the doubly robust 95%
    interval and the confidence sequence hold the world's true value."""
    rng = random.Random(10_000 + seed)
    lam = Lamar(":memory:", k=k, seed=seed, holdout=coin)
    try:
        ids = [lam.add(Experience("a test is flaky", action, scope=Scope(task="flaky")))
               for action in ("pin the seeds", "mock the clock", "retry the network")]
        index = {lesson: i for i, lesson in enumerate(ids)}
        for _ in range(episodes):
            recall = lam.recall({"task": "flaky"})
            ok = rng.random() < success(index[i] for i in recall.ids)
            lam.report(recall.episode_id, WIN if ok else LOSE)
        log = read_log(lam.store, cache=False)
        beliefs = beliefs_of(lam, logged_k(log.slates, lam.k))
        specs = [spec.replace(":A", ":" + ids[0]).replace(":B", ":" + ids[1]) for spec in ALTERNATIVES]
        alternatives = [parse(spec, beliefs, log) for spec in specs]
        report = lam.whatif(alternatives)
        rows: list[dict[str, object]] = []
        for name, alternative, row in zip(ALTERNATIVES, alternatives, report.alternatives, strict=True):
            total, n = 0.0, 0
            for j, episode in enumerate(log.episodes):
                slate = episode.slate
                changes = alternative.changes(slate, j % FOLDS)
                if slate_weight(slate.p, slate.injected, changes) is None:
                    continue
                total += expected_success({index[i]: changes.get(i, p) for i, p in slate.p.items()})
                n += 1
            if not n or not row.evaluable:
                continue
            true = {"success": total / n, "reward": LOSE + (WIN - LOSE) * total / n}
            for outcome in ("success", "reward"):
                dr = (row.success if outcome == "success" else row.reward)["dr"]
                rows.append({"seed": seed, "policy": name, "outcome": outcome,
                             "covered": dr.lower <= true[outcome] <= dr.upper,
                             "anytime": dr.anytime_lower <= true[outcome] <= dr.anytime_upper})
        return rows
    finally:
        lam.close()


def rate(covered: int, n: int) -> str:
    low, high = clopper_pearson(covered, n)
    return f"{covered}/{n} {100 * covered / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def line(rows: Sequence[Mapping[str, object]], label: str) -> str:
    """`label`, the 95% intervals' coverage, the sequences', and the least covered alternative."""
    by = {name: [row for row in rows if row["policy"] == name] for name in ALTERNATIVES}
    least = min((name for name in ALTERNATIVES if by[name]),
                key=lambda name: sum(bool(row["covered"]) for row in by[name]) / len(by[name]))
    held = sum(bool(row["covered"]) for row in by[least])
    return (f"{label:10} {rate(sum(bool(row['covered']) for row in rows), len(rows)):>32}"
            f" {rate(sum(bool(row['anytime']) for row in rows), len(rows)):>32}"
            f"   {least} {held}/{len(by[least])}")


def sweep(coins: Sequence[float], seeds: range, episodes: int, k: int = 2) -> list[str]:
    lines = [(f"{len(seeds)} worlds (seeds {seeds.start}-{seeds.stop - 1}) x {episodes} episodes, k = {k}; "
              "doubly robust, success and reward"),
             f"{'rule/coin':10} {'95% interval [95% CP]':>32} {'sequence [95% CP]':>32}   least covered"]
    for coin in coins:
        for on in (True, False):
            with reach_rule(on):
                rows = [row for seed in seeds for row in world_rows(seed, coin, episodes, k)]
            lines.append(line(rows, f"{'on' if on else 'off'}/{coin:g}"))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/whatif_coverage.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--coins", type=float, nargs="+", default=[0.04, 0.3], help="evidence coins (holdout)")
    parser.add_argument("--seeds", type=int, default=200, help="worlds per setting (default 200)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=600, help="episodes per world (default 600)")
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.first_seed < 0 or args.episodes < 10 or not all(0.0 < c < 1.0 for c in args.coins):
        parser.error("--seeds is at least 1, --first-seed at least 0, --episodes at least 10, each coin in (0, 1)")
    for text in sweep(args.coins, range(args.first_seed, args.first_seed + args.seeds), args.episodes):
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
