"""The action distribution of a Bernoulli Thompson sampling ranker before any update (each item
draws a score from its Beta prior, the top scores are shown), the quantity obp's
`BernoulliTS.compute_batch_action_dist` estimates by Monte Carlo, computed by integration."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

SPREAD = 14.0  # the grid covers every prior's mean plus or minus this many standard deviations


def action_distribution(alpha: Sequence[float], beta: Sequence[float], positions: int = 3,
                        grid: int = 4000) -> list[list[float]]:
    """dist[i][c]: the probability that item i is shown at position c (0 = first), that is the
    integral of f_i(x) P(exactly c of the other items score above x) dx.

    The x axis is cut into `grid` equal cells over the priors' bulk; each item's mass in a cell is
    its density at the midpoint times the width, renormalised to sum to 1, and the count of other
    items above x is a Poisson-binomial law computed by prefix and suffix products, exactly.
    """
    n = len(alpha)
    if n != len(beta) or n < positions or positions < 1:
        raise ValueError("alpha and beta need one entry per item, and at least `positions` items")
    means = [a / (a + b) for a, b in zip(alpha, beta, strict=True)]
    sds = [math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1))) for a, b in zip(alpha, beta, strict=True)]
    low = max(0.0, min(m - SPREAD * s for m, s in zip(means, sds, strict=True)))
    high = min(1.0, max(m + SPREAD * s for m, s in zip(means, sds, strict=True)))
    width = (high - low) / grid
    mids = [low + (k + 0.5) * width for k in range(grid)]
    masses = [_cell_masses(a, b, mids) for a, b in zip(alpha, beta, strict=True)]
    dist = [[0.0] * positions for _ in range(n)]
    below = [0.0] * n  # each item's probability of scoring below the current cell's lower edge
    for k in range(grid):
        # Probability that item j scores below the cell's midpoint: what lies in earlier cells
        # plus half of this one.
        under = [below[j] + 0.5 * masses[j][k] for j in range(n)]
        prefix = _counts(under, positions)
        suffix = _counts(under[::-1], positions)[::-1]
        for i in range(n):
            mass = masses[i][k]
            if mass > 0.0:
                before, after = prefix[i], suffix[i + 1]
                row = dist[i]
                for c in range(positions):
                    row[c] += mass * sum(before[a] * after[c - a] for a in range(c + 1))
        for j in range(n):
            below[j] += masses[j][k]
    return dist


def _cell_masses(a: float, b: float, mids: list[float]) -> list[float]:
    """Beta(a, b)'s density at each midpoint, scaled to sum to 1 over the grid."""
    log_norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    values = []
    for x in mids:
        values.append(math.exp(log_norm + (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x)) if 0.0 < x < 1.0
                      else 0.0)
    total = sum(values)
    return [v / total for v in values] if total > 0.0 else values


def _counts(under: list[float], positions: int) -> list[list[float]]:
    """out[j][c]: the probability that exactly c of the first j items score above x (c < positions)."""
    state = [1.0] + [0.0] * (positions - 1)
    out = [state]
    for u in under:
        over = 1.0 - u
        state = [state[c] * u + (state[c - 1] * over if c else 0.0) for c in range(positions)]
        out.append(state)
    return out


def sampled_distribution(alpha: Sequence[float], beta: Sequence[float], positions: int, draws: int,
                         seed: int) -> list[list[float]]:
    """The same probabilities by obp's Monte Carlo procedure: draw every item's score, sort
    descending, count the first `positions` (slow in pure Python; for checking the integral)."""
    rng = random.Random(seed)
    n = len(alpha)
    counts = [[0] * positions for _ in range(n)]
    for _ in range(draws):
        scores = [rng.betavariate(a, b) for a, b in zip(alpha, beta, strict=True)]
        top = sorted(range(n), key=scores.__getitem__, reverse=True)[:positions]
        for c, item in enumerate(top):
            counts[item][c] += 1
    return [[count / draws for count in row] for row in counts]
