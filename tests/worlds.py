"""Small seeded worlds for statistical tests: lessons with known effects on a success coin."""

from __future__ import annotations

import random
from collections.abc import Callable

from lamar import Experience, Lamar, Scope, Signal


def add_lessons(lam: Lamar, task: str, effects: dict[str, float]) -> dict[str, float]:
    """Add one lesson per entry (same precondition and scope); return id -> effect."""
    out = {}
    for name, effect in effects.items():
        exp_id = lam.add(Experience(f"working on {task}", f"apply {name}", scope=Scope(task=task)))
        out[exp_id] = effect
    return out


def signal_for(success: bool, u: float) -> Signal:
    if success:
        return Signal.SHIPPED if u < 0.5 else Signal.ACCEPTED
    return (Signal.REVERTED, Signal.CORRECTED, Signal.REASKED)[min(int(u * 3), 2)]


def play(lam: Lamar, task: str, effects: Callable[[int], dict[str, float]] | dict[str, float],
         episodes: int, seed: int, base: float = 0.4, start: int = 0) -> list[list[str]]:
    """Recall and report `episodes` times; success ~ Bernoulli(base + sum of injected effects)."""
    rng = random.Random(seed)
    injected = []
    for i in range(start, start + episodes):
        now = effects(i) if callable(effects) else effects
        rec = lam.recall({"task": task})
        p = base + sum(now.get(e, 0.0) for e in rec.ids)
        lam.report(rec.episode_id, signal_for(rng.random() < p, rng.random()))
        injected.append(rec.ids)
    return injected
