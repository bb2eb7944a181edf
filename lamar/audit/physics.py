"""The physical limits, computed from the bound and the detector themselves: randomized episodes
needed to prove an effect, and the fall detector's delay by fall size (docs/decisions.md)."""

from __future__ import annotations

import math
import random

from lamar.policy import change
from lamar.policy.alpha import lesson_alpha
from lamar.policy.change import ChangeDetector
from lamar.policy.verdicts import LAMBDAS
from lamar.signals import Signal

_SUCCESS = (Signal.SHIPPED.reward, Signal.ACCEPTED.reward)  # the gym's and the audit's outcomes
_FAILURE = (Signal.REVERTED.reward, Signal.CORRECTED.reward, Signal.REASKED.reward)


def outcomes(success: float) -> list[tuple[float, float]]:
    """(reward, probability) of one episode at this success probability (the gym's signals)."""
    return [(r, success / 2) for r in _SUCCESS] + [(r, (1 - success) / 3) for r in _FAILURE]


def reward_sd(success: float) -> float:
    """Standard deviation of the reward at this success probability."""
    mean = sum(r * w for r, w in outcomes(success))
    return math.sqrt(sum(w * (r - mean) ** 2 for r, w in outcomes(success)))


def gap() -> float:
    """Reward of a success minus that of a failure, on average: a success-probability effect times
    this is the effect on reward."""
    return sum(_SUCCESS) / 2 - sum(_FAILURE) / 3


def bound(effect: float, q: float, n: int, alpha: float, base: float = 0.4) -> tuple[float, float]:
    """(the bound's expected end nearer zero after `n` randomized episodes, its estimate's standard
    error), for a lesson adding `effect` to a `base` success rate (the lower end for a positive
    effect, the upper for a negative one), held out at coin q, at level `alpha`, its baselines at
    their true values: the ledger's arithmetic in expectation."""
    p = 1.0 - q
    w = p * (1.0 - p)
    mu0 = sum(r * x for r, x in outcomes(base))
    mu1 = sum(r * x for r, x in outcomes(base + effect))
    lift = mu1 - mu0
    c = max((1 - p) * (1 + mu1), (1 - p) * (1 - mu1), p * (1 - mu0), p * (1 + mu0))
    residuals = [((1 - p) * (r - mu1) / c, p * x) for r, x in outcomes(base + effect)]
    residuals += [(-p * (r - mu0) / c, (1 - p) * x) for r, x in outcomes(base)]
    b = n * w / c
    log_alpha = math.log(len(LAMBDAS) / alpha)
    side = 1.0 if effect >= 0.0 else -1.0  # the upper side bets on -xi
    width = min((log_alpha - n * sum(x * (math.log1p(side * lam * xi) - side * lam * xi) for xi, x in residuals))
                / lam for lam in LAMBDAS) / b
    se = math.sqrt(n * sum(x * xi * xi for xi, x in residuals)) / b
    return lift - side * width, se


def needed(effect: float, q: float, alpha: float, power_z: float = 0.84) -> int | None:
    """Randomized episodes until the expected lower bound clears 0 by `power_z` standard errors
    (about 80% power); None beyond a million, or for no effect."""
    if effect == 0.0:
        return None
    def ok(n: int) -> bool:
        end, se = bound(effect, q, n, alpha)
        return (end - power_z * se > 0.0) if effect > 0.0 else (end + power_z * se < 0.0)

    hi = 16
    while not ok(hi):
        hi *= 2
        if hi > 1 << 20:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def fall_delay(drop: float, base: float = 0.6, runs: int = 200, cap: int = 3000) -> tuple[float, float]:
    """(median, 90th percentile) of the injected episodes the fall detector takes to fire after the
    success rate of a lesson's injected episodes falls by `drop` (the gym's signals; 500 episodes
    before the fall form its reference; `cap` when it never fires)."""
    return _median_p90(fall_delays(drop, base, runs, cap))


