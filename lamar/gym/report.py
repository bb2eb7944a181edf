"""The gym's printed report, a view over its flat rows: four tables and the project's goals."""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING, Any

from lamar.gym.config import PHASE_TITLES, PHASES
from lamar.gym.metrics import Target, column, mean_interval, median_range, runs_of
from lamar.gym.monitor_report import context_table, monitor_table, moving_goals_block
from lamar.gym.recorder import KINDS, needed_randomized
from lamar.policy.alpha import lesson_alpha

if TYPE_CHECKING:
    from lamar.gym.result import GymResult


def _pct(mean: float, half: float) -> str:
    if math.isnan(mean):
        return "-"
    if math.isnan(half):
        return f"{100 * mean:5.1f}"
    return f"{100 * mean:5.1f} ±{100 * half:4.1f}"


def _mean(values: list[Any]) -> float:
    return math.fsum(values) / len(values) if values else math.nan


def _header(result: GymResult) -> list[str]:
    c = result.config
    title = (f"Lamar memory gym: {len(c.policies)} policies x {c.seeds} seeds x {c.episodes} episodes "
             f"(flip after {c.flip}), k={c.k}, base {c.base:.2f}, help +{c.help_effect:.2f}, "
             f"hurt -{c.hurt_effect:.2f}")
    world = (f"{c.lessons} lessons per task, {100 * c.report_rate:.0f}% of episodes reported, "
             + (f"up to {c.report_delay} episodes late" if c.report_delay else "each as soon as its episode ends")
             + (", context variant (language)" if c.context else "")
             + (f"; lamar tuned: {', '.join(f'{k}={v}' for k, v in c.tuning)}" if c.tuning else ""))
    return [title, world]


def _success_table(result: GymResult) -> list[str]:
    c = result.config
    lines = ["", f"1. Success rate by phase, % (mean over {c.seeds} seeds ± 95% interval)"]
    heads = [PHASE_TITLES[p] for p in PHASES] + ["captured pre", "captured post", "price of proof"]
    lines.append(f"{'policy':<11}" + "".join(f"{h:>14}" for h in heads[:-1]) + f"{heads[-1]:>16}")
    for policy in c.policies:
        rows = runs_of(result.runs, policy)
        cells = [_pct(*mean_interval(column(rows, f"success_{p}"))) for p in PHASES]
        cells += [_pct(*mean_interval(column(rows, f"captured_{p}"))) for p in ("pre", "post")]
        cost = [100 * _mean(column(rows, f"price_{p}")) for p in ("pre", "post")]
        cells.append(f"{cost[0]:.1f} / {cost[1]:.1f}" if any(c > 0 for c in cost) else "-")
        lines.append(f"{policy:<11}" + "".join(f"{cell:>14}" for cell in cells[:-1]) + f"{cells[-1]:>16}")
    lines += [
        "   captured: (policy - none) / (oracle - none), same seed and phase.",
        "   price of proof: captured points given up to the evidence coin, pre / post: the effect of every",
        "   held-out lesson that helped at the time (a held-out slot stays empty, so each one costs exactly",
        "   that effect), over the oracle's gain; --frontier measures it against the engine with its coin off.",
    ]
    return lines


def _slots_table(result: GymResult) -> list[str]:
    c = result.config
    lines = ["", "2. Share of injected slots by what the lesson truly was, % (mean over seeds)"]
    shown = KINDS if c.context else KINDS[:4]  # SPLIT exists only in the context variant
    kinds = "".join(f"{k.value.upper():>7}" for k in shown)
    lines.append(f"{'policy':<11}{'slots/ep':>9} | pre-flip{kinds} | post-flip{kinds}")
    for policy in c.policies:
        rows = runs_of(result.runs, policy)
        slots = (_mean(column(rows, "slots_pre")), _mean(column(rows, "slots_post")))
        line = f"{policy:<11}{slots[0]:>4.2f}/{slots[1]:<4.2f} |"
        for phase, pad in (("pre", 8), ("post", 9)):
            shares = "".join(f"{100 * _mean(column(rows, f'share_{k.value}_{phase}')):>7.1f}" for k in shown)
            line += " " * pad + shares + (" |" if phase == "pre" else "")
        lines.append(line)
    lines.append("   TRUE helps now, FALSE hurts from the start, INERT does nothing, FOSSIL helps until the "
                 "flip, hurts after it.")
    return lines


