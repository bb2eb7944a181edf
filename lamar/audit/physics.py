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


def needed(effect: float, q: float, m: float, s: float) -> float:
    """Randomized episodes to prove `effect` (success probability) at coin q with 80% power."""
    return (m + 0.84) ** 2 * s * s / ((effect * gap()) ** 2 * q * (1 - q))


def render(lessons: int = 6, alpha_helps: float = 0.02, alpha_harms: float = 0.05) -> str:
    """The tables docs/decisions.md quotes, computed from the bound itself."""
    s = reward_sd(0.5)
    m_helps = width(2 * segment_alpha(alpha_helps, 1) / lessons, 150.0)
    m_harms = width(2 * segment_alpha(alpha_harms, 1) / lessons, 150.0)
    qs = (0.05, 0.15, 0.3, 0.5)
    lines = [(f"reward gap {gap():.3f}, reward sd at 50% success {s:.3f}; bound width m = {m_helps:.2f} (helps), "
              f"{m_harms:.2f} (harms) standard errors at {lessons} lessons, first segment"),
             "randomized episodes to prove an effect (80% power):",
             "effect  " + "".join(f"   q={q:<5}" for q in qs)]
    for verdict, m in (("helps", m_helps), ("harms", m_harms)):
        for effect in (0.2, 0.15, 0.1):
            lines.append(f"{verdict} {effect:<4}" + "".join(f"{needed(effect, q, m, s):>10.0f}" for q in qs))
    lines.append("withdrawal after 300 randomized episodes: separation z, and the share of reads a still-helping "
                 "lesson is in doubt at 95% power:")
    for effect in (0.2, 0.1):
        cells = []
        for q in qs:
            z = effect * gap() * math.sqrt(300 * q * (1 - q)) / s
            cells.append(f"z={z:.2f} doubt={NormalDist().cdf(1.645 - z):.2f}")
        lines.append(f"  {effect}: " + "  ".join(cells))
    return "\n".join(lines)
