"""Plots of a gym run, a view over its series rows (matplotlib, the optional `plot` extra)."""

from __future__ import annotations

import math
import os
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from lamar.gym.world import reward_gap

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from lamar.gym.result import GymResult

_KIND_COLORS = {"true": "tab:green", "false": "tab:red", "inert": "tab:gray", "fossil": "tab:purple"}


def require_matplotlib() -> None:
    """Raise an ImportError naming the extra when matplotlib is not installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        from lamar.extras import needs_extra

        raise ImportError(needs_extra("plotting the gym needs matplotlib", "plot", exc)) from exc


def mean_series(series: list[dict[str, Any]], name: str, policy: str,
                key: str = "value") -> tuple[list[int], list[float]]:
    """(episodes, mean over seeds) of one series of one policy, skipping missing values."""
    sums: dict[int, list[float]] = defaultdict(list)
    for row in series:
        if row["series"] == name and row["policy"] == policy and row[key] is not None:
            sums[row["episode"]].append(row[key])
    xs = sorted(sums)
    return xs, [math.fsum(sums[x]) / len(sums[x]) for x in xs]


def _smooth(xs: list[int], ys: list[float], points: int = 40) -> tuple[list[int], list[float]]:
    """Merge neighbouring windows so a long run draws about `points` points, not noise."""
    step = max(1, round(len(xs) / points))
    merged = [(xs[min(i + step, len(xs)) - 1], math.fsum(ys[i:i + step]) / len(ys[i:i + step]))
              for i in range(0, len(xs), step)]
    return [x for x, _ in merged], [y for _, y in merged]


def plot_result(result: GymResult, path: str | os.PathLike[str] | None = None) -> Figure:
    """Three panels: success over time per policy, the fossil's share of injected slots, and
    lamar's lift by kind of lesson with its bounds (means over seeds); saved to `path` if given.

    Raises:
        ImportError: matplotlib is not installed (the `plot` extra).
    """
    require_matplotlib()
    from matplotlib.figure import Figure

    config, series = result.config, result.series
    lamar_ran = "lamar" in config.policies
    fig = Figure(figsize=(15 if lamar_ran else 10, 4.2), layout="constrained")
    axes = fig.subplots(1, 3 if lamar_ran else 2)
    success, fossil = axes[0], axes[1]
    for policy in config.policies:
        success.plot(*_smooth(*mean_series(series, "success", policy)), label=policy)
        fossil.plot(*mean_series(series, "fossil_share", policy), label=policy)
    success.set(title=f"Success rate (mean of {config.seeds} seeds)",
                xlabel="episode", ylabel="success rate")
    fossil.set(title="The fossil's share of injected slots", xlabel="episode", ylabel="share of slots")
    success.legend(loc="lower right", fontsize="small")
    if lamar_ran:
        lift = axes[2]
        lessons = [row for row in series if row["series"] == "lift"]
        for kind, color in _KIND_COLORS.items():
            rows = [dict(row, series=kind) for row in lessons if row["kind"] == kind]
            xs, mean = mean_series(rows, kind, "lamar")
            lx, lower = mean_series(rows, kind, "lamar", "lower")
            ux, upper = mean_series(rows, kind, "lamar", "upper")
            lift.plot(xs, mean, color=color, label=kind.upper())
            if kind in ("true", "fossil") and lx == ux and lx:
                lift.fill_between(lx, lower, upper, color=color, alpha=0.12)
        lift.axhline(0.0, color="black", linewidth=0.6)
        for effect in (config.help_effect, -config.hurt_effect):
            lift.axhline(effect * reward_gap(), color="black", linewidth=0.6, linestyle="--")
        lift.set_ylim(-1.0, 1.0)
        lift.set(title="lamar: lift and bounds by kind (dashed: truth)", xlabel="episode",
                 ylabel="lift on reward")
        lift.legend(loc="lower left", fontsize="small")
    for ax in axes:
        ax.axvline(config.flip, color="black", linestyle=":", linewidth=1.0)
    if path is not None:
        fig.savefig(os.fspath(path), dpi=110)
    return fig