def _verdict_table(result: GymResult) -> list[str]:
    rows = runs_of(result.runs, "lamar")
    if not rows:
        return []
    c = result.config
    n = len(rows)
    lines = ["", f"3. lamar's verdicts against the truth at that moment ({n} seeds: total, per-seed mean)"]
    lines.append(f"{'':<36}{f'at the flip ({c.flip})':>24}{f'at the end ({c.episodes})':>24}")

    def count(label: str, key: str, of: str | None = None) -> None:
        cells = []
        for at in ("flip", "end"):
            got = sum(column(rows, f"{key}_{at}"))
            if of is None:
                cells.append(f"{got}")
            else:
                total = sum(column(rows, f"{of}_{at}"))
                cells.append(f"{got}/{total} ({got / n:.2f} of {total / n:.0f})")
        lines.append(f"{label:<36}" + "".join(f"{cell:>24}" for cell in cells))

    count("helpful proven helps", "helps", "helpful")
    count("  of record by e-BH (a look)", "ebh_helps", "helpful")
    count("  helpful that were provable", "helpful_provable", "helpful")
    count("harmful proven harms", "harms", "harmful")
    count("  harmful that were provable", "harmful_provable", "harmful")
    count("wrong: helpful judged harms", "wrong_helpful_harms")
    count("wrong: harmful judged helps", "wrong_harmful_helps")
    count("wrong: inert judged helps", "wrong_inert_helps")
    count("wrong: inert judged harms", "wrong_inert_harms")
    count("wrong of record by e-BH", "ebh_wrong")
    q = rows[0]["holdout_q"]
    level = lesson_alpha(0.02, 12, 1)
    needed = needed_randomized(c.help_effect, q, level), needed_randomized(-c.hurt_effect, q, level)
    lines.append("   provable: had at least the randomized episodes since the world last changed for it that its own")
    lines.append("   bound needs to prove its effect with about 80% power (lamar.audit.physics), at the evidence coin")
    lines.append(f"   q = {q:.2f}: for the 12th lesson created, {needed[0]:.0f} episodes for +{c.help_effect:.2f} and "
                 f"{needed[1]:.0f} for -{c.hurt_effect:.2f}.")
    lines.append(f"   Verdicts are read through lam.evidence every {c.checkpoint} episodes.")
    lessons = [row for row in result.lessons if row["policy"] == "lamar"]
    helps = column([r for r in lessons if r["kind"] in ("true", "fossil")], "first_helps")
    harms = column([r for r in lessons if r["kind"] == "false"], "first_harms")
    helpful = sum(1 for r in lessons if r["kind"] in ("true", "fossil"))
    harmful = sum(1 for r in lessons if r["kind"] == "false")
    lines.append(f"   episode of the first helps (TRUE and FOSSIL), median [min, max]: "
                 f"{median_range(helps)}; reached by {len(helps)}/{helpful}")
    lines.append(f"   episode of the first harms (FALSE): {median_range(harms)}; "
                 f"reached by {len(harms)}/{harmful}")
    return lines


def _fossil_table(result: GymResult) -> list[str]:
    lines = ["", "4. The fossil: episodes of its task after the flip until ... (median [min, max]; never)"]
    lines.append(f"{'policy':<11}{'no longer injected':>28}{'helps withdrawn':>28}{'judged harms':>28}")
    for policy in result.config.policies:
        rows = runs_of(result.runs, policy)
        cells = []
        for key in ("fossil_off_latency", "fossil_withdraw_latency", "fossil_harms_latency"):
            if key != "fossil_off_latency" and policy != "lamar":
                cells.append("-")
                continue
            # A withdrawal needs a helps verdict at the flip to withdraw: count only those seeds.
            among = rows
            if key == "fossil_withdraw_latency":
                among = [r for r in rows if r["fossil_helps_at_flip"]]
            values = column(among, key)
            cells.append(f"{median_range(values)}; never {len(among) - len(values)}/{len(among)}")
        lines.append(f"{policy:<11}" + "".join(f"{cell:>28}" for cell in cells))
    lines.append("   no longer injected: the start of the first window of 100 of its task's episodes that")
    lines.append("   inject it in under 5% of them; helps withdrawn: only seeds where it held helps at the "
                 "flip.")
    return lines


