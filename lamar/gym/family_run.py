"""Running policies on the family of drawn worlds: one (world, policy) job per process slot, one
flat row per job, captured share paired by world (docs/gym.md, "The family")."""

from __future__ import annotations

import heapq
import itertools
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from lamar.engine import Lamar
from lamar.gym.family import DrawnWorld
from lamar.gym.peers import peer_class
from lamar.gym.policies import LamarPolicy, make_policy
from lamar.gym.runner import run_jobs
from lamar.gym.world import lessons_by_task
from lamar.policy.dropped import RETIRE_AFTER
from lamar.policy.verdicts import Verdict

Row = dict[str, Any]
Spec = tuple[str, str, tuple[tuple[str, float], ...]]  # (label, policy name, tuning of lamar's engines)
USED = 0.25  # a flipping lesson counts as in use when its task injected it this often just before the flip
KEPT_WINDOW = (200, 700)  # task episodes after the flip over which a fossil's kept share is read
DROP_WINDOW, DROP_UNDER = 50, 0.05  # dropped: the first 50 task episodes injecting it in under 5% of them


def spec(label: str, name: str | None = None, **tuning: float) -> Spec:
    """A policy to run on the family: `name` (default `label`) with lamar's `tuning`."""
    return label, name or label, tuple(sorted(tuning.items()))


def run_world(seed: int, policy: Spec) -> Row:
    """One policy on one drawn world: its expected success, what it kept of its fossils and, for
    lamar's engines, its verdicts at the end against the truth then."""
    started = time.process_time()
    label, name, tuning = policy
    world = DrawnWorld(seed)
    peer = peer_class(name)
    chooser = peer(world, world.k, seed) if peer is not None else make_policy(  # type: ignore[arg-type]
        name, world, world.k, seed, dict(tuning))  # type: ignore[arg-type]
    slate = Slate(world)
    expected = 0.0
    slots = 0
    pending: list[tuple[int, int, object, Any]] = []
    for t in range(world.episodes):
        task = world.tasks[t]
        injected, _ = chooser.choose(t, task)
        expected += world.success_probability(t, injected)
        slots += len(injected)
        slate.note(t, task, injected)
        if world.reported[t]:
            heapq.heappush(pending, (t + world.delays[t], t, chooser.ticket, world.outcome(t, injected)))
        while pending and pending[0][0] <= t:
            _, _, ticket, signal = heapq.heappop(pending)
            chooser.learn(signal, ticket)
    row: Row = {"table": "family", "world": seed, "policy": label, "success": expected / world.episodes,
                "slots": slots / world.episodes, **_fossil_columns(world, slate), **slate.columns()}
    if isinstance(chooser, LamarPolicy):
        row.update(_verdicts(world, chooser))
    row["cpu"] = time.process_time() - started
    return row


