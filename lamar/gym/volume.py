"""`python -m lamar.gym --volume`: how long a +0.2 lesson takes to be proven at a project's volume."""

from __future__ import annotations

import random
from typing import Any

from lamar.gym.family import DrawnLesson
from lamar.gym.policies import LamarPolicy
from lamar.gym.world import signal_of
from lamar.signals import Signal

TASKS, PER_TASK, SOLO, TEAM, LOOK = 6, 5, 300, 3000, 50


class VolumeWorld:
    """The project above, with the interface the gym's policies read."""

    def __init__(self, seed: int, episodes: int) -> None:
        rng = random.Random(f"lamar-volume:{seed}")
        self.seed, self.episodes, self.k = seed, episodes, 2
        self.lessons: list[DrawnLesson] = []
        for task in range(TASKS):
            effects = [0.2, -0.2, 0.0, 0.0, 0.0]
            rng.shuffle(effects)
            for slot, effect in enumerate(effects):
                kind = "helpful" if effect > 0 else "harmful" if effect < 0 else "inert"
                self.lessons.append(DrawnLesson(len(self.lessons), f"v{seed}-t{task}-l{slot}", task,
                                                f"working on task {task}", f"try approach {slot}", kind, effect))
        self.tasks = [rng.randrange(TASKS) for _ in range(episodes)]
        self.coins = [rng.random() for _ in range(episodes)]
        self.signal_coins = [rng.random() for _ in range(episodes)]

    def task_name(self, task: int) -> str:
        return f"task{task}"

    def context(self, t: int, task: int) -> dict[str, str]:
        return {"project": "volume", "task": self.task_name(task)}

    def effect(self, lesson: int, t: int) -> float:
        return self.lessons[lesson].effect

    def outcome(self, t: int, injected: list[int]) -> Signal:
        p = 0.4 + sum(self.lessons[i].effect for i in injected)
        return signal_of(self.coins[t] < p, self.signal_coins[t])


def proven_at(seed: int, episodes: int, tuning: dict[str, float] | None = None) -> list[int | None]:
    """For each +0.2 lesson of one seeded project: the episode of its first helps (None: not by the end)."""
    world = VolumeWorld(seed, episodes)
    policy = LamarPolicy(world, world.k, seed, tuning)  # type: ignore[arg-type]
    helpful = [lesson for lesson in world.lessons if lesson.effect > 0]
    first: dict[int, int] = {}
    for t in range(episodes):
        injected, _ = policy.choose(t, world.tasks[t])
        policy.learn(world.outcome(t, injected), policy.ticket)
        if (t + 1) % LOOK == 0:
            for lesson in helpful:
                if lesson.index not in first and policy.evidence(lesson.index).verdict.value == "helps":
                    first[lesson.index] = t + 1
    return [first.get(lesson.index) for lesson in helpful]


def _job(args: tuple[int, int, tuple[tuple[str, float], ...]]) -> list[int | None]:
    seed, episodes, tuning = args
    return proven_at(seed, episodes, dict(tuning))


def proven_episodes(seeds: int = 10, episodes: int = 60_000, workers: int | None = None,
                    tuning: tuple[tuple[str, float], ...] = ()) -> list[int | None]:
    """`proven_at` over projects 0 to `seeds` - 1, one row per +0.2 lesson, in parallel."""
    from lamar.gym.runner import run_jobs

    jobs = [(seed, episodes, tuning) for seed in range(seeds)]
    found: list[Any] = [e for r in run_jobs(_job, jobs, workers or 2, None) for e in r]
    return found


def volume(seeds: int = 10, episodes: int = 60_000, workers: int | None = None,
           settings: tuple[tuple[tuple[str, float], ...], ...] = ((), (("holdout", 0.15),))) -> str:
    """The table: weeks until a +0.2 lesson is proven, solo and in a team, over seeds, at the
    defaults and at each other setting of `settings`.

    A project with 30 lessons over 6 tasks (per task: one +0.2, one -0.2, three inert; base 0.4,
    k = 2, every episode reported) runs at the defaults; the episode at which each +0.2 lesson is
    first read "helps" (read every 50 episodes) becomes weeks at a solo user's 300 episodes a week
    and at a team's 3 000 (a shared store: the same lessons, ten times the episodes).
    """
    lines = [(f"Weeks until a +0.2 lesson is proven (30 lessons over 6 tasks, k = 2, every episode reported; "
              f"{seeds} projects x 6 lessons, read every {LOOK} episodes, up to {episodes} episodes)"),
             f"{'':<40}{'solo, 300/week':>16}{'team, 3000/week':>17}"]
    for tuning in settings:
        found = proven_episodes(seeds, episodes, workers, tuning)
        done = sorted(e for e in found if e is not None)
        label = ", ".join(f"{k}={v}" for k, v in tuning) or "the defaults"
        for name, q in (("first quarter proven by", 0.25), ("half (median)", 0.5), ("three quarters", 0.75)):
            at = int(q * len(found))
            value = done[at] if at < len(done) else None
            cells = ["not by the end" if value is None else f"{value / rate:.1f}" for rate in (SOLO, TEAM)]
            lines.append(f"{f'{label}: {name}':<40}{cells[0]:>16}{cells[1]:>17}")
        lines.append(f"   {label}: proven by the end {len(done)} of {len(found)}")
    lines.append("   per task a project sees 50 episodes a week solo, so each lesson is eligible in about 50.")
    return "\n".join(lines)


__all__ = ["VolumeWorld", "proven_at", "proven_episodes", "volume"]
