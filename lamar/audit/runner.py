"""One audit run: a seeded world played through the public API, every verdict read after every report."""

from __future__ import annotations

import heapq
import random
from collections import deque
from typing import Any

from lamar.audit.scenarios import SCENARIOS, Lesson, clamp
from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.policy.verdicts import Verdict
from lamar.signals import Signal

GRACE = 300  # randomized episodes of a lesson after a change of its truth before its verdict counts
_TRAIL = 300  # eligible episodes over which an interaction's moving truth is averaged


def _signal(success: bool, u: float) -> Signal:
    if success:
        return Signal.SHIPPED if u < 0.5 else Signal.ACCEPTED
    return (Signal.REVERTED, Signal.CORRECTED, Signal.REASKED)[min(int(u * 3), 2)]


class _Watch:
    """What the audit knows about one lesson: its truth, its verdicts, and its grace window."""

    def __init__(self, lesson: Lesson) -> None:
        self.lesson = lesson
        self.verdict = Verdict.UNKNOWN
        self.after_change = 0  # reported randomized episodes from the change on
        self.trail: deque[float] = deque(maxlen=_TRAIL)
        self.helps_at_change: bool | None = None
        self.withdrawn_at: int | None = None  # randomized episodes after the change when helps went
        self.wrong_helps = 0
        self.wrong_harms = 0

    def truth(self, now: int) -> float:
        if self.lesson.effect is not None and self.trail:
            return sum(self.trail) / len(self.trail)
        return self.lesson.truth(now, {})

    def in_grace(self, now: int) -> bool:
        change = self.lesson.change
        return change is not None and now >= change and self.after_change < GRACE


def run_one(scenario: str, seed: int, episodes: int = 4000, **tuning: Any) -> dict[str, Any]:
    """Play one seeded run of `scenario` and return its flat row of counts: what went wrong (a
    verdict against the truth at that moment, outside the grace window after a change), how fast
    a stale helps was withdrawn, and what proving cost.
    """
    sc = SCENARIOS[scenario]
    lessons = sc.lessons(episodes)
    lam = Lamar(":memory:", k=sc.k, seed=seed, **tuning)
    watch: dict[str, _Watch] = {}
    for lesson in lessons:
        exp_id = lam.add(Experience(f"working on {lesson.task}", f"apply {lesson.name}",
                                    scope=Scope(task=lesson.task)))
        watch[exp_id] = _Watch(lesson)
    names = {exp_id: w.lesson.name for exp_id, w in watch.items()}
    tasks = sorted({lesson.task for lesson in lessons})
    rng = random.Random(f"lamar-audit:{scenario}:{seed}")
    pending: list[tuple[int, int, str, Signal, dict[str, float], int]] = []
    holdout_cost = success = 0.0
    wrong_helps_at: int | None = None
    wrong_harms_at: int | None = None

    def settle(entry: tuple[int, int, str, Signal, dict[str, float], int], now: int) -> None:
        nonlocal wrong_helps_at, wrong_harms_at
        _, _, episode_id, signal, p, t = entry
        lam.report(episode_id, signal)
        for exp_id, prob in p.items():
            w = watch[exp_id]
            change = w.lesson.change
            if 0.0 < prob < 1.0 and change is not None and t >= change:
                w.after_change += 1
            ev = lam.evidence(exp_id)
            w.verdict = ev.verdict
            truth = w.truth(now)
            if w.in_grace(now):
                if w.helps_at_change and w.withdrawn_at is None and ev.verdict is not Verdict.HELPS:
                    w.withdrawn_at = w.after_change
                continue
            if ev.verdict is Verdict.HELPS and truth <= 0.0:
                w.wrong_helps += 1
                wrong_helps_at = now if wrong_helps_at is None else wrong_helps_at
            elif ev.verdict is Verdict.HARMS and truth >= 0.0:
                w.wrong_harms += 1
                wrong_harms_at = now if wrong_harms_at is None else wrong_harms_at

    for t in range(episodes):
        for w in watch.values():
            if w.lesson.change == t:
                w.helps_at_change = w.verdict is Verdict.HELPS
        task = tasks[rng.randrange(len(tasks))] if len(tasks) > 1 else tasks[0]
        rec = lam.recall({"task": task})
        injected = frozenset(names[i] for i in rec.ids)
        for exp_id in rec.eligible:
            w = watch[exp_id]
            if w.lesson.effect is not None:
                probs = {names[i]: rec.propensities[i] for i in rec.eligible}
                w.trail.append(w.lesson.truth(t, probs))
        p_success = clamp(sc.base(t, episodes) + sum(watch[i].lesson.added(t, injected) for i in rec.ids))
        ok = rng.random() < p_success
        success += ok
        for exp_id in rec.held_out:
            holdout_cost += max(watch[exp_id].truth(t), 0.0)
        entry = (t, t, rec.episode_id, _signal(ok, rng.random()), dict(rec.propensities), t)
        u = rng.random()
        if sc.missing and u < sc.missing:
            pass  # never reported
        elif sc.max_delay:
            heapq.heappush(pending, (t + rng.randint(0, sc.max_delay), t, rec.episode_id, entry[3], entry[4], t))
        else:
            settle(entry, t)
        while pending and pending[0][0] <= t:
            settle(heapq.heappop(pending), t)
    while pending:
        settle(heapq.heappop(pending), episodes)

    row: dict[str, Any] = {
        "scenario": scenario, "seed": seed, "episodes": episodes,
        "wrong_helps": int(wrong_helps_at is not None), "wrong_harms": int(wrong_harms_at is not None),
        "wrong_helps_at": wrong_helps_at, "wrong_harms_at": wrong_harms_at,
        "success": success / episodes,
        "holdout_cost": holdout_cost / episodes,
    }
    restarts = {w.lesson.name: lam.evidence(exp_id).restarts for exp_id, w in watch.items()}
    row["restarts"] = sum(restarts.values())
    # The price of fast withdrawal: segments of lessons whose positive effect never moved, closed
    # by the fall detector (each such close takes a helps verdict away until it is earned again).
    steady = [w.lesson.name for w in watch.values()
              if w.lesson.change is None and w.lesson.effect is None and w.lesson.truth(0, {}) > 0.0]
    row["steady_helpful"] = len(steady)
    row["steady_restarts"] = sum(restarts[name] for name in steady)
    final = {w.lesson.name: (w.verdict, w.lesson.truth(episodes - 1, {})) for w in watch.values()}
    harmful = [name for name, (_, truth) in final.items() if truth < 0.0 and watch_effectless(watch, name)]
    helpful = [name for name, (_, truth) in final.items() if truth > 0.0 and watch_effectless(watch, name)]
    row["harmful"], row["harms_proven"] = len(harmful), sum(final[n][0] is Verdict.HARMS for n in harmful)
    row["helpful"], row["helps_proven"] = len(helpful), sum(final[n][0] is Verdict.HELPS for n in helpful)
    moving = [w for w in watch.values() if w.lesson.change is not None]
    if moving:
        w = moving[0]
        row["helps_at_change"] = int(bool(w.helps_at_change))
        row["withdrawn_300"] = None if not w.helps_at_change else int(w.withdrawn_at is not None)
        row["withdrawn_after"] = w.withdrawn_at
    return row


def watch_effectless(watch: dict[str, _Watch], name: str) -> bool:
    """Whether the lesson's effect is its own (not an interaction's), so its truth is fixed at the end."""
    return any(w.lesson.name == name and w.lesson.effect is None for w in watch.values())
