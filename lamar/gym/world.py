"""The gym's world: four tasks, six (or more) equally relevant lessons each, and one helpful
lesson that silently turns harmful halfway through (the fossil). Every coin is drawn from the seed."""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Iterable
from typing import Any

from lamar.signals import Signal

# Each task: its context value, the precondition every one of its lessons shares, and six
# actions of equal length whose words never occur in the context, so that a text retriever
# finds the six lessons exactly equally relevant (which they are: only outcomes tell them apart).
TASKS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("fix_flaky_test", "asked to fix a flaky test", (
        "rerun it with pinned seeds",
        "look for shared global state",
        "add retries around network calls",
        "mock the system clock first",
        "check ordering of parallel workers",
        "quarantine it behind a marker",
    )),
    ("deploy_service", "asked to deploy the service", (
        "roll out behind feature flags",
        "drain old pods before switching",
        "tag the image with commit",
        "warm caches ahead of traffic",
        "verify health checks stay green",
        "keep the previous release ready",
    )),
    ("migrate_schema", "asked to migrate the database schema", (
        "write reversible steps per table",
        "backfill new columns in batches",
        "lock writes during the switch",
        "copy data into shadow tables",
        "add indexes before dropping columns",
        "take a snapshot before starting",
    )),
    ("review_pull_request", "asked to review a pull request", (
        "read tests before the diff",
        "run the branch locally first",
        "ask for smaller focused commits",
        "check error paths and logging",
        "compare naming with nearby modules",
        "flag missing docs for callers",
    )),
)

LESSONS_PER_TASK = 6
PROJECT = "gym"
LANGUAGES = ("swift", "python")  # the context variant's languages; the split lesson helps in the first


class Kind(str, enum.Enum):
    """What a lesson truly is: TRUE helps throughout, FALSE hurts throughout, INERT does
    nothing, FOSSIL helps until the flip and hurts after it, SPLIT (context variant only)
    helps in Swift and hurts in Python."""

    TRUE = "true"
    FALSE = "false"
    INERT = "inert"
    FOSSIL = "fossil"
    SPLIT = "split"

    def __str__(self) -> str:
        return self.value


@dataclasses.dataclass(frozen=True)
class Lesson:
    """One lesson of the world, with the truth no policy but the oracle may read."""

    index: int
    id: str
    task: int
    precondition: str
    action: str
    kind: Kind


def context_of(task: int, language: str | None = None) -> dict[str, str]:
    """The context every policy sees for an episode of `task` (with its language in the
    context variant)."""
    if language is None:
        return {"project": PROJECT, "task": TASKS[task][0]}
    return {"project": PROJECT, "task": TASKS[task][0], "language": language}


def actions_of(task: int, lessons: int) -> list[str]:
    """`lessons` distinct actions for `task`, all of the same length in words.

    Six are written out; beyond six, every action gets one numbered word so that none
    repeats and all keep one length (a text retriever still finds them exactly tied).

    >>> actions_of(0, 7)[6]
    'rerun it with pinned seeds v1'
    """
    base = TASKS[task][2]
    if lessons <= len(base):
        return list(base[:lessons])
    return [f"{base[slot % len(base)]} v{slot // len(base)}" for slot in range(lessons)]


