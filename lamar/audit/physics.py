"""The physical limit, computed: randomized episodes needed to prove an effect, and the
separation a withdrawal test can have after 300 randomized episodes (docs/decisions.md)."""

from __future__ import annotations

import math
from statistics import NormalDist

from lamar.policy.lesson import segment_alpha
from lamar.policy.verdicts import confidence_radius
from lamar.signals import Signal

_SUCCESS = (Signal.SHIPPED.reward, Signal.ACCEPTED.reward)  # the gym's and the audit's outcomes
_FAILURE = (Signal.REVERTED.reward, Signal.CORRECTED.reward, Signal.REASKED.reward)


def reward_sd(success: float) -> float:
    """Standard deviation of the reward at this success probability (mixture of the signals)."""
    ms, mf = sum(_SUCCESS) / 2, sum(_FAILURE) / 3
    vs = sum((r - ms) ** 2 for r in _SUCCESS) / 2
    vf = sum((r - mf) ** 2 for r in _FAILURE) / 3
    return math.sqrt(success * (1 - success) * (ms - mf) ** 2 + success * vs + (1 - success) * vf)


def gap() -> float:
    """Reward of a success minus that of a failure, on average: a success-probability effect times
    this is the effect on reward."""
    return sum(_SUCCESS) / 2 - sum(_FAILURE) / 3


def width(alpha: float, information: float) -> float:
    """The bound's radius in standard errors (m) at a variance process of `information`."""
    return confidence_radius(information, alpha) / math.sqrt(information)


def bound_width(alpha: float, divisor: int) -> float:
    """m: the first segment's one-sided bound at `alpha` split over `divisor` (lessons, or lessons
    x slices), in standard errors, as the engine computes it."""
    return width(2 * segment_alpha(alpha, 1) / divisor, 150.0)


def separation(effect: float, randomized: float, q: float, s: float) -> float:
    """z: `effect` (success probability) in standard errors of `randomized` episodes at coin q."""
    return effect * gap() * math.sqrt(randomized * q * (1 - q)) / s


def needed(effect: float, q: float, m: float, s: float) -> float:
    """Randomized episodes to prove `effect` (success probability) at coin q with 80% power."""
    return (m + 0.84) ** 2 * s * s / ((effect * gap()) ** 2 * q * (1 - q))


def power(effect: float, randomized: float, q: float, m: float, s: float) -> float:
    """Chance that `randomized` episodes at coin q prove `effect` at a bound m standard errors
    wide (the best case: the coin at q from the first episode, the bound read once at the end)."""
    return NormalDist().cdf(separation(effect, randomized, q, s) - m)


def narrowing_limit(at: int, alpha_helps: float, alpha_harms: float) -> tuple[float, float, float]:
    """The context gym's split lesson by episode `at`: (episodes per slice, the best chance its
    helpful slice is proven to help, the best chance its harmful slice is proven to harm).

    Narrowing needs both (lamar/sleep/narrow.py), each at the slice family's alpha (divided
    over the gym's lessons x slices). The best a policy can do is a fair coin in every episode of each
    slice from the first one; any real policy does worse.
    """
    from lamar.gym.world import LANGUAGES, LESSONS_PER_TASK, TASKS  # the gym's own constants, not copies

    s = reward_sd(0.5)
    divisor = len(TASKS) * LESSONS_PER_TASK * len(LANGUAGES)
    per_slice = at / len(TASKS) / len(LANGUAGES)
    m_helps, m_harms = bound_width(alpha_helps, divisor), bound_width(alpha_harms, divisor)
    return per_slice, power(0.2, per_slice, 0.5, m_helps, s), power(0.2, per_slice, 0.5, m_harms, s)


def render(lessons: int = 6, alpha_helps: float = 0.02, alpha_harms: float = 0.05) -> str:
    """The tables docs/decisions.md quotes, computed from the bound itself."""
    s = reward_sd(0.5)
    m_helps, m_harms = bound_width(alpha_helps, lessons), bound_width(alpha_harms, lessons)
    qs = (0.05, 0.15, 0.3, 0.5)
    lines = [(f"reward gap {gap():.3f}, reward sd at 50% success {s:.3f}; bound width m = {m_helps:.2f} (helps), "
              f"{m_harms:.2f} (harms) standard errors at {lessons} lessons, first segment"),
             "randomized episodes to prove an effect (80% power):",
             ("effect  " + "".join(f"   q={q:<5}" for q in qs)).rstrip()]
    for verdict, m in (("helps", m_helps), ("harms", m_harms)):
        for effect in (0.2, 0.15, 0.1):
            lines.append(f"{verdict} {effect:<4}" + "".join(f"{needed(effect, q, m, s):>10.0f}" for q in qs))
    lines.append("withdrawal after 300 randomized episodes: separation z, and the share of reads a still-helping "
                 "lesson is in doubt at 95% power (98%, which <= 2% stale helps needs):")
    for effect in (0.2, 0.1):
        cells = []
        for q in qs:
            z = separation(effect, 300, q, s)
            doubt95, doubt98 = (NormalDist().cdf(NormalDist().inv_cdf(p) - z) for p in (0.95, 0.98))
            cells.append(f"z={z:.2f} doubt={doubt95:.2f} ({doubt98:.2f})")
        lines.append(f"  {effect}: " + "  ".join(cells))
    lines.append("narrowing the context gym's split lesson (+0.2 in one language, -0.2 in the other), at "
                 "best (a fair coin in every episode of both slices):")
    for at in (2000, 8000):
        per_slice, helps, harms = narrowing_limit(at, alpha_helps, alpha_harms)
        lines.append(f"  by episode {at}: {per_slice:.0f} episodes per slice; helps proven in one slice with chance "
                     f"<= {helps:.2f}, harms in the other <= {harms:.2f}; narrowing in all 20 seeds <= "
                     f"{min(helps, harms) ** 20:.2g}")
    return "\n".join(lines)
