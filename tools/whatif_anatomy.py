"""Why an alternative's intervals miss on the gym: the errors of its estimates split in two.

For each world, over the episodes where the alternative changes a coin, it measures in standard
errors (each sum divided by the standard deviation independent coins and outcomes would give):

- coins: the number of coins that fell the alternative's way, minus what their logged
  probabilities expect (about N(0, 1) when the log's probabilities are right and the coins
  independent of how many came before);
- outcomes: the weighted outcomes of those episodes minus the world's success probability of
  what they injected (about N(0, 1) when which episodes carry a coin does not depend on their
  outcomes).

Then the same intervals' errors as `python -m lamar.whatif.check` reports them, for IPS and DR.
`--reach-off` runs the engine with coins flipped whenever a verdict is undecided (the reach rule
of `lamar.policy.choose` switched off), to see what that rule does to them.

    python tools/whatif_anatomy.py --seeds 60 --policy k:1
    python tools/whatif_anatomy.py --seeds 60 --policy k:1 --reach-off
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence

from lamar.whatif.check import alternatives_for, label, reach_rule, run_world, truth
from lamar.whatif.estimators import Z95, slate_weight
from lamar.whatif.model import FOLDS
from lamar.whatif.report import evaluate


def world_row(seed: int, policy: str, episodes: int, k: int) -> dict[str, float]:
    """One world's coin and outcome sums in standard errors, and the IPS and DR errors of the
    success estimate in their own standard errors."""
    run = run_world(seed, episodes, k)
    alternative = next(a for a in alternatives_for(run) if label(a, run) == policy)
    world, index = run.world, run.policy.index
    coins = coins_var = outcomes = outcomes_var = 0.0
    for j, episode in enumerate(run.episodes):
        slate = episode.slate
        changes = alternative.changes(slate, j % FOLDS)
        weight = slate_weight(slate.p, slate.injected, changes)
        if weight is None or not changes:
            continue
        for lesson, new in changes.items():
            old = slate.p[lesson]
            if new != old:  # a coin the alternative moves: did it fall the alternative's way?
                wanted = (lesson in slate.injected) == (new > old)
                chance = old if new > old else 1.0 - old
                coins += wanted - chance
                coins_var += chance * (1.0 - chance)
        if weight > 0.0:
            chance = world.success_probability(run.times[episode.id], [index[i] for i in slate.injected])
            outcomes += weight * (float(episode.success) - chance)
            outcomes_var += weight * weight * chance * (1.0 - chance)
    (report,) = evaluate(run.episodes, [alternative])
    true = truth(run, alternative)
    row = {"coins": coins / math.sqrt(coins_var) if coins_var else math.nan,
           "outcomes": outcomes / math.sqrt(outcomes_var) if outcomes_var else math.nan}
    for name in ("ips", "dr"):
        e = report.success[name]
        row[name] = (e.value - true["success"]) / e.se if true and 0.0 < e.se < math.inf else math.nan
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--policy", default="k:1",
                        help="an alternative as the check labels it, e.g. none, k:1, without:true (default k:1)")
    parser.add_argument("--episodes", type=int, default=8000)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--reach-off", action="store_true", help="flip a coin whenever a verdict is undecided")
    args = parser.parse_args(argv)
    with reach_rule(not args.reach_off):
        rows = [world_row(seed, args.policy, args.episodes, args.k)
                for seed in range(args.first_seed, args.first_seed + args.seeds)]
    print(f"{args.policy}, {args.seeds} worlds from seed {args.first_seed}"
          + (", reach rule off" if args.reach_off else "") + "; success, in standard errors\n")
    print("sum | mean | rms | beyond 1.96")
    print("---|---|---|---")
    for key in ("coins", "outcomes", "ips", "dr"):
        values = [row[key] for row in rows if math.isfinite(row[key])]
        mean = sum(values) / len(values)
        rms = math.sqrt(sum(v * v for v in values) / len(values))
        print(f"{key} | {mean:+.2f} | {rms:.2f} | {sum(abs(v) > Z95 for v in values)} of {len(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