def check_targets(result: GymResult) -> list[Target]:
    """The project's goals for lamar, with the figure each one was judged on."""
    lamar = runs_of(result.runs, "lamar")
    if not lamar:
        return []
    n = len(lamar)
    out = []

    def target(name: str, ok: bool | None, measured: str) -> None:
        out.append(Target(name, "n/a" if ok is None else "PASS" if ok else "MISS", measured))

    gain = _has_gain(result)  # captured, and its price, are shares of the oracle's gain over none
    for phase, goal in (("pre", 0.88), ("post", 0.92)):
        captured = column(lamar, f"captured_{phase}")
        value = _mean(captured)
        target(f"captured share of the oracle's gain {PHASE_TITLES[phase]} >= {100 * goal:.0f}%",
               None if not captured or not gain else value >= goal,
               f"{100 * value:.1f}%" if gain else "needs none, oracle")
    price = [_mean(column(lamar, f"price_{p}")) for p in ("pre", "post")]
    target("price of proof (held-out lessons' lift) <= 3 captured points, pre and post",
           max(price) <= 0.03 if gain else None,
           f"{100 * price[0]:.1f} / {100 * price[1]:.1f}" if gain else "needs none, oracle")
    fossil_share = _mean(column(lamar, "share_fossil_post"))
    target("fossil slot share post-flip <= 0.7%", fossil_share <= 0.007, f"{100 * fossil_share:.3f}%")
    off = column(lamar, "fossil_off_latency")
    median = statistics.median(off) if off else math.inf
    target("fossil no longer injected within a median 35 task episodes after the flip", median <= 35,
           f"median {median:.0f}, max {max(off) if off else '-'}; never in {n - len(off)}/{n}")
    helps = _mean(column(lamar, "helps_end"))
    helpful = _mean(column(lamar, "helpful_end"))
    target(f"helps proven for >= 2.25 of the {helpful:.0f} still-helpful lessons at the end (mean)",
           helps >= 2.25, f"{helps:.2f}")
    withdrawn = sum(column(lamar, "fossil_withdrawn_end"))
    judged = sum(1 for v in column(lamar, "fossil_verdict_end") if v == "harms")
    harmful_proven = sum(column(lamar, "harms_end")) - judged
    originally_harmful = sum(column(lamar, "harmful_end")) - n
    target("fossil's helps withdrawn by the end in every seed", withdrawn == n,
           f"{withdrawn}/{n}; judged harms in {judged}/{n}; originally harmful proven harms "
           f"{harmful_proven}/{originally_harmful}")
    wrong = sum(column(lamar, "wrong_flip")) + sum(column(lamar, "wrong_end"))
    target("wrong verdicts: 0 over all lessons and seeds (flip and end)", wrong == 0, f"{wrong}")

    def post_means(policy: str) -> list[float] | None:
        rows = runs_of(result.runs, policy)
        return [_mean(column(rows, f"success_{p}")) for p in ("post", "recovered")] if rows else None

    mine, qvalue, similarity, none = (post_means(p) for p in ("lamar", "qvalue", "similarity", "none"))
    if mine is not None and qvalue is not None and similarity is not None:
        beats = all(m > max(q, s) for m, q, s in zip(mine, qvalue, similarity, strict=True))
        figure = ", ".join(f"{t} {100 * m:.1f} vs {100 * q:.1f} / {100 * s:.1f}"
                           for t, m, q, s in zip(("post", "recovered"), mine, qvalue, similarity,
                                                 strict=True))
        target("lamar beats qvalue and similarity in every post-flip column", beats, figure)
    else:
        target("lamar beats qvalue and similarity in every post-flip column", None,
               "needs qvalue, similarity")
    if similarity is not None and none is not None:
        target("similarity post-flip worse than none", similarity[0] < none[0],
               f"{100 * similarity[0]:.1f} vs {100 * none[0]:.1f}")
    else:
        target("similarity post-flip worse than none", None, "needs similarity, none")
    target(f"the run finishes in under a minute ({len(result.config.policies)} x {result.config.seeds} x "
           f"{result.config.episodes})", result.elapsed < 60.0,
           f"{result.elapsed:.1f} s wall, {result.cpu:.1f} s CPU on {result.workers} "
           f"worker{'s' if result.workers != 1 else ''}")
    return out


