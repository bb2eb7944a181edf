"""The second design's asymptotic confidence sequence, frozen for the gym's frontier."""

from __future__ import annotations

import math


def confidence_radius(variance_sum: float, alpha: float, information: float = 150.0) -> float:
    """Radius of a two-sided asymptotic confidence sequence for a weighted running sum.

    Time-uniform CLT bound (Waudby-Smith, Arnold, Wu, Ramdas and Howard, 2021, Thm 2.2),
    stated for the martingale S = sum w (psi - lift) with variance process `variance_sum`:
    with probability >= 1 - alpha, |S| stays within the radius at *every* episode, so
    looking after each one does not inflate false verdicts. Divide by the sum of weights
    for a bound on the lift. `rho` is fixed in advance; the bound is tightest when the
    variance process is near `information`.

    >>> round(confidence_radius(100.0, 0.05), 2)
    30.51
    >>> confidence_radius(0.0, 0.05) > 0
    True
    """
    log_term = -2.0 * math.log(alpha)
    rho2 = (log_term + math.log(log_term + 1.0)) / information
    v = variance_sum * rho2
    return math.sqrt(2.0 * (v + 1.0) / rho2 * math.log(math.sqrt(v + 1.0) / alpha))
