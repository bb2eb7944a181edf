"""Tables 5 and 6 of the gym's report and its goals in a moving world: verdicts read after every
report, sleep's proposals, and the context variant. A view over the run rows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from lamar.gym.metrics import Target, column, mean_interval, runs_of
from lamar.gym.world import LANGUAGES

if TYPE_CHECKING:
    from lamar.gym.result import GymResult


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def monitor_table(result: GymResult) -> list[str]:
    """Table 5: wrong verdicts read after every report; harm proven; what sleep proposes."""
    rows = runs_of(result.runs, "lamar")
    if not rows:
        return []
    n = len(rows)
    reads = sum(column(rows, "monitored_reads"))
    wrong_reads = sum(column(rows, "monitored_wrong_reads"))
    wrong_lessons = sum(column(rows, "monitored_wrong_lessons"))
    kinds: dict[str, int] = {}
    for text in column(rows, "monitored_wrong_kinds"):
        for part in text.split(","):
            name, _, count = part.partition(":")
            kinds[name] = kinds.get(name, 0) + int(count)
    harms_false = sum(column(rows, "harms_false_end"))
    false_lessons = sum(column(rows, "false_lessons"))
    fossil_harms = sum(1 for v in column(rows, "fossil_verdict_end") if v == "harms")
    lines = ["", f"5. lamar's verdicts read after every report ({n} seeds), and what sleep proposes"]
    lines.append(f"   wrong verdicts: {wrong_lessons} lessons wrong at some read, {wrong_reads} wrong of {reads} reads"
                 + (f" ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})" if kinds else ""))
    lines.append("   (against the truth at the time of the report; a helps verdict the flip outdated counts only")
    lines.append("   after 300 randomized episodes of that lesson since the flip; a split lesson is judged per slice)")
    lines.append(f"   originally harmful lessons judged harms at the end: {harms_false}/{false_lessons}; "
                 f"the fossil: {fossil_harms}/{n} seeds")
    for label in _sleep_labels(rows):
        retire_false = sum(column(rows, f"sleep_retire_false_{label}"))
        retire_fossil = sum(bool(v) for v in column(rows, f"sleep_retire_fossil_{label}"))
        wrong = sum(column(rows, f"sleep_retire_wrong_{label}"))
        at = "the end" if label == "end" else f"episode {label}"
        lines.append(f"   sleep at {at} proposes retiring {retire_false}/{false_lessons} originally harmful lessons, "
                     f"the fossil in {retire_fossil}/{n} seeds, {wrong} lessons not harmful")
    return lines


def _sleep_labels(rows: list[dict[str, object]]) -> list[str]:
    labels = sorted({key[len("sleep_harmful_"):] for row in rows for key in row
                     if key.startswith("sleep_harmful_") and row[key] is not None},
                    key=lambda label: math.inf if label == "end" else int(label))
    return labels


def context_table(result: GymResult) -> list[str]:
    """Table 6 (context variant only): where the split lesson is injected, and narrowing."""
    if not result.config.context:
        return []
    lines = ["", ("6. Context: the lesson that helps in Swift and hurts in Python (share of its task's episodes "
                  "that inject it)")]
    lines.append(f"{'policy':<11}" + "".join(f"{f'{lang} {w}':>18}" for w in ("1000-2000", "last 2000")
                                            for lang in LANGUAGES) + f"{'ratio by 2000':>16}")
    for policy in result.config.policies:
        rows = runs_of(result.runs, policy)
        cells = []
        for window in ("2000", "last"):
            for lang in LANGUAGES:
                mean, half = mean_interval(column(rows, f"split_rate_{lang}_{window}"))
                cells.append("-" if math.isnan(mean) else f"{100 * mean:5.1f} ±{100 * half:4.1f}"
                             if not math.isnan(half) else f"{100 * mean:5.1f}")
        lines.append(f"{policy:<11}" + "".join(f"{c:>18}" for c in cells) + f"{_ratio(rows):>16}")
    lamar = runs_of(result.runs, "lamar")
    for label in _sleep_labels(lamar):
        hits = sum(bool(v) for v in column(lamar, f"sleep_narrow_split_{label}"))
        wrong = sum(column(lamar, f"sleep_narrow_wrong_{label}"))
        at = "the end" if label == "end" else f"episode {label}"
        lines.append(f"   sleep at {at} proposes narrowing it to language=swift in {hits}/{len(lamar)} seeds; "
                     f"wrong narrowings {wrong}")
    return lines


def _ratio(rows: list[dict[str, object]]) -> str:
    swift = _mean(column(rows, f"split_rate_{LANGUAGES[0]}_2000"))
    python = _mean(column(rows, f"split_rate_{LANGUAGES[1]}_2000"))
    # A policy that injects the lesson in neither language (none) has no ratio, not a perfect one.
    if math.isnan(swift) or math.isnan(python) or swift == python == 0.0:
        return "-"
    return "inf" if python == 0.0 else f"{swift / python:.1f}x"


def moving_goals(result: GymResult) -> list[Target]:
    """The goals for a moving world: each PASS or MISS with its figure (n/a when a policy is missing)."""
    lamar = runs_of(result.runs, "lamar")
    if not lamar:
        return []
    out = []

    def add(name: str, ok: bool | None, measured: str) -> None:
        out.append(Target(name, "n/a" if ok is None else "PASS" if ok else "MISS", measured))

    qvalue = runs_of(result.runs, "qvalue")
    for phase in ("pre", "post"):
        mine = mean_interval(column(lamar, f"captured_{phase}"))
        if qvalue and not math.isnan(mine[0]):
            theirs = mean_interval(column(qvalue, f"captured_{phase}"))
            ahead = mine[0] - mine[1] > theirs[0] + theirs[1]
            add(f"captured {phase}-flip >= 85% and ahead of qvalue beyond the 95% intervals",
                mine[0] >= 0.85 and ahead,
                f"{100 * mine[0]:.1f} ±{100 * mine[1]:.1f} vs qvalue {100 * theirs[0]:.1f} ±{100 * theirs[1]:.1f}")
        else:
            add(f"captured {phase}-flip >= 85% and ahead of qvalue", None, "needs none, oracle, qvalue")
    wrong = sum(column(lamar, "monitored_wrong_lessons"))
    add("0 wrong verdicts monitored after every report", wrong == 0,
        f"{wrong} lessons, {sum(column(lamar, 'monitored_wrong_reads'))} reads")
    harms = sum(column(lamar, "harms_false_end"))
    harmful = sum(column(lamar, "false_lessons"))
    add("originally harmful lessons judged harms by the end >= 60%", harms >= 0.6 * harmful,
        f"{harms}/{harmful}")
    if result.config.context:
        swift = _mean(column(lamar, f"split_rate_{LANGUAGES[0]}_2000"))
        python = _mean(column(lamar, f"split_rate_{LANGUAGES[1]}_2000"))
        add("context: split lesson injected >= 3x as often where it helps (episodes 1000-2000)",
            swift >= 3 * python, f"{100 * swift:.1f}% swift vs {100 * python:.1f}% python")
        for label in ("2000", "end"):
            hits = sum(bool(v) for v in column(lamar, f"sleep_narrow_split_{label}"))
            add(f"context: sleep proposes narrowing it (at {label}), in every seed", hits == len(lamar),
                f"{hits}/{len(lamar)}")
    return out


# What a MISS means, in one line for the reader of the report (first matching start of a name).
_WHY_MISSED = (
    ("captured", "why: proving costs reward (holdouts, tries of useless lessons), or qvalue was as good here"),
    ("0 wrong", "why: a verdict contradicted the truth at some report: the bounds should prevent that"),
    ("originally harmful", "why: a lesson that looks harmful is rarely injected, so harm stays unproven"),
    ("context: split", "why: the lesson was not yet told apart by language within the episodes read"),
    ("context: sleep", "why: a slice was not proven both ways (harm where the lesson is no longer tried)"),
)


def moving_goals_block(result: GymResult) -> list[str]:
    """The goals block for a moving world, each MISS followed by one line saying what it means."""
    goals = moving_goals(result)
    if not goals:
        return []
    lines = ["", "Lamar's goals in a moving world (verdicts read after every report; harder worlds: --variants)"]
    for t in goals:
        lines.append(f"  {t.status:<5} {t.name:<82} {t.measured}")
        if t.status == "MISS":
            why = next((w for start, w in _WHY_MISSED if t.name.startswith(start)),
                       "why: the measured figure is short of the goal (docs/gym.md explains each goal)")
            lines.append(f"        {why}")
    return lines


__all__ = ["context_table", "monitor_table", "moving_goals", "moving_goals_block"]