def _median_p90(delays: list[int]) -> tuple[float, float]:
    """The median and the 90th percentile of sorted delays."""
    return float(delays[len(delays) // 2]), float(delays[9 * len(delays) // 10])


def fall_delays(drop: float, base: float = 0.6, runs: int = 200, cap: int = 3000) -> list[int]:
    """Each run's delay, as `fall_delay` counts it, sorted."""
    rng = random.Random(f"lamar-physics:{drop}")
    sd = reward_sd(base)
    delays = []
    for _ in range(runs):
        detector = ChangeDetector()
        for _ in range(500):
            detector.update(_draw(rng, base), True, sd)
        delays.append(next((t for t in range(cap) if detector.update(_draw(rng, base - drop), True, sd)), cap))
    return sorted(delays)


def false_alarm_interval(base: float = 0.6, episodes: int = 2_000_000) -> float:
    """Injected episodes per false alarm of the fall detector on a lesson whose effect never moves
    (over enough episodes to count dozens of alarms: Lorden's benchmark rests on its logarithm)."""
    rng = random.Random("lamar-physics:stationary")
    sd = reward_sd(base)
    detector, alarms = ChangeDetector(), 0
    for _ in range(episodes):
        alarms += detector.update(_draw(rng, base), True, sd) is not None
    return episodes / max(alarms, 1)


def least_delay(drop: float, interval: float, base: float = 0.6) -> float:
    """The fewest injected episodes any detector can take on average to see a fall of `drop` in the
    success rate, if its false alarms come no more often than once per `interval` episodes:
    log(interval) over the information one episode carries about the fall (Lorden 1971,
    "Procedures for reacting to a change in distribution", asymptotically in the interval). A
    success or a failure is what moves; which signal it was does not, so the information is the
    Kullback-Leibler divergence of the new success rate's Bernoulli from the old one's.

    >>> round(least_delay(0.3, 40_000), 1)
    57.7
    """
    after = base - drop
    divergence = after * math.log(after / base) + (1.0 - after) * math.log((1.0 - after) / (1.0 - base))
    return math.log(interval) / divergence


def _draw(rng: random.Random, success: float) -> float:
    if rng.random() < success:
        return _SUCCESS[rng.random() < 0.5]
    return _FAILURE[min(2, int(3 * rng.random()))]


def render(rank: int = 12, alpha_helps: float = 0.02, alpha_harms: float = 0.05) -> str:
    """The tables docs/decisions.md quotes, computed from the bound and the detector themselves."""
    helps, harms = lesson_alpha(alpha_helps, rank, 1), lesson_alpha(alpha_harms, rank, 1)
    qs = (0.04, 0.06, 0.10, 0.15, 0.30)
    lines = [(f"reward gap {gap():.3f}, reward sd at 50% success {reward_sd(0.5):.3f}; the lesson created "
             f"{rank}th, first segment: helps at {helps:.2e}, harms at {harms:.2e}"),
             "randomized episodes to prove an effect (about 80% power; base rate 0.4):",
             "effect   " + "".join(f"{f'q={q}':>10}" for q in qs)]
    for verdict, alpha, sign in (("helps", helps, 1), ("harms", harms, -1)):
        for effect in (0.3, 0.2, 0.15, 0.1):
            cells = [needed(sign * effect, q, alpha) for q in qs]
            lines.append(f"{verdict} {effect:<4}" + "".join(f"{'-' if n is None else n:>10}" for n in cells))
    falls = (0.4, 0.3, 0.2, 0.15, 0.1)
    interval = false_alarm_interval()
    delays = {d: fall_delays(d) for d in falls}
    lines.append(f"the fall detector (slack {change.SLACK:g} sd at level {change.LEVEL:g}, "
                 f"or {change.SLOW_SLACK:g} sd at {change.SLOW_LEVEL:g}) on injected rewards, "
                 "at a 60% success rate: injected episodes until it fires, median [90th percentile]")
    lines.append("  " + "   ".join(f"fall {d}: {m:.0f} [{p:.0f}]" for d, (m, p) in
                                    ((d, _median_p90(v)) for d, v in delays.items())))
    lines.append(f"  a lesson whose effect never moves: one false alarm per {interval:.0f} injected episodes")
    lines.append("  mean delay (3000 when it never fires) against log(interval) / KL, the mean delay Lorden's bound "
                 "allows any detector with that false-alarm rate as the interval grows")
    lines.append("  " + "   ".join(f"fall {d}: {sum(v) / len(v):.0f} / {least_delay(d, interval):.0f}"
                                    for d, v in delays.items()))
    return "\n".join(lines)


__all__ = ["bound", "fall_delay", "fall_delays", "false_alarm_interval", "gap", "least_delay", "needed", "render",
           "reward_sd"]
