"""The gym's measuring modes beyond the default run: `--family`, `--frontier` (on the gym's world or
on the family) and their rows; `--volume` lives in `lamar.gym.volume`."""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from typing import Any

from lamar.gym.config import GymConfig
from lamar.gym.family import TUNING_SEEDS
from lamar.gym.family_report import captured_by_world, feature_table, paired, summary_table, world_table
from lamar.gym.family_run import Spec, run_family, spec
from lamar.gym.metrics import column, interval_text, runs_of
from lamar.gym.result import write_rows
from lamar.gym.runner import run_gym

Progress = Callable[[int, int], None]

# Each peer family's default and its best on the family's tuning worlds
# (`python -m lamar.gym.peer_tuning --family 16`; docs/gym.md has the sweep).
FAMILY_PEERS: tuple[str, ...] = ("vw-e.05", "vw-sq10", "vw-sq10nd", "vw-bag5", "vw-bag3", "vw-bag5nd", "river-ts",
                                 "river-e.1", "river-e.1f")
# The last line of both frontier tables' legends.
_EBH_NOTE = ("   helpful lessons among the verdicts of record by e-BH at the end "
             "(false-discovery rate <= alpha_helps).")

# The evidence budgets of the frontier: today's coin q (`holdout`) and the second design's holdout of
# unproven lessons (its proven and doubted lessons' holdouts capped by it).
BUDGETS: tuple[float, ...] = (0.02, 0.04, 0.10, 0.15, 0.25)
V2_BUDGETS: tuple[float, ...] = (0.03, 0.06, 0.10, 0.15, 0.25)
EVIDENCE_OFF: dict[str, dict[str, float]] = {
    "lamar": {"holdout": 0.0},
    "lamar-v2": {"holdout": 1e-9, "holdout_proven": 1e-9, "holdout_doubt": 1e-9, "harm_exposure": 0.0,
                 "harm_retest": 0.0},
}


def v2_tuning(q: float) -> dict[str, float]:
    return {"holdout": q, "holdout_proven": min(0.05, q), "holdout_doubt": max(0.25, q)}


def frontier_specs() -> list[tuple[str, str, float | None, Spec]]:
    """(engine, label, budget or None for evidence off, spec) of every frontier point."""
    out: list[tuple[str, str, float | None, Spec]] = []
    for engine, budgets, tune in (("lamar", BUDGETS, lambda q: {"holdout": q}), ("lamar-v2", V2_BUDGETS, v2_tuning)):
        out.append((engine, f"{engine} off", None, spec(f"{engine} off", engine, **EVIDENCE_OFF[engine])))
        for q in budgets:
            out.append((engine, f"{engine} q={q}", q, spec(f"{engine} q={q}", engine, **tune(q))))
    return out


def family_mode(worlds: int, *, tuning: bool, peers: bool, workers: int | None, progress: Progress | None,
                json_path: str | None, lamar: tuple[tuple[str, float], ...] = ()) -> str:
    """`--family N`: lamar (its defaults, and with its randomized evidence off), the second design,
    and with `peers` the bandit libraries, on N drawn worlds; with `lamar` (`--lamar`), lamar so tuned
    beside its defaults, paired on the same worlds."""
    seeds = range(TUNING_SEEDS, TUNING_SEEDS + worlds) if tuning else range(worlds)
    policies = [spec("none"), spec("oracle"), spec("lamar"), spec("lamar off", "lamar", **EVIDENCE_OFF["lamar"]),
                spec("lamar-v2")]
    if lamar:
        policies.insert(3, spec("lamar tuned", "lamar", **dict(lamar)))
    if peers:
        policies += [spec(name) for name in FAMILY_PEERS]
    rows = run_family(seeds, policies, workers=workers, progress=progress)
    names = [p[0] for p in policies]
    lines = [(f"Lamar gym, the family: {worlds} drawn worlds ({'tuning' if tuning else 'reporting'} seeds "
             f"{seeds.start}-{seeds.stop - 1}; python -m lamar.gym --family {worlds})"), ""]
    lines += summary_table(rows, names, "lamar", FAMILY_PEERS if peers else ())
    if lamar:
        lines.append(f"   lamar tuned: {', '.join(f'{k}={v:g}' for k, v in lamar)}")
    price = paired(rows, "lamar off", "lamar")
    lines.append(f"   price of proof: lamar with its randomized evidence off minus lamar, paired: "
                 f"{interval_text(price)} of the oracle's gain")
    lines += feature_table(rows, names) + world_table(rows, names)
    _write(json_path, rows)
    return "\n".join(lines)


