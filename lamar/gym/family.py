"""A family of drawn worlds (`python -m lamar.gym --family N`): the gym's world is one point; these
vary everything a user's store can vary, each drawn from its seed (docs/gym.md, "The family")."""

from __future__ import annotations

import dataclasses
import math
import random

from lamar.gym.world import signal_of
from lamar.signals import Signal

TUNING_SEEDS = 100_000  # first tuning seed; reported families use seeds below it
LANGUAGE = "language"  # the free context key of the worlds that have one


@dataclasses.dataclass(frozen=True)
class DrawnLesson:
    """One lesson and its truth: `effect` until `flip_at` (never, if None), `after` from then on;
    `by_value` (context-dependent lessons) replaces `effect` by the language's own."""

    index: int
    id: str
    task: int
    precondition: str
    action: str
    kind: str  # helpful, harmful, inert, flips (to harmful or inert), split (depends on the language)
    effect: float
    flip_at: int | None = None
    after: float = 0.0
    by_value: tuple[tuple[str, float], ...] = ()


class DrawnWorld:
    """One world of the family, every coin drawn up front from its seed (so every policy on the
    same seed meets the same episodes and the same success coins).

    Per world: 2-12 tasks with skewed traffic, 4-30 lessons a task, k 1-4, 1 000-10 000 episodes
    (log-uniform), a base rate per task that stays, drifts or steps, lessons that help or hurt by
    0.05-0.30 (or do nothing), helpful ones that flip to harmful or inert, lessons whose effect
    depends on a context key the scope leaves free, 20-50% of reports missing and the rest up to
    0-50 episodes late. Reporting seeds are 0, 1, ...; tuning seeds start at `TUNING_SEEDS`, so a
    choice tuned on one never sees the other.

    >>> w = DrawnWorld(7)
    >>> 2 <= w.n_tasks <= 12 and 1 <= w.k <= 4 and 1000 <= w.episodes <= 10000
    True
    >>> w.summary()["lessons"] == len(w.lessons)
    True
    """

    def __init__(self, seed: int) -> None:
        rng = random.Random(f"lamar-family:{seed}")
        self.seed = seed
        self.n_tasks = rng.randint(2, 12)
        self.k = rng.randint(1, 4)
        self.episodes = round(math.exp(rng.uniform(math.log(1000), math.log(10000))))
        self.flip = self.episodes // 2  # the gym's World has one; the family's flips are per lesson
        weights = [rng.expovariate(1.0) for _ in range(self.n_tasks)]  # Dirichlet(1): skewed traffic
        self.task_weights = [w / sum(weights) for w in weights]
        self.languages: tuple[str, ...] = ("swift", "python", "go")[: rng.choice((0, 2, 3))]
        self.missing = rng.uniform(0.2, 0.5)
        self.max_delay = rng.randint(0, 50)
        self.drift = rng.choice(("none", "linear", "step"))
        self.bases = [rng.uniform(0.2, 0.6) for _ in range(self.n_tasks)]
        self.drift_size = rng.uniform(-0.2, 0.2) if self.drift != "none" else 0.0
        self.step_at = rng.randint(self.episodes // 5, 4 * self.episodes // 5)
        self.lessons: list[DrawnLesson] = []
        for task in range(self.n_tasks):
            for slot in range(rng.randint(4, 30)):
                self.lessons.append(self._draw_lesson(rng, task, slot))
        self.tasks = rng.choices(range(self.n_tasks), weights=self.task_weights, k=self.episodes)
        self.coins = [rng.random() for _ in range(self.episodes)]
        self.signal_coins = [rng.random() for _ in range(self.episodes)]
        self.reported = [rng.random() >= self.missing for _ in range(self.episodes)]
        self.delays = [rng.randint(0, self.max_delay) for _ in range(self.episodes)]
        self.values = [rng.choice(self.languages) if self.languages else None for _ in range(self.episodes)]

    def _draw_lesson(self, rng: random.Random, task: int, slot: int) -> DrawnLesson:
        size = rng.uniform(0.05, 0.3)
        roll = rng.random()

        def lesson(kind: str, effect: float, flip_at: int | None = None, after: float = 0.0,
                   by_value: tuple[tuple[str, float], ...] = ()) -> DrawnLesson:
            return DrawnLesson(len(self.lessons), f"w{self.seed}-t{task}-l{slot}", task, f"working on task {task}",
                               f"try approach {slot}", kind, effect, flip_at, after, by_value)

        if self.languages and roll < 0.1:  # helps in the first language; helps, hurts or nothing elsewhere
            return lesson("split", 0.0, by_value=tuple(
                (v, rng.choice((size, -size, 0.0)) if i else size) for i, v in enumerate(self.languages)))
        if roll < 0.35:
            if rng.random() < 0.3:
                after = -rng.uniform(0.05, 0.3) if rng.random() < 0.5 else 0.0
                return lesson("flips", size, rng.randint(self.episodes // 5, 4 * self.episodes // 5), after)
            return lesson("helpful", size)
        if roll < 0.6:
            return lesson("harmful", -size)
        return lesson("inert", 0.0)

    def task_name(self, task: int) -> str:
        return f"task{task}"

    def context(self, t: int, task: int) -> dict[str, str]:
        ctx = {"project": f"world{self.seed}", "task": self.task_name(task)}
        value = self.values[t]
        if value is not None:
            ctx[LANGUAGE] = value
        return ctx

    def base(self, t: int, task: int) -> float:
        base = self.bases[task]
        if self.drift == "linear":
            return base + self.drift_size * t / self.episodes
        if self.drift == "step" and t >= self.step_at:
            return base + self.drift_size
        return base

    def effect(self, lesson: int, t: int) -> float:
        """The lesson's true effect on success probability in episode `t` (in its context)."""
        item = self.lessons[lesson]
        if item.by_value:
            return dict(item.by_value).get(self.values[t] or "", 0.0)
        if item.flip_at is not None and t >= item.flip_at:
            return item.after
        return item.effect

    def success_probability(self, t: int, injected: list[int]) -> float:
        p = self.base(t, self.tasks[t]) + sum(self.effect(i, t) for i in injected)
        return min(1.0, max(0.0, p))

    def outcome(self, t: int, injected: list[int]) -> Signal:
        """The human's response, from the episode's own coins (as the gym's world)."""
        return signal_of(self.coins[t] < self.success_probability(t, injected), self.signal_coins[t])

    def summary(self) -> dict[str, object]:
        """The world's features, one flat row (the family table's columns)."""
        kinds = [lesson.kind for lesson in self.lessons]
        per_lesson = self.episodes * (1.0 - self.missing) / len(self.lessons)
        return {"world": self.seed, "tasks": self.n_tasks, "lessons": len(self.lessons), "k": self.k,
                "episodes": self.episodes, "episodes_per_lesson": per_lesson, "missing": self.missing,
                "max_delay": self.max_delay, "drift": self.drift, "languages": len(self.languages),
                "helpful": kinds.count("helpful"), "harmful": kinds.count("harmful"), "flips": kinds.count("flips"),
                "split": kinds.count("split")}


__all__ = ["LANGUAGE", "TUNING_SEEDS", "DrawnLesson", "DrawnWorld"]
