"""The gym across harder worlds (`python -m lamar.gym --variants`): smaller effects, more lessons
per task, missing and late reports, and the context variant, one summary line each."""

from __future__ import annotations

import dataclasses
from typing import Any

from lamar.gym.config import GymConfig
from lamar.gym.metrics import column, interval_text, runs_of
from lamar.gym.result import GymResult
from lamar.gym.runner import Progress, run_gym
from lamar.gym.world import LANGUAGES

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "effect 0.15": {"help_effect": 0.15, "hurt_effect": 0.15},
    "effect 0.10": {"help_effect": 0.10, "hurt_effect": 0.10},
    "20 lessons/task": {"lessons": 20},
    "40% missing": {"report_rate": 0.6},
    "<= 40 late": {"report_delay": 40},
    "all four at once": {"help_effect": 0.10, "hurt_effect": 0.10, "lessons": 20, "report_rate": 0.6,
                         "report_delay": 40},
    "context": {"context": True},
}


def run_variants(base: GymConfig, *, progress: Progress | None = None,
                 names: tuple[str, ...] | None = None) -> dict[str, GymResult]:
    """Run `base` with each variant's overrides (all of `VARIANTS`, or those named)."""
    out = {}
    for name in names or tuple(VARIANTS):
        out[name] = run_gym(dataclasses.replace(base, **VARIANTS[name]), progress=progress)
    return out


def variant_row(name: str, result: GymResult) -> dict[str, Any]:
    """One flat row of a variant's headline figures (the line `render_variants` prints)."""
    lamar, qvalue = runs_of(result.runs, "lamar"), runs_of(result.runs, "qvalue")
    row: dict[str, Any] = {"variant": name}
    for phase in ("pre", "post"):
        row[f"captured_{phase}"] = interval_text(column(lamar, f"captured_{phase}"), 100, 1)
        row[f"qvalue_{phase}"] = interval_text(column(qvalue, f"captured_{phase}"), 100, 1)
    share = column(lamar, "share_fossil_post")
    row["fossil_share"] = f"{100 * sum(share) / len(share):.2f}" if share else "-"
    helps = column(lamar, "helps_end")
    row["helps_of_3"] = f"{sum(helps) / len(helps):.2f}" if helps else "-"
    row["wrong"] = sum(column(lamar, "monitored_wrong_lessons"))
    row["harms"] = f"{sum(column(lamar, 'harms_false_end'))}/{sum(column(lamar, 'false_lessons'))}"
    row["retired"] = f"{sum(column(lamar, 'sleep_retire_false_end'))}"
    if result.config.context:
        swift = column(lamar, f"split_rate_{LANGUAGES[0]}_2000")
        python = column(lamar, f"split_rate_{LANGUAGES[1]}_2000")
        narrow = sum(bool(v) for v in column(lamar, "sleep_narrow_split_end"))
        rates = " vs ".join(f"{100 * sum(v) / len(v):.0f}%" if v else "-" for v in (swift, python))
        row["context"] = f"{rates}, narrowed {narrow}/{len(lamar)}"
    else:
        row["context"] = ""
    return row


def render_variants(results: dict[str, GymResult]) -> str:
    """The variants table: lamar's headline figures per world (qvalue beside it)."""
    any_result = next(iter(results.values()))
    c = any_result.config
    heads = ("variant", "captured pre", "qvalue pre", "captured post", "qvalue post", "fossil %", "helps/3",
             "wrong", "harms", "retire", "context: swift vs python, narrowed")
    widths = (18, 14, 14, 14, 14, 9, 8, 6, 7, 7, 0)
    lines = [(f"Lamar memory gym across variants: {c.seeds} seeds x {c.episodes} episodes each, policies "
              f"{', '.join(c.policies)} (mean ± 95% interval over seeds)")]
    lines.append("".join(f"{h:<{w}}" if w else h for h, w in zip(heads, widths, strict=True)))
    for name, result in results.items():
        row = variant_row(name, result)
        cells = (row["variant"], row["captured_pre"], row["qvalue_pre"], row["captured_post"], row["qvalue_post"],
                 row["fossil_share"], row["helps_of_3"], str(row["wrong"]), row["harms"], row["retired"],
                 row["context"])
        lines.append("".join(f"{cell:<{w}}" if w else cell for cell, w in zip(cells, widths, strict=True)))
    lines += [
        "   captured: % of the oracle's gain over none, same seed and phase; fossil %: its share of lamar's",
        "   injected slots after the flip; helps/3: still-helpful lessons proven helps at the end (mean); wrong:",
        "   lessons whose verdict contradicted the truth at some report (read after every report, 300",
        "   randomized episodes of grace after the flip); harms: originally harmful lessons judged harms",
        "   at the end; retire: of those, proposed for retirement by sleep at the end; context: injection",
        "   rate of the split lesson in episodes 1000-2000 per language, and seeds where sleep proposed",
        "   narrowing it to language=swift by the end.",
    ]
    return "\n".join(lines)


__all__ = ["VARIANTS", "render_variants", "run_variants", "variant_row"]