def family_frontier(worlds: int, *, tuning: bool, workers: int | None, progress: Progress | None,
                    json_path: str | None) -> str:
    """`--family N --frontier`: captured against helps and harms proven at each budget, both designs."""
    seeds = range(TUNING_SEEDS, TUNING_SEEDS + worlds) if tuning else range(worlds)
    points = frontier_specs()
    rows = run_family(seeds, [spec("none"), spec("oracle")] + [p[3] for p in points], workers=workers,
                      progress=progress)
    lines = [(f"The frontier on the family: {worlds} worlds ({'tuning' if tuning else 'reporting'} seeds "
             f"{seeds.start}-{seeds.stop - 1})"),
             (f"{'engine':<10}{'budget':>8}{'captured':>16}{'price (paired)':>18}{'helps proven':>16}"
             f"{'e-BH helps':>16}{'harms proven':>16}{'wrong':>7}")]
    for engine, label, budget, _ in points:
        mine = [r for r in rows if r["policy"] == label]
        helpful, harmful = (sum(r[k] for r in mine) for k in ("helpful", "harmful"))
        helps, harms = (sum(r[k] for r in mine) for k in ("helps", "harms"))
        price = "" if budget is None else interval_text(paired(rows, f"{engine} off", label))
        ebh = (f"{sum(r['ebh_helps'] for r in mine)} ({sum(r['ebh_wrong'] for r in mine)} wrong)"
               if all("ebh_helps" in r for r in mine) else None)
        lines.append(f"{engine:<10}{'off' if budget is None else budget:>8}"
                     f"{interval_text(list(captured_by_world(rows, label).values())):>16}{price:>18}"
                     f"{f'{helps}/{helpful}':>16}{'-' if ebh is None else ebh:>16}{f'{harms}/{harmful}':>16}"
                     f"{sum(r['wrong'] for r in mine):>7}")
    lines.append("   budget: the evidence coin q (lamar: where a verdict is within reach; "
                 "lamar-v2: its unproven lessons);")
    lines.append("   price: the same engine with its randomized evidence off minus this point, paired by world; "
                 "e-BH helps:")
    lines.append(_EBH_NOTE)
    _write(json_path, rows)
    return "\n".join(lines)


def gym_frontier(config: GymConfig, *, progress: Progress | None, json_path: str | None) -> str:
    """`--frontier`: the same on the gym's world, pre- and post-flip, helps proven of the 3 at the end."""
    results: dict[str, Any] = {}
    for engine, label, _, (_, name, tuning) in frontier_specs():
        run = run_gym(dataclasses.replace(config, policies=("none", "oracle", name), tuning=tuning, sleep_at=()),
                      progress=progress)
        results[label] = runs_of(run.runs, name)
    lines = [(f"The frontier on the gym: {config.seeds} seeds x {config.episodes} episodes (seeds "
             f"{config.first_seed}-{config.first_seed + config.seeds - 1})"),
             (f"{'engine':<10}{'budget':>8}{'captured pre':>16}{'captured post':>16}{'price pre/post':>18}"
             f"{'helps of 3':>12}{'e-BH (wrong)':>14}{'harms of 5':>12}{'wrong':>7}")]
    for engine, label, budget, _ in frontier_specs():
        rows = results[label]
        off = results[f"{engine} off"]
        cells = [interval_text(column(rows, f"captured_{p}"), 100, 1) for p in ("pre", "post")]
        price = "" if budget is None else " / ".join(
            f"{100 * (statistics.fmean(column(off, key)) - statistics.fmean(column(rows, key))):.1f}"
            for key in ("captured_pre", "captured_post"))
        helps = statistics.fmean(column(rows, "helps_end"))
        ebh = column(rows, "ebh_helps_end")
        ebh_cell = (f"{statistics.fmean(ebh):.2f} ({sum(column(rows, 'ebh_wrong_end'))})" if len(ebh) == len(rows)
                    else "-")
        harms = statistics.fmean(column(rows, "harms_end"))
        wrong = sum(column(rows, "wrong_end"))
        lines.append(f"{engine:<10}{'off' if budget is None else budget:>8}{cells[0]:>16}{cells[1]:>16}{price:>18}"
                     f"{helps:>12.2f}{ebh_cell:>14}{harms:>12.2f}{wrong:>7}")
    lines.append("   captured in % of the oracle's gain; price: evidence off minus this point, captured points; e-BH:")
    lines.append(_EBH_NOTE)
    _write(json_path, [row for rows in results.values() for row in rows])
    return "\n".join(lines)


def _write(path: str | None, rows: list[dict[str, Any]]) -> None:
    if path:
        write_rows(path, rows)


__all__ = ["BUDGETS", "FAMILY_PEERS", "V2_BUDGETS", "family_frontier", "family_mode", "gym_frontier"]
