"""Summaries over seeds (means with Student-t 95% intervals, medians and ranges, picked from flat rows)
and the `Target` record the report judges them by."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any


@dataclasses.dataclass(frozen=True)
class Target:
    """One target of the issue: `status` is "PASS", "MISS" or "n/a" (a policy it needs did not run)."""

    name: str
    status: str
    measured: str


# Two-sided 95% Student-t quantiles for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)


def t975(df: int) -> float:
    """The 97.5% quantile of Student's t with `df` degrees of freedom.

    >>> t975(19), round(t975(1000), 3)
    (2.093, 1.962)
    """
    if df < 1:
        return math.inf
    if df <= len(_T975):
        return _T975[df - 1]
    z = statistics.NormalDist().inv_cdf(0.975)
    # Cornish-Fisher expansion around the normal quantile; exact to 3 decimals beyond 30.
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    """(mean, half-width of its 95% interval over seeds); the half-width is nan for one value.

    >>> [round(x, 4) for x in mean_interval([0.5, 0.6, 0.7])]
    [0.6, 0.2484]
    """
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = math.fsum(values) / n
    if n == 1:
        return mean, math.nan
    return mean, t975(n - 1) * statistics.stdev(values) / math.sqrt(n)


def interval_text(values: Sequence[float], scale: float = 1.0, digits: int = 3) -> str:
    """`mean_interval` as table text, "mean ±half" (scaled), "mean" for one value, "-" for none.

    >>> interval_text([0.5, 0.6, 0.7]), interval_text([0.5]), interval_text([])
    ('0.600 ±0.248', '0.500', '-')
    """
    mean, half = mean_interval(list(values))
    if math.isnan(mean):
        return "-"
    return f"{scale * mean:.{digits}f}" + ("" if math.isnan(half) else f" ±{scale * half:.{digits}f}")


def runs_of(runs: Iterable[dict[str, Any]], policy: str) -> list[dict[str, Any]]:
    """The run rows of one policy, in seed order."""
    return [row for row in runs if row["policy"] == policy]


def column(rows: Iterable[dict[str, Any]], key: str) -> list[Any]:
    """The non-missing values of one column."""
    return [row[key] for row in rows if row.get(key) is not None]


def median_range(values: Sequence[float]) -> str:
    """'median [min, max]' of some counts, or '-' when there are none.

    >>> median_range([3, 1, 10])
    '3 [1, 10]'
    """
    if not values:
        return "-"
    return f"{statistics.median(values):.0f} [{min(values):.0f}, {max(values):.0f}]"
