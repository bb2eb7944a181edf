"""Views over the audit's rows: Clopper-Pearson intervals and the per-scenario table."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(k + 1):
        total += math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq)
    return min(total, 1.0)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact two-sided interval for a binomial proportion k / n.

    >>> tuple(round(x, 4) for x in clopper_pearson(0, 200))
    (0.0, 0.0183)
    >>> tuple(round(x, 4) for x in clopper_pearson(5, 100))
    (0.0164, 0.1128)
    """
    if n <= 0:
        return 0.0, 1.0
    tail = (1.0 - confidence) / 2.0

    def solve(f: Any) -> float:  # f increasing in p on [0, 1]: bisect f(p) = 0
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2.0
            if f(mid) < 0.0:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2.0

    lower = 0.0 if k == 0 else solve(lambda p: (1.0 - tail) - _binom_cdf(k - 1, n, p))
    upper = 1.0 if k == n else solve(lambda p: tail - _binom_cdf(k, n, p))
    return lower, upper


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "-"
    lo, hi = clopper_pearson(k, n)
    return f"{k}/{n} {100 * k / n:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"


def summarize(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One summary row per scenario, counts and Clopper-Pearson bounds (percent) included."""
    by: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by.setdefault(row["scenario"], []).append(row)
    out = []
    for name, group in by.items():
        n = len(group)
        summary: dict[str, Any] = {"scenario": name, "runs": n}
        for key in ("wrong_helps", "wrong_harms"):
            k = sum(r[key] for r in group)
            summary[key] = k
            summary[key + "_ci"] = [round(100 * x, 2) for x in clopper_pearson(k, n)]
        judged = [r["withdrawn_300"] for r in group if r.get("withdrawn_300") is not None]
        summary["helps_at_change"] = sum(r.get("helps_at_change") or 0 for r in group)
        summary["withdrawn_300"] = sum(judged)
        summary["withdrawn_300_of"] = len(judged)
        summary["withdrawn_300_ci"] = [round(100 * x, 2) for x in clopper_pearson(sum(judged), len(judged))]
        for key in ("harmful", "harms_proven", "helpful", "helps_proven", "restarts", "steady_helpful",
                    "steady_restarts"):
            summary[key] = sum(r.get(key, 0) for r in group)
        # times a still-helping lesson is withdrawn (segment closed), per lesson and 2 000 episodes
        exposure = summary["steady_helpful"] * sum(r["episodes"] for r in group) / 2000 / n
        summary["steady_withdrawn"] = round(summary["steady_restarts"] / exposure, 4) if exposure else None
        for key in ("success", "holdout_cost"):
            summary[key] = round(sum(r[key] for r in group) / n, 4)
        out.append(summary)
    return out


def table(summaries: Iterable[Mapping[str, Any]]) -> str:
    """The summaries as a Markdown table (percent with 95% Clopper-Pearson intervals)."""
    head = ("| scenario | runs | wrong helps | wrong harms | helps withdrawn <= 300 "
            "| still-helping withdrawn per 2 000 ep. | harms proven | helps proven | holdout cost |")
    lines = [head, "|" + "---|" * 9]
    for s in summaries:
        n = s["runs"]
        # A rate, not a share: a lesson can be withdrawn several times in 2 000 episodes.
        steady = "-" if s.get("steady_withdrawn") is None else f"{s['steady_withdrawn']:.3f}"
        lines.append(
            f"| {s['scenario']} | {n} | {_rate(s['wrong_helps'], n)} | {_rate(s['wrong_harms'], n)} "
            f"| {_rate(s['withdrawn_300'], s['withdrawn_300_of'])} | {steady} "
            f"| {s['harms_proven']}/{s['harmful']} | {s['helps_proven']}/{s['helpful']} "
            f"| {s['holdout_cost']:.4f} |")
    return "\n".join(lines)
