"""The bound's own calibration (`python -m lamar.audit --null N`): replicates of one inert lesson at
the engine's per-lesson level, every bound read after every randomized episode."""

from __future__ import annotations

import random

from lamar.audit.summary import clopper_pearson
from lamar.policy.alpha import lesson_alpha
from lamar.policy.ledger import Ledger
from lamar.policy.verdicts import betting_bounds
from lamar.signals import Signal

RANK = 24  # the gym's lessons: the last one created sets the engine's smallest per-lesson level
COARSE = 0.05
_SUCCESS = (Signal.SHIPPED.reward, Signal.ACCEPTED.reward)
_FAILURE = (Signal.REVERTED.reward, Signal.CORRECTED.reward, Signal.REASKED.reward)


def replicate(seed: int, q: float, alphas: tuple[float, ...], episodes: int = 1000) -> tuple[bool, ...]:
    """Whether the lower bound at each of `alphas` ever crossed 0 in one replicate."""
    rng = random.Random(f"lamar-null:{q}:{seed}")
    ledger = Ledger()
    crossed = [False] * len(alphas)
    p = 1.0 - q
    for _ in range(episodes):
        injected = rng.random() < p
        if rng.random() < 0.4:
            reward = _SUCCESS[rng.random() < 0.5]
        else:
            reward = _FAILURE[min(2, int(3 * rng.random()))]
        ledger.record(reward, injected, p)
        if ledger.a <= 0.0 or all(crossed):
            continue  # the lower bound lies below the estimate, which is <= 0 here
        low, high = ledger.penalties
        for i, alpha in enumerate(alphas):
            if not crossed[i] and betting_bounds(ledger.a, ledger.b, low, high, alpha, alpha)[1] > 0.0:
                crossed[i] = True
    return tuple(crossed)


def _job(args: tuple[int, float, tuple[float, ...]]) -> tuple[bool, ...]:
    return replicate(*args)


def calibrate(replicates: int, jobs: int = 1, alpha_helps: float = 0.02) -> str:
    """The calibration table: `replicates` (at least 2) split over q = 0.04 (the default coin), which
    takes the odd one, and 0.15.

    A replicate feeds the ledger the gym's rewards at a 40% success rate whatever the coin says
    (the lesson does nothing), holds it out at q, and reads the lower bound after each of up to
    1 000 randomized episodes; it is a false helps if the bound ever crosses 0. The bound allows at
    most its level per replicate; the count and its Clopper-Pearson interval say how much of that
    allowance the skewed, heavy-tailed scores of held-out episodes actually use. A coarser level
    (0.05, where a miscalibration would show within a few thousand replicates) is read on the
    same replicates.
    """
    import multiprocessing

    from lamar.bench.arguments import quiet_worker

    level = lesson_alpha(alpha_helps, RANK, 1)
    alphas = (level, COARSE)
    lines = [(f"null calibration: one inert lesson, its lower bound read after each of 1000 randomized episodes; "
             f"levels {level:.2e} (the {RANK}th lesson's first segment at alpha_helps {alpha_helps}) and {COARSE}"),
             "| q | replicates | level | false helps | rate [95% CI] | allowed |", "|---|---|---|---|---|---|"]
    for q, share in ((0.04, replicates - replicates // 2), (0.15, replicates // 2)):
        work = [(seed, q, alphas) for seed in range(share)]
        if min(jobs, len(work)) > 1:  # never more processes than replicates
            with multiprocessing.Pool(min(jobs, len(work)), initializer=quiet_worker) as pool:
                results = pool.map(_job, work, chunksize=64)
        else:
            results = [_job(w) for w in work]
        n = len(results)
        for i, alpha in enumerate(alphas):
            k = sum(r[i] for r in results)
            lo, hi = clopper_pearson(k, n)
            lines.append(f"| {q} | {n} | {alpha:.2e} | {k} | {k / n:.2e} [{lo:.2e}, {hi:.2e}] | {alpha * n:.1f} |")
    return "\n".join(lines)


__all__ = ["calibrate", "replicate"]
