"""The five policies the gym runs side by side on the same worlds: none, similarity, qvalue,
lamar (the engine, through its public API) and oracle (the physical limit)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, ClassVar, cast

from lamar.engine import Lamar
from lamar.experience import Experience, Scope
from lamar.gym.retrieval import BM25, context_query
from lamar.gym.world import TASKS, World, context_of, lessons_by_task
from lamar.policy import Evidence
from lamar.signals import Signal

if TYPE_CHECKING:
    from lamar.policy.config import Tuning

POLICIES = ("none", "similarity", "qvalue", "lamar", "oracle")
VARIANT_POLICIES = ("lamar-v2",)  # runnable by name, not in the default run


class GymPolicy:
    """Chooses the lessons of an episode, then hears the outcome.

    Args:
        world: the world the policy acts in (only the oracle reads its truth).
        k: slots per episode.
        seed: the run's seed; each policy draws its own random stream from it, so the
            world's coins never depend on which policy is running.
    """

    name: ClassVar[str] = ""

    def __init__(self, world: World, k: int, seed: int) -> None:
        self.world = world
        self.k = k
        self.seed = seed
        self._rng = random.Random(f"lamar-gym-{self.name}:{seed}")
        self.ticket: object = None  # what `learn` needs to credit the episode last chosen

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        """(injected, held out) lesson indices for episode `t` of `task`, best first."""
        raise NotImplementedError

    def learn(self, signal: Signal, ticket: object) -> None:
        """The outcome of an earlier episode, identified by the `ticket` it was chosen with
        (reports may come late, out of order, or never)."""


class NoLessons(GymPolicy):
    """Injects nothing: the baseline every gain is measured from."""

    name = "none"

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        return [], []


class Similarity(GymPolicy):
    """Top-k lessons by BM25 of their text against the context's words, ties broken at random.

    The six lessons of a task share their precondition and have actions of equal length, so
    they tie exactly and this picks among them at random: text cannot tell which one helps.
    """

    name = "similarity"

    def __init__(self, world: World, k: int, seed: int) -> None:
        super().__init__(world, k, seed)
        bm25 = BM25([f"{lesson.precondition} {lesson.action}" for lesson in world.lessons])
        self._scores = [bm25.scores(context_query(context_of(task))) for task in range(len(TASKS))]
        self._relevant = [[i for i, s in enumerate(scores) if s > 0.0] for scores in self._scores]

    def ranked(self, task: int) -> list[int]:
        """The relevant lessons of `task`, best score first, ties in random order."""
        scores, rng = self._scores[task], self._rng
        return sorted(self._relevant[task], key=lambda i: (-scores[i], rng.random()))

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        return self.ranked(task)[: self.k], []


class QValue(Similarity):
    """Outcome-aware greedy retrieval in the manner of MemRL and Cognee.

    A similarity filter (lessons scoring at least `relevance` times the best score) and then
    the lessons with the highest exponential moving average of the reward of the episodes
    they were injected in; greedy, no exploration, no control group. Every lesson in an
    episode is credited with the episode's one shared reward.
    """

    name = "qvalue"
    rate: ClassVar[float] = 0.1
    initial: ClassVar[float] = 0.0
    relevance: ClassVar[float] = 0.5

    def __init__(self, world: World, k: int, seed: int) -> None:
        super().__init__(world, k, seed)
        self.q = [self.initial] * len(world.lessons)
        self._pool = []
        for task, scores in enumerate(self._scores):
            best = max(scores[i] for i in self._relevant[task])
            self._pool.append([i for i in self._relevant[task] if scores[i] >= self.relevance * best])
        self._last: list[int] = []

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        q, rng = self.q, self._rng
        ranked = sorted(self._pool[task], key=lambda i: (-q[i], rng.random()))
        self._last = self.ticket = ranked[: self.k]
        return self._last, []

    def learn(self, signal: Signal, ticket: object) -> None:
        assert isinstance(ticket, list)
        for i in ticket:
            self.q[i] += self.rate * (signal.reward - self.q[i])


class LamarPolicy(GymPolicy):
    """The engine with its default tuning (or `tuning`), through its public API only.

    Each lesson is added with scope `Scope(task=...)`; every episode is a `recall` of the
    task's context and a `report` of the world's signal. The engine's seed comes from the
    run's seed, on a stream of its own.
    """

    name = "lamar"

    def __init__(self, world: World, k: int, seed: int, tuning: dict[str, float] | None = None) -> None:
        super().__init__(world, k, seed)
        self.lam = self.engine(k, self._rng.getrandbits(48), tuning or {})
        self._index: dict[str, int] = {}
        for lesson in world.lessons:
            self.lam.add(Experience(
                precondition=lesson.precondition, action=lesson.action,
                scope=Scope(task=world.task_name(lesson.task)), id=lesson.id,
                provenance={"source": "gym"},
            ))
            self._index[lesson.id] = lesson.index
        self.randomized = [0] * len(world.lessons)  # episodes with a logged coin, 0 < p < 1
        self._episode = ""

    def engine(self, k: int, seed: int, tuning: dict[str, float]) -> Any:
        """The engine this policy drives: `Lamar` in memory."""
        # Names from the command line: the engine refuses an unknown one with InvalidArgument.
        return Lamar(":memory:", k=k, seed=seed, **cast("Tuning", tuning))

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        rec = self.lam.recall(self.world.context(t, task))
        self._episode = self.ticket = rec.episode_id
        index = self._index
        for exp_id, p in rec.propensities.items():
            if 0.0 < p < 1.0:
                self.randomized[index[exp_id]] += 1
        return [index[e.id] for e in rec.experiences], [index[i] for i in rec.held_out]

    def learn(self, signal: Signal, ticket: object) -> None:
        assert isinstance(ticket, str)
        self.lam.report(ticket, signal)

    @property
    def index(self) -> dict[str, int]:
        """Experience id -> the lesson's index in the world."""
        return self._index

    def evidence(self, lesson: int) -> Evidence:
        """The engine's evidence on a lesson, by its index in the world."""
        evidence: Evidence = self.lam.evidence(self.world.lessons[lesson].id)
        return evidence


