"""The audit's worlds: lessons with known effects that may move, on a base rate that may drift."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping

Truth = Callable[[int, Mapping[str, float]], float]
Effect = Callable[[int, frozenset[str]], float]


@dataclasses.dataclass(frozen=True)
class Lesson:
    """One audited lesson: its name, its scope's task, its true effect, and when that changes.

    A lesson's `effect(t, injected)` is what it adds to the success probability in episode t
    given the names of the lessons injected with it; its `truth(t, p)` is its lift at that time,
    the expected effect of injecting it against not, `p` being the inclusion probabilities the
    engine logged for that episode (only the interactions need them).
    """

    name: str
    task: str
    truth: Truth
    effect: Effect | None = None  # None: the truth, whoever else is injected
    change: int | None = None  # episode at which the effect changes (None: it never does)

    def added(self, t: int, injected: frozenset[str]) -> float:
        return self.effect(t, injected) if self.effect is not None else self.truth(t, {})


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A world: its lessons, base rate, slots, and how reports arrive."""

    name: str
    lessons: Callable[[int], list[Lesson]]  # episodes -> lessons
    base: Callable[[int, int], float] = lambda t, n: 0.4  # (t, episodes) -> success probability
    k: int = 2
    missing: float = 0.0  # share of reports never sent
    max_delay: int = 0  # reports arrive up to this many episodes late, out of order
    drift_only: bool = False  # effects never change: any restart is a false one


def const(effect: float) -> Truth:
    return lambda t, others: effect


def step(before: float, after: float, at: int) -> Truth:
    return lambda t, others: before if t < at else after


def _stationary(n: int) -> list[Lesson]:
    return [Lesson("helps", "t", const(0.15)), Lesson("harms", "t", const(-0.1))] + \
        [Lesson(f"inert{i}", "t", const(0.0)) for i in range(4)]


def _moving(before: float, after: float) -> Callable[[int], list[Lesson]]:
    def lessons(n: int) -> list[Lesson]:
        return [Lesson("fossil", "t", step(before, after, n // 2), change=n // 2)] + \
            [Lesson(f"inert{i}", "t", const(0.0)) for i in range(3)]
    return lessons


def _interaction(b_alone: float) -> Callable[[int], list[Lesson]]:
    """A adds 0.2 only when B is absent; B adds `b_alone` (and takes A's help away when both are in)."""
    def lessons(n: int) -> list[Lesson]:
        return [
            Lesson("A", "t", lambda t, o: 0.2 * (1.0 - o.get("B", 0.0)),
                   effect=lambda t, inj: 0.0 if "B" in inj else 0.2),
            Lesson("B", "t", lambda t, o: b_alone - 0.2 * o.get("A", 0.0), effect=lambda t, inj: b_alone),
            Lesson("inert0", "t", const(0.0)), Lesson("inert1", "t", const(0.0)),
        ]
    return lessons


def _many(n: int) -> list[Lesson]:
    out = []
    for scope in range(40):
        task = f"t{scope}"
        out += [Lesson(f"{task}.helps", task, const(0.2)), Lesson(f"{task}.harms", task, const(-0.2))]
        out += [Lesson(f"{task}.inert{i}", task, const(0.0)) for i in range(3)]
    return out


def _square(period: int) -> Callable[[int, int], float]:
    return lambda t, n: 0.8 if (t // period) % 2 == 0 else 0.1


SCENARIOS: dict[str, Scenario] = {s.name: s for s in (
    Scenario("null", lambda n: [Lesson(f"inert{i}", "t", const(0.0)) for i in range(6)]),
    Scenario("drift_rising", _stationary, base=lambda t, n: 0.15 + 0.65 * t / n, drift_only=True),
    Scenario("drift_falling", _stationary, base=lambda t, n: 0.8 - 0.65 * t / n, drift_only=True),
    Scenario("square_100", _stationary, base=_square(100), drift_only=True),
    Scenario("square_250", _stationary, base=_square(250), drift_only=True),
    Scenario("interaction_inert_b", _interaction(0.0)),
    Scenario("interaction_helpful_b", _interaction(0.1)),
    Scenario("flip", _moving(0.2, -0.2)),
    Scenario("fall_015_m010", _moving(0.15, -0.1)),
    Scenario("fall_020_m005", _moving(0.2, -0.05)),
    Scenario("stop_020", _moving(0.2, 0.0)),
    Scenario("stop_010", _moving(0.1, 0.0)),
    Scenario("stop_020_drift", _moving(0.2, 0.0), base=lambda t, n: 0.6 - 0.4 * t / n),
    Scenario("missing_late", _moving(0.2, -0.2), missing=0.3, max_delay=40),
    Scenario("many_scopes", _many, k=2),
)}


def clamp(p: float) -> float:
    return min(1.0, max(0.0, p)) if math.isfinite(p) else 0.0
