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


def turning(lam: Lamar, exp_id: str, episodes: int, turn: int, seed: int, start: int = 0) -> list[bool]:
    """Recall and report `episodes` times for one lesson that adds 0.3 to a 0.5 success rate while injected
    before episode `turn` and takes 0.3 after; whether each episode chose it (injected it or held it out)."""
    rng = random.Random(seed)
    chosen = []
    for i in range(start, start + episodes):
        rec = lam.recall({"task": "build"})
        used = exp_id in rec.ids
        chosen.append(used or exp_id in rec.held_out)
        p = 0.5 + (0.0 if not used else 0.3 if i < turn else -0.3)
        lam.report(rec.episode_id, 1.0 if rng.random() < p else -1.0)
    return chosen