class LamarV2Policy(LamarPolicy):
    """The second design of the decision core (`lamar.gym.v2`, frozen), driven like `lamar`, so that
    a run compares today's engine with it (`--frontier`). It has no store and no sleep."""

    name = "lamar-v2"

    def engine(self, k: int, seed: int, tuning: dict[str, float]) -> Any:
        from lamar.gym.v2.engine import FrozenEngine

        return FrozenEngine(k, seed, **tuning)


class Oracle(GymPolicy):
    """Knows the truth at every moment and injects only lessons that help now."""

    name = "oracle"

    def __init__(self, world: World, k: int, seed: int) -> None:
        super().__init__(world, k, seed)
        self._by_task = lessons_by_task(world.lessons)

    def choose(self, t: int, task: int) -> tuple[list[int], list[int]]:
        world, rng = self.world, self._rng
        helping = [i for i in self._by_task[task] if world.effect(i, t) > 0.0]
        helping.sort(key=lambda i: (-world.effect(i, t), rng.random()))
        return helping[: self.k], []


_CLASSES: dict[str, type[GymPolicy]] = {
    cls.name: cls for cls in (NoLessons, Similarity, QValue, LamarPolicy, LamarV2Policy, Oracle)
}


def make_policy(name: str, world: World, k: int, seed: int, tuning: dict[str, float] | None = None) -> GymPolicy:
    """The policy called `name` (one of POLICIES), ready for `world` (`tuning` goes to lamar's engine)."""
    try:
        cls = _CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}") from None
    if issubclass(cls, LamarPolicy):
        return cls(world, k, seed, tuning)
    return cls(world, k, seed)