def _fossil_columns(world: DrawnWorld, slate: Slate) -> Row:
    """Among lessons the policy used when they turned harmful: the share of their task's
    episodes that still injected them 200-700 task episodes later, and task episodes until dropped
    (their series are the slate's: a fossil flips, so it is never a split lesson)."""
    fossils = [(lesson, lesson.flip_at) for lesson in world.lessons
               if lesson.flip_at is not None and lesson.after < 0.0]
    kept: list[float] = []
    drops: list[int] = []
    for lesson, flip in fossils:
        series = list(zip(slate.times[lesson.task], slate.hits[lesson.index], strict=True))
        before = [hit for t, hit in series if t < flip][-100:]
        after = [hit for t, hit in series if t >= flip]
        if not before or sum(before) < USED * len(before) or len(after) < DROP_WINDOW:
            continue
        window = after[KEPT_WINDOW[0]:KEPT_WINDOW[1]]
        if window:
            kept.append(sum(window) / len(window))
        drops.append(next((i for i in range(len(after) - DROP_WINDOW + 1)
                           if sum(after[i:i + DROP_WINDOW]) < DROP_UNDER * DROP_WINDOW), len(after)))
    return {"fossils_used": len(drops), "fossil_kept": sum(kept) / len(kept) if kept else None,
            "fossil_drop": sorted(drops)[len(drops) // 2] if drops else None,
            "fossil_kept_sum": sum(kept), "fossil_kept_n": len(kept)}


class Slate:
    """The other side of forgetting: how often a policy drops a lesson that the oracle would still
    inject. Each task episode notes, per lesson (split lessons apart: their truth depends on the
    context), whether the policy injected it and whether it is among the k best that help now."""

    def __init__(self, world: DrawnWorld) -> None:
        self.world = world
        self.by_task = lessons_by_task(lesson for lesson in world.lessons if lesson.kind != "split")
        self.times: dict[int, list[int]] = {task: [] for task in self.by_task}  # each task's episodes
        self.hits: dict[int, list[bool]] = {i: [] for ids in self.by_task.values() for i in ids}
        self.best: dict[int, list[bool]] = {i: [] for i in self.hits}

    def note(self, t: int, task: int, injected: Sequence[int]) -> None:
        ids = self.by_task.get(task, ())
        if ids:
            self.times[task].append(t)
        effects = sorted(((self.world.effect(i, t), i) for i in ids), reverse=True)
        best = {i for effect, i in effects[:self.world.k] if effect > 0.0}
        for i in ids:
            self.hits[i].append(i in injected)
            self.best[i].append(i in best)

    def columns(self) -> Row:
        """Wrong drops: times a lesson in use (injected in >= 25% of its task's last 100 episodes)
        and among the oracle's k best was then injected in under 5% of the next 50 task episodes,
        all 50 of which the oracle would still have injected it in; in_best: the task episodes
        such a lesson was in use and among the best, the drops' exposure."""
        drops = exposure = 0
        for i, hits in self.hits.items():
            best = self.best[i]
            used, kept_best = list(itertools.accumulate(hits, initial=0)), list(itertools.accumulate(best, initial=0))
            j = 100
            while j <= len(hits) - DROP_WINDOW:
                if used[j] - used[j - 100] >= USED * 100 and best[j]:
                    exposure += 1
                    if (kept_best[j + DROP_WINDOW] - kept_best[j] == DROP_WINDOW
                            and used[j + DROP_WINDOW] - used[j] < DROP_UNDER * DROP_WINDOW):
                        drops += 1
                        j += 100  # one drop counts once: its lesson must be in use again, after it
                        continue
                j += 1
        return {"wrong_drops": drops, "in_best": exposure}


def _verdicts(world: DrawnWorld, chooser: LamarPolicy) -> Row:
    """The engine's verdicts at the end against each lesson's truth then (split lessons apart: their
    truth depends on the context)."""
    end = world.episodes - 1
    out = dict.fromkeys(("helpful", "helps", "harmful", "harms", "wrong", "wrong_stale", "helps_lower_unknown"), 0)
    # Today's engine has verdicts of record (e-BH across its lessons, all active here: the gym never
    # retires one); the v2 engine has none. Asked by type, not by a private attribute's presence,
    # which went missing unnoticed when the engine's state moved to lamar/state.
    record = chooser.lam.verdicts_of_record() if isinstance(chooser.lam, Lamar) else None
    if record is not None:
        out["ebh_helps"] = out["ebh_wrong"] = 0
    for lesson in world.lessons:
        if lesson.kind == "split":
            continue
        ev = chooser.lam.evidence(lesson.id)
        truth = world.effect(lesson.index, end)
        helps, harms = ev.verdict is Verdict.HELPS, ev.verdict is Verdict.HARMS
        out["helps_lower_unknown"] += ev.lower > 0.0 and not helps
        if record is not None:
            kept = record[lesson.id]
            out["ebh_helps"] += truth > 0.0 and kept is Verdict.HELPS
            out["ebh_wrong"] += (kept is Verdict.HELPS and truth <= 0.0) or (kept is Verdict.HARMS and truth >= 0.0)
        if truth > 0.0:
            out["helpful"] += 1
            out["helps"] += helps
        elif truth < 0.0:
            out["harmful"] += 1
            out["harms"] += harms
        if (helps and truth <= 0.0) or (harms and truth >= 0.0):
            out["wrong"] += 1
            out["wrong_stale"] += lesson.flip_at is not None
    out.update(_retire_dropped(world, chooser))
    return out


def _retire_dropped(world: DrawnWorld, chooser: LamarPolicy) -> Row:
    """The lessons sleep would propose retiring as dropped at the end, by their truth then, with the injected
    episodes each was judged on: such a proposal claims no harm, so its reader needs to know how often the lesson
    truly harms."""
    kinds = ("harmful", "inert", "helpful", "split")
    out: Row = {f"dropped_{kind}{part}": 0 for kind in kinds for part in ("", "_injected")}
    out["dropped_helpful_lift"] = 0.0  # summed: how much the helpful ones proposed for retiring were worth
    end = world.episodes - 1
    for lesson in world.lessons:
        ev = chooser.lam.evidence(lesson.id)
        if not ev.dropped or ev.unchosen is None or ev.unchosen < RETIRE_AFTER:
            continue
        truth = world.effect(lesson.index, end)
        kind = ("split" if lesson.kind == "split" else
                "harmful" if truth < 0.0 else "helpful" if truth > 0.0 else "inert")
        out[f"dropped_{kind}"] += 1
        out[f"dropped_{kind}_injected"] += ev.injected
        if kind == "helpful":
            out["dropped_helpful_lift"] += truth
    return out


def _job(args: tuple[int, Spec]) -> Row:
    return run_world(*args)


def run_family(seeds: Sequence[int], policies: Sequence[Spec], *, workers: int | None = None,
               progress: Callable[[int, int], None] | None = None) -> list[Row]:
    """Every (world, policy) job; rows in (policy, world) order, each with its captured share of the
    oracle's gain over `none` on the same world (needs both among `policies`)."""
    jobs = [(seed, policy) for policy in policies for seed in seeds]
    # The long jobs first (lamar's engines on the largest worlds), so the last ones are short.
    size = {seed: DrawnWorld(seed).episodes for seed in seeds}
    jobs.sort(key=lambda job: -size[job[0]] * (4 if job[1][1].startswith("lamar") else 1))
    rows = run_jobs(_job, jobs, min(workers or os.cpu_count() or 1, len(jobs)), progress)
    order = {policy[0]: i for i, policy in enumerate(policies)}
    rows.sort(key=lambda row: (order[row["policy"]], row["world"]))
    add_captured(rows)
    return rows


def add_captured(rows: Sequence[Row]) -> None:
    """Give each row its captured share of the oracle's gain over `none` on the same world (None
    without both among `rows`, or where the gain is too small to divide by). Rows of several
    `run_family` calls can be joined first: `none` and `oracle` need running once."""
    by = {(row["policy"], row["world"]): row for row in rows}
    for row in rows:
        none, oracle = by.get(("none", row["world"])), by.get(("oracle", row["world"]))
        gain = oracle["success"] - none["success"] if none is not None and oracle is not None else 0.0
        row["captured"] = (row["success"] - none["success"]) / gain if none is not None and gain > 0.01 else None


__all__ = ["add_captured", "run_family", "run_world", "spec"]
