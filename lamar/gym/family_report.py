"""The family's tables, views over its flat rows: each policy's captured share with its 95% interval,
paired differences by world, forgetting, verdicts, and captured share by world feature."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

from lamar.gym.family import DrawnWorld
from lamar.gym.metrics import interval_text

Row = dict[str, Any]


def captured_by_world(rows: Sequence[Row], policy: str, column: str = "captured") -> dict[int, float]:
    """`policy`'s value of `column` in each world that has one."""
    return {row["world"]: row[column] for row in rows if row["policy"] == policy and row[column] is not None}


def paired(rows: Sequence[Row], policy: str, other: str, column: str = "captured") -> list[float]:
    """`policy` minus `other` in `column`, world by world (worlds where both have a value)."""
    mine, theirs = captured_by_world(rows, policy, column), captured_by_world(rows, other, column)
    return [float(mine[w] - theirs[w]) for w in sorted(mine) if w in theirs]


def best_peer(rows: Sequence[Row], peers: Sequence[str]) -> str | None:
    """The peer with the highest mean captured share on these rows."""
    scored = [(statistics.fmean(v), name) for name in peers if (v := list(captured_by_world(rows, name).values()))]
    return max(scored)[1] if scored else None


def kept_share(mine: Sequence[Row]) -> float | None:
    """One policy's rows: its fossil kept share, pooled over the worlds' used fossils (None if it used none)."""
    kept_n = sum(row["fossil_kept_n"] for row in mine)
    return sum(row["fossil_kept_sum"] for row in mine) / kept_n if kept_n else None


def wrong_drops(mine: Sequence[Row]) -> str:
    """One policy's rows: lessons it dropped while the oracle would still inject them, per 1 000
    task episodes in which such a lesson was in use and among the oracle's k best, as printed."""
    exposure = sum(row["in_best"] for row in mine)
    return f"{1000 * sum(row['wrong_drops'] for row in mine) / exposure:.2f}" if exposure else "-"


def forgetting(mine: Sequence[Row]) -> tuple[str, str]:
    """One policy's rows: its fossil kept share (pooled over the worlds' used fossils) and the
    median of the worlds' task episodes until dropped, as printed."""
    share = kept_share(mine)
    kept = f"{100 * share:.1f}%" if share is not None else "-"
    drops = [row["fossil_drop"] for row in mine if row["fossil_drop"] is not None]
    return kept, f"{statistics.median(drops):.0f}" if drops else "-"


def forgetting_paired(rows: Sequence[Row], policy: str, other: str) -> tuple[list[float], list[float]]:
    """`policy` minus `other`, world by world, in fossil kept share and in task episodes until
    dropped, over the worlds where both used a fossil that turned harmful. The pooled columns of
    `forgetting` compare different sets of fossils (each policy's own used ones) and vary a lot
    from world to world: this is the comparison that can say whether one forgets slower."""
    return paired(rows, policy, other, "fossil_kept"), paired(rows, policy, other, "fossil_drop")


def fastest_forgetter(rows: Sequence[Row], peers: Sequence[str]) -> str | None:
    """The peer that kept the least of its used fossils, pooled over the worlds."""
    shares = [(kept_share([row for row in rows if row["policy"] == name]), name) for name in peers]
    scored = [(share, name) for share, name in shares if share is not None]
    return min(scored)[1] if scored else None


def forgetting_line(rows: Sequence[Row], policy: str, peers: Sequence[str]) -> list[str]:
    """The paired forgetting comparison of `policy` with the fastest peer to forget, as a table note."""
    fastest = fastest_forgetter(rows, peers)
    if fastest is None:
        return []
    kept, drop = forgetting_paired(rows, policy, fastest)
    return [(f"   fastest peer to forget here: {fastest}; {policy} minus {fastest}, "
             "paired over the worlds where both used a fossil:"),
            (f"   fossil kept {interval_text(kept, 100, 1)} points ({len(kept)} worlds), dropped after "
             f"{interval_text(drop, digits=0)} task episodes ({len(drop)} worlds)")]