def _targets_block(result: GymResult) -> list[str]:
    targets = check_targets(result)
    if not targets:
        return []

    c = result.config
    size = f"this run {c.seeds} x {c.episodes}"
    title = f"Lamar's goals (set for 20 seeds x 8000 episodes; {size})"
    lines = ["", title]
    for t in targets:
        lines.append(f"  {t.status:<5} {t.name:<82} {t.measured}")
        if t.status == "MISS":
            lines.append(f"        {_why_missed(t.name)}")
    return lines


# What a MISS means, in one line for the reader of the report (first matching start of a name).
_WHY_MISSED = (
    ("captured share", "why: proving costs reward: holdouts and tries of useless lessons give up gain"),
    ("price of proof", "why: the evidence coin held out lessons that helped: its q sets this price"),
    ("fossil slot share", "why: the lesson that turned harmful kept being injected after the flip"),
    ("fossil no longer injected", "why: the fall detector needs injected episodes to see the fall"),
    ("helps proven", "why: too few randomized episodes to prove the helpful lessons (see 'provable' in 3.)"),
    ("fossil's helps withdrawn", "why: the lesson that turned harmful kept its helps verdict in some seed"),
    ("wrong verdicts", "why: a verdict contradicted the truth, which the bounds should prevent: a bug"),
    ("lamar beats", "why: after the flip lamar's success was not above both other policies"),
    ("similarity post-flip", "why: the world did not punish similarity as designed: check the settings"),
    ("the run finishes", "why: this machine was slow or busy; the other figures do not depend on speed"),
)


def _why_missed(name: str) -> str:
    return next((why for start, why in _WHY_MISSED if name.startswith(start)),
                "why: the measured figure is short of the goal (docs/gym.md explains each goal)")


def _has_gain(result: GymResult) -> bool:
    """Whether the run has the oracle's gain over none that captured shares are of."""
    return {"none", "oracle"} <= set(result.config.policies)


def what_it_shows(result: GymResult) -> str:
    """Three sentences on the tables, for a reader who has not seen the gym before."""
    c = result.config
    lines = ["", "What this shows:"]
    if "lamar" in c.policies:
        rows = runs_of(result.runs, "lamar")
        pre, post = (_mean(column(rows, f"captured_{p}")) for p in ("pre", "post"))
        wrong = sum(column(rows, "wrong_flip")) + sum(column(rows, "wrong_end"))
        lines += [
            (f"  Each policy chose lessons for the same {c.seeds} seeded worlds; halfway through, one helpful "
            "lesson turned harmful (the fossil)."),
            (f"  lamar captured {pre:.0%} of the oracle's gain before the flip and {post:.0%} after it (table 1), "
             "learning only from the outcomes it was told." if _has_gain(result) else
             "  Table 1 has lamar's success by phase; its captured share of the oracle's gain needs none "
             "and oracle in --policies."),
            (f"  Its verdicts were wrong {wrong:g} times at the flip and at the end (table 3); table 4 shows how "
            "soon each policy stopped injecting the fossil."),
        ]
    else:
        lines.append("  Each policy chose lessons for the same seeded worlds; table 1 compares their success.")
    lines.append("  The research goals and whether this run met them: python -m lamar.gym --goals")
    return "\n".join(lines)


def render(result: GymResult, *, targets: bool = True) -> str:
    """The whole report as text."""
    lines = _header(result) + _success_table(result) + _slots_table(result)
    lines += _verdict_table(result) + _fossil_table(result) + monitor_table(result) + context_table(result)
    if targets:
        lines += _targets_block(result) + moving_goals_block(result)
    return "\n".join(lines)