class World:
    """One seeded world: its lessons' roles, the fossil's task, and every episode's coins.

    Variants: missing and late reports, and a context variant where each episode has a language
    and one task-wide lesson helps in Swift and hurts in Python.

    The coins are drawn once, up front, from the world's own stream, so every policy run on
    the same seed meets the same tasks in the same order and the same coin per episode:
    episode t succeeds when `coin[t] < p`, p being the success probability that the
    injected lessons make.

    Args:
        seed: the world's seed.
        episodes: episodes in the run; the flip happens after `episodes // 2`.
        base: success probability with no lesson injected.
        help_effect: what a helpful lesson adds to the success probability.
        hurt_effect: what a harmful lesson takes from it.
        lessons: lessons per task (one helpful, one harmful, the rest inert).
        report_rate: chance that an episode is ever reported.
        report_delay: a reported episode's outcome arrives up to this many episodes late
            (uniformly), so reports come out of order.
        context: the context variant: each episode has a language, and one inert lesson of
            a task other than the fossil's becomes SPLIT.

    >>> w = World(seed=3, episodes=10)
    >>> len(w.lessons), w.flip, len(w.tasks)
    (24, 5, 10)
    >>> sorted(l.kind.value for l in w.lessons if l.task == w.fossil_task).count("fossil")
    1
    """

    def __init__(self, seed: int, episodes: int, base: float = 0.40,
                 help_effect: float = 0.20, hurt_effect: float = 0.20, lessons: int = LESSONS_PER_TASK,
                 report_rate: float = 1.0, report_delay: int = 0, context: bool = False) -> None:
        self.seed = seed
        self.episodes = episodes
        self.flip = episodes // 2
        self.base = base
        self.help_effect = help_effect
        self.hurt_effect = hurt_effect
        rng = random.Random(f"lamar-gym-world:{seed}")
        self.fossil_task = rng.randrange(len(TASKS))
        self.lessons: list[Lesson] = []
        for task, (name, precondition, _) in enumerate(TASKS):
            actions = actions_of(task, lessons)
            roles = [Kind.TRUE, Kind.FALSE] + [Kind.INERT] * (lessons - 2)
            rng.shuffle(roles)  # which action is which is the world's secret
            for slot, (action, kind) in enumerate(zip(actions, roles, strict=True)):
                if kind is Kind.TRUE and task == self.fossil_task:
                    kind = Kind.FOSSIL
                self.lessons.append(Lesson(
                    index=len(self.lessons), id=f"gym-{name}-{slot}", task=task,
                    precondition=precondition, action=action, kind=kind,
                ))
        self.fossil = next(lesson.index for lesson in self.lessons if lesson.kind is Kind.FOSSIL)
        n_tasks = len(TASKS)
        self.tasks = [rng.randrange(n_tasks) for _ in range(episodes)]
        self.coins = [rng.random() for _ in range(episodes)]
        self.signal_coins = [rng.random() for _ in range(episodes)]
        # The variants draw from streams of their own, so a variant never changes the default world's draws.
        extra = random.Random(f"lamar-gym-variants:{seed}")
        self.reported = [report_rate >= 1.0 or extra.random() < report_rate for _ in range(episodes)]
        self.delays = [extra.randint(0, report_delay) if report_delay else 0 for _ in range(episodes)]
        self.languages: list[str] | None = None
        self.split: int | None = None
        if context:
            self.languages = [LANGUAGES[extra.random() < 0.5] for _ in range(episodes)]
            inert = [lesson for lesson in self.lessons
                     if lesson.kind is Kind.INERT and lesson.task != self.fossil_task]
            chosen = inert[extra.randrange(len(inert))]
            self.lessons[chosen.index] = dataclasses.replace(chosen, kind=Kind.SPLIT)
            self.split = chosen.index

    def task_name(self, task: int) -> str:
        """The context value (and scope) of `task`."""
        return TASKS[task][0]

    def context(self, t: int, task: int) -> dict[str, str]:
        """The context of episode `t`."""
        return context_of(task, None if self.languages is None else self.languages[t])

    def effect(self, lesson: int, t: int) -> float:
        """The lesson's true effect on the success probability at episode `t`."""
        kind = self.lessons[lesson].kind
        if kind is Kind.TRUE or (kind is Kind.FOSSIL and t < self.flip):
            return self.help_effect
        if kind is Kind.FALSE or kind is Kind.FOSSIL:
            return -self.hurt_effect
        if kind is Kind.SPLIT and self.languages is not None:
            return self.help_effect if self.languages[t] == LANGUAGES[0] else -self.hurt_effect
        return 0.0

    def success_probability(self, t: int, injected: list[int]) -> float:
        p = self.base + sum(self.effect(lesson, t) for lesson in injected)
        return min(1.0, max(0.0, p))

    def outcome(self, t: int, injected: list[int]) -> Signal:
        """The human's response to episode `t` given the injected lessons.

        Success is SHIPPED or ACCEPTED (half each); failure is REVERTED, CORRECTED or
        REASKED (a third each); the kind is the world's coin, not the policy's.
        """
        return signal_of(self.coins[t] < self.success_probability(t, injected), self.signal_coins[t])


def lessons_by_task(lessons: Iterable[Any]) -> dict[int, list[int]]:
    """The indexes of `lessons` (a gym world's or a drawn world's) grouped by task, in their order.

    >>> lessons_by_task(World(seed=3, episodes=10).lessons)[0]
    [0, 1, 2, 3, 4, 5]
    """
    out: dict[int, list[int]] = {}
    for lesson in lessons:
        out.setdefault(lesson.task, []).append(lesson.index)
    return out


def signal_of(success: bool, v: float) -> Signal:
    """The signal of an episode that succeeded (or not), `v` a uniform coin: SHIPPED or ACCEPTED
    half each, REVERTED, CORRECTED or REASKED a third each (every gym world's mapping).

    >>> signal_of(True, 0.7).value, signal_of(False, 0.1).value
    ('accepted', 'reverted')
    """
    if success:
        return Signal.SHIPPED if v < 0.5 else Signal.ACCEPTED
    if v < 1.0 / 3.0:
        return Signal.REVERTED
    return Signal.CORRECTED if v < 2.0 / 3.0 else Signal.REASKED


def reward_gap() -> float:
    """Mean reward of a success minus that of a failure: turns a change in success
    probability into a change in reward (0.2 of success is 0.2 * this in reward)."""
    success = (Signal.SHIPPED.reward + Signal.ACCEPTED.reward) / 2.0
    failure = (Signal.REVERTED.reward + Signal.CORRECTED.reward + Signal.REASKED.reward) / 3.0
    return success - failure