def summary_table(rows: Sequence[Row], policies: Sequence[str], reference: str, peers: Sequence[str]) -> list[str]:
    """One line per policy: captured, its paired difference with `reference`, forgetting, verdicts."""
    worlds = len({row["world"] for row in rows})
    lines = [f"Captured share of the oracle's gain over none, paired by world ({worlds} worlds; mean ± 95% interval)",
             (f"{'policy':<22}{'captured':>16}{f'minus {reference}':>18}{'fossil kept':>13}{'dropped after':>15}"
             f"{'wrong drops':>13}{'helps proven':>15}{'harms proven':>15}{'wrong':>7}")]
    for name in policies:
        mine = [row for row in rows if row["policy"] == name]
        if not mine or name in ("none", "oracle"):
            continue
        kept, drop = forgetting(mine)
        verdicts = ["-", "-", "-"]
        if mine[0].get("helpful") is not None:
            helpful, harmful = (sum(row[key] for row in mine) for key in ("helpful", "harmful"))
            verdicts = [f"{sum(row['helps'] for row in mine)}/{helpful}",
                        f"{sum(row['harms'] for row in mine)}/{harmful}",
                        str(sum(row["wrong"] for row in mine))]
        diff = "" if name == reference else interval_text(paired(rows, name, reference))
        captured = interval_text([r["captured"] for r in mine if r["captured"] is not None])
        lines.append(f"{name:<22}{captured:>16}{diff:>18}"
                     f"{kept:>13}{drop:>15}{wrong_drops(mine):>13}{verdicts[0]:>15}{verdicts[1]:>15}{verdicts[2]:>7}")
    best = best_peer(rows, peers)
    if best is not None:
        lines.append(f"   best peer here: {best}; {reference} minus {best}, "
                     f"paired: {interval_text(paired(rows, reference, best))}")
    lines += forgetting_line(rows, reference, peers)
    lines += [("   fossil kept: among lessons a policy used (>= 25% of their task's episodes just before) "
               "when they turned"),
              ("   harmful, the share of their task's episodes 200-700 later still injecting them; "
               "dropped after: median"),
              "   task episodes until 50 in a row inject it in under 5%. wrong drops: the same drop of a lesson in use",
              "   while all 50 episodes would still have it among the oracle's k best, per 1 000 episodes of such use.",
              "   helps / harms proven: lessons helpful / harmful at the end judged so at the end; wrong: judged",
              "   helps with a truth <= 0 or harms with >= 0."]
    return lines


# Each feature: its name and a function of the world to its bin.
FEATURES: tuple[tuple[str, Callable[[DrawnWorld], str]], ...] = (
    ("reported episodes per lesson", lambda w: _bin(w.episodes * (1 - w.missing) / len(w.lessons), (32, 100))),
    ("flips to harm", lambda w: "some" if any(x.flip_at is not None and x.after < 0 for x in w.lessons) else "none"),
    ("missing reports", lambda w: "20-35%" if w.missing < 0.35 else "35-50%"),
    ("k", lambda w: str(w.k)),
    ("base rate", lambda w: w.drift),
    ("context-dependent lessons", lambda w: "yes" if w.languages else "no"),
)


def _bin(value: float, edges: tuple[float, ...]) -> str:
    low = 0.0
    for edge in edges:
        if value < edge:
            return f"{low:.0f}-{edge:.0f}"
        low = edge
    return f">= {low:.0f}"


def feature_table(rows: Sequence[Row], policies: Sequence[str]) -> list[str]:
    """Mean captured share by each feature's bins, one column per policy."""
    shown = [p for p in policies if p not in ("none", "oracle")]
    worlds = {seed: DrawnWorld(seed) for seed in sorted({row["world"] for row in rows})}
    lines = ["", "Captured share by world feature (mean over the worlds in each bin)",
             f"{'feature':<30}{'bin':<9}{'worlds':>7}" + "".join(f"{p[:14]:>15}" for p in shown)]
    for feature, of in FEATURES:
        bins: dict[str, list[int]] = {}
        for seed, world in worlds.items():
            bins.setdefault(of(world), []).append(seed)
        for label in sorted(bins):
            seeds = set(bins[label])
            cells = []
            for name in shown:
                values = [v for w, v in captured_by_world(rows, name).items() if w in seeds]
                cells.append(f"{statistics.fmean(values):.3f}" if values else "-")
            lines.append(f"{feature:<30}{label:<9}{len(seeds):>7}" + "".join(f"{c:>15}" for c in cells))
    return lines


def world_table(rows: Sequence[Row], policies: Sequence[str]) -> list[str]:
    """One line per world: its features and each policy's captured share."""
    shown = [p for p in policies if p not in ("none", "oracle")]
    lines = ["", "Per world (captured share; the rows, with every column, go to --json)",
             f"{'world':>6}{'tasks':>6}{'lessons':>8}{'k':>3}{'episodes':>9}{'missing':>8}{'drift':>7}"
             + "".join(f"{p[:10]:>11}" for p in shown)]
    worlds = sorted({row["world"] for row in rows})
    by = {(row["policy"], row["world"]): row for row in rows}
    for seed in worlds:
        w = DrawnWorld(seed)
        cells = [by.get((p, seed), {}).get("captured") for p in shown]
        lines.append(f"{seed:>6}{w.n_tasks:>6}{len(w.lessons):>8}{w.k:>3}{w.episodes:>9}{100 * w.missing:>7.0f}%"
                     f"{w.drift:>7}" + "".join(f"{'-' if c is None else f'{c:.3f}':>11}" for c in cells))
    return lines


__all__ = ["FEATURES", "best_peer", "captured_by_world", "fastest_forgetter", "feature_table", "forgetting",
           "forgetting_line", "forgetting_paired", "kept_share", "paired", "summary_table", "world_table",
           "wrong_drops"]
