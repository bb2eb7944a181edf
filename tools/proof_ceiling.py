"""How many of the gym's 3 helpful lessons a given price of proof can prove: the engine's own
e-value, the best any test valid at every n could do, and a single look's test, on one lesson
given the held-out episodes that price buys (docs/gym.md, "The frontier: what each point of reward buys").

A held-out helpful episode costs exactly its lesson's effect, so a price in captured points is a
number of held-out episodes: in the gym's world (4 tasks, one +0.2 lesson each, the flip turns one
of them at half the run) a price P pre- and post-flip buys P / 100 of the pre-flip episodes and
P / 100 of three quarters of the post-flip ones. Spread evenly over the lessons that help at the
time, each of the 3 still helping at the end gets a quarter of the first and a third of the second;
a policy told in advance which lesson will turn could give them a third of both.

Each count below is, per lesson, the chance of a proof of record by e-BH within that many
held-out episodes, times 3, in e-BH's most favourable case (all 3 found together, so each e-value
needs m / (3 alpha) = 400 with the gym's 24 lessons and alpha_helps 0.02):

- engine: `lamar.policy.ebh.e_values` on a `Ledger` fed as in a clean gym (one lesson, injected
  success 0.6, held out 0.4, the gym's signals, its coin on every episode from the first);
- best mean bet: the best single bet on the held-out rewards against "their mean is the
  injected mean", told that mean exactly and choosing the bet with hindsight;
- likelihood ratio: the e-value told both success rates (the log-optimal one), read at every n;
- one look: the Neyman-Pearson test of the success count at e-BH's level (R alpha / m), read
  once at a fixed count: not valid if read again, and exact only when the null's distribution is
  known.

    python tools/proof_ceiling.py [--price-pre 4.4 --price-post 4.8 --reps 2000]
"""

from __future__ import annotations

import argparse
import math
import random

from lamar.audit.physics import outcomes
from lamar.gym.world import signal_of
from lamar.policy.ebh import e_values
from lamar.policy.ledger import Ledger

EPISODES, TASKS, LESSONS, ALPHA, FOUND = 8000, 4, 24, 0.02, 3
HELD_IN, HELD_OUT = 0.6, 0.4  # success with the lesson (the other slot inert) and without it
THRESHOLD = LESSONS / (ALPHA * FOUND)


def budget(price_pre: float, price_post: float) -> tuple[int, int]:
    """Held-out episodes per still-helpful lesson that the prices buy: (spread evenly over the
    lessons helping at the time, given only to the 3 that still help at the end)."""
    pre = price_pre / 100.0 * EPISODES / 2
    post = price_post / 100.0 * EPISODES / 2 * (TASKS - 1) / TASKS
    return round(pre / TASKS + post / (TASKS - 1)), round((pre + post) / (TASKS - 1))


def _reward(rng: random.Random, success: float) -> float:
    return signal_of(rng.random() < success, rng.random()).reward


def engine(marks: list[int], q: float, reps: int, seed: int) -> dict[int, float]:
    """Share of runs whose engine e-value reaches THRESHOLD within each mark of held-out episodes."""
    found = dict.fromkeys(marks, 0)
    for rep in range(reps):
        rng = random.Random(f"proof-ceiling:{seed}:{rep}")
        ledger, held, reached = Ledger(), 0, None
        while held < marks[-1] and reached is None:
            injected = rng.random() >= q
            ledger.record(_reward(rng, HELD_IN if injected else HELD_OUT), injected, 1.0 - q)
            held += not injected
            if e_values(ledger)[0] >= THRESHOLD:
                reached = held
        for mark in marks:
            found[mark] += reached is not None and reached <= mark
    return {mark: count / reps for mark, count in found.items()}


def best_mean_bet(n: int, reps: int, seed: int) -> tuple[float, float]:
    """(share, bet): the best single bet on n held-out rewards against "their mean is the
    injected mean", that mean known, the capital read after every episode."""
    in_mean = sum(reward * chance for reward, chance in outcomes(HELD_IN))
    scale = 1.0 + in_mean  # the farthest a reward in [-1, 1] falls below the injected mean
    best = (0.0, 0.0)
    for bet in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        rng, hits, level = random.Random(f"proof-ceiling-bet:{seed}"), 0, math.log(THRESHOLD)
        for _ in range(reps):
            capital = 0.0
            for _ in range(n):
                capital += math.log1p(bet * (in_mean - _reward(rng, HELD_OUT)) / scale)
                if capital >= level:
                    hits += 1
                    break
        best = max(best, (hits / reps, bet))
    return best


def likelihood_ratio(n: int) -> float:
    """Chance that the likelihood ratio of the two success rates reaches THRESHOLD within n held-out
    episodes (exact: a walk up one step per failure, down one per success)."""
    steps = math.ceil(math.log(THRESHOLD) / math.log(HELD_IN / HELD_OUT))
    walk, hit = {0: 1.0}, 0.0
    for _ in range(n):
        nxt: dict[int, float] = {}
        for at, chance in walk.items():
            for step, p in ((1, 1.0 - HELD_OUT), (-1, HELD_OUT)):
                if at + step >= steps:
                    hit += chance * p
                else:
                    nxt[at + step] = nxt.get(at + step, 0.0) + chance * p
        walk = nxt
    return hit


def _binom_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def one_look(n: int) -> float:
    """Power of the exact one-sided test of the success count at level FOUND alpha / LESSONS."""
    level, cut = FOUND * ALPHA / LESSONS, -1
    while _binom_cdf(cut + 1, n, HELD_IN) <= level:
        cut += 1
    return _binom_cdf(cut, n, HELD_OUT) if cut >= 0 else 0.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--price-pre", type=float, default=4.4, help="captured points before the flip")
    parser.add_argument("--price-post", type=float, default=4.8, help="captured points after the flip")
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    even, told = budget(args.price_pre, args.price_post)
    q = even / (EPISODES / TASKS)
    marks = sorted({even, told, *range(100, 301, 25)})
    mine = engine(marks, q, args.reps, args.seed)
    print(f"price {args.price_pre} / {args.price_post} captured points buys {even} held-out episodes per "
          f"still-helpful lesson spread evenly, {told} given only to them (coin {q:.3f}); "
          f"helpful lessons of record by e-BH (at most 3; {args.reps} runs per figure):")
    print(f"{'held out':>9} {'price':>6} {'engine':>7} {'best mean bet':>14} {'likelihood ratio':>17} {'one look':>9}")
    for n in (even, told):
        share, bet = best_mean_bet(n, args.reps, args.seed)
        print(f"{n:>9} {100.0 * n * TASKS / EPISODES:>6.1f} {3 * mine[n]:>7.2f} {3 * share:>9.2f} ({bet})"
              f" {3 * likelihood_ratio(n):>17.2f} {3 * one_look(n):>9.2f}")
    for n in marks:
        if n not in (even, told):
            print(f"{n:>9} {100.0 * n * TASKS / EPISODES:>6.1f} {3 * mine[n]:>7.2f}")
    print("   price: captured points pre and post when every helpful lesson is held out at the same rate;"
          " engine: the engine's e-value in a clean world, kinder than the gym's")


if __name__ == "__main__":
    main()
