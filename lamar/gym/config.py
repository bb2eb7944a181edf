"""The gym's parameters (`GymConfig`) and the phases of a run its tables are cut into."""

from __future__ import annotations

import dataclasses
from typing import Any

from lamar.gym.peers import peer_class
from lamar.gym.policies import POLICIES, VARIANT_POLICIES
from lamar.storable import whole_number

MAX_SEEDS = 100_000  # --seeds: a run of every policy each
MAX_LESSONS = 1_000  # --lessons per task
MAX_EPISODES = 1_000_000  # --episodes per run

PHASES = ("first500", "pre", "post", "recovered")
PHASE_TITLES = {"first500": "first 500", "pre": "pre-flip", "post": "post-flip", "recovered": "recovered"}


@dataclasses.dataclass(frozen=True)
class GymConfig:
    """One gym run: the world, the policies, the seeds, and how often to look.

    Attributes:
        episodes: episodes per run; the world flips after half of them.
        seeds: number of seeds (worlds), `first_seed`, `first_seed + 1`, ...
        first_seed: the first seed.
        k: lesson slots per episode.
        base: success probability with no lesson.
        help_effect: success probability a helpful lesson adds.
        hurt_effect: success probability a harmful lesson takes away.
        policies: which of none, similarity, qvalue, lamar, oracle (and the peers of
            `lamar.gym.peers`) to run.
        workers: processes running (policy, seed) jobs (None: one per CPU).
        window: episodes per point of the success and fossil-share series.
        checkpoint: episodes between looks at the engine's verdicts.
        lift_every: episodes between points of each lesson's lift series.
        lessons: lessons per task (one helpful, one harmful, the rest inert).
        report_rate: chance that an episode is ever reported (the rest stay unreported).
        report_delay: reports arrive up to this many episodes late, uniformly, out of order.
        context: the context variant: episodes carry a language, and one task-wide lesson
            helps in Swift and hurts in Python.
        sleep_at: episodes after which lamar's runs ask sleep for proposals (and at the end).
        tuning: (name, value) pairs of `lamar.policy.Policy` for the lamar policy (default: none,
            the engine's defaults), to measure a tuning on seeds other than the reported ones.

    >>> GymConfig(episodes=2000).flip
    1000
    """

    episodes: int = 8000
    seeds: int = 20
    first_seed: int = 0
    k: int = 2
    base: float = 0.40
    help_effect: float = 0.20
    hurt_effect: float = 0.20
    policies: tuple[str, ...] = POLICIES
    workers: int | None = None
    window: int = 100
    checkpoint: int = 50
    lift_every: int = 400
    lessons: int = 6
    report_rate: float = 1.0
    report_delay: int = 0
    context: bool = False
    sleep_at: tuple[int, ...] = (2000,)
    tuning: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "policies", tuple(self.policies))
        object.__setattr__(self, "sleep_at", tuple(self.sleep_at))
        object.__setattr__(self, "tuning", tuple((str(k), v) for k, v in self.tuning))
        if self.tuning and not {"lamar", "lamar-v2"} & set(self.policies):  # ran with no engine to tune
            raise ValueError(f"--lamar tunes the lamar policy, and the policies {', '.join(self.policies)} leave it "
                             "out; add lamar to --policies, or leave --lamar out")
        if self.tuning:
            from lamar.gym.v2.config import Policy as V2Policy
            from lamar.policy.config import Policy, without_retired

            # fails here, with the engine's own message, before any run; each engine reads its own knobs
            settings: dict[str, Any] = dict(self.tuning)
            engines = ([V2Policy] if "lamar-v2" in self.policies else []) + (
                [Policy] if "lamar-v2" not in self.policies or "lamar" in self.policies else [])
            for engine in engines:
                knobs = {field.name for field in dataclasses.fields(engine)}
                unknown = sorted(set(without_retired(settings, warn=False)) - knobs)
                if unknown:
                    raise ValueError(f"--lamar: no knob {unknown[0]!r}; the knobs are {', '.join(sorted(knobs))} "
                                     "(docs/decisions.md, 'The knobs')")
                engine(**(settings if engine is V2Policy else without_retired(settings, warn=False)))
        for name in ("episodes", "seeds", "k", "window", "checkpoint", "lift_every", "first_seed", "lessons",
                     "report_delay"):
            value = getattr(self, name)
            if not whole_number(value):
                raise TypeError(f"{name} must be a whole number; got {value!r}")
        if self.episodes < 100:
            raise ValueError(f"episodes must be at least 100 (the flip is at half); got {self.episodes}")
        for name, low in (("seeds", 1), ("first_seed", 0), ("window", 1), ("checkpoint", 1),
                          ("lift_every", 1)):
            if getattr(self, name) < low:
                raise ValueError(f"{name} must be >= {low}; got {getattr(self, name)}")
        # The job list, each world's lessons and its episodes' tasks are built whole before the first
        # episode: a slip of the keyboard (--seeds 1000000000) would fill the memory instead of starting.
        for name, high in (("seeds", MAX_SEEDS), ("lessons", MAX_LESSONS), ("episodes", MAX_EPISODES)):
            if getattr(self, name) > high:
                raise ValueError(f"{name} must be at most {high:_}; got {getattr(self, name):_}")
        for name in ("base", "help_effect", "hurt_effect"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} is a probability, in [0, 1]; got {value!r}")
        unknown = [p for p in self.policies if p not in POLICIES + VARIANT_POLICIES and peer_class(p) is None]
        if unknown or not self.policies or len(set(self.policies)) != len(self.policies):
            choices = ", ".join(POLICIES)
            raise ValueError(f"policies must be distinct names from {choices}; got {self.policies!r}")
        if self.lessons < 3:
            raise ValueError("lessons per task must be at least 3 (a helpful, a harmful, an inert); "
                             f"got {self.lessons}")
        if not 1 <= self.k < self.lessons:
            # k = 0 injects nothing (captured reads nan); k >= lessons lets a policy inject every lesson of
            # the task, the harmful one too, so there is nothing left to choose between.
            raise ValueError(f"k is the lesson slots per episode, from 1 to {self.lessons - 1} (a task has "
                             f"{self.lessons} lessons, --lessons); got {self.k}")
        if not 0.0 < self.report_rate <= 1.0:
            raise ValueError(f"report_rate is the chance an episode is reported, in (0, 1]; got {self.report_rate!r}")
        if self.report_delay < 0:
            raise ValueError(f"report_delay must be >= 0 episodes; got {self.report_delay}")
        if self.report_delay > self.flip:  # most reports would fall due after the run's end and never arrive
            raise ValueError(f"report_delay is at most half the run, {self.flip:_} episodes of --episodes "
                             f"{self.episodes:_} (a report due after the end never arrives); got {self.report_delay:_}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1; got {self.workers}")

    @property
    def flip(self) -> int:
        """Index of the first episode after the world changed."""
        return self.episodes // 2

    @property
    def seed_list(self) -> list[int]:
        return list(range(self.first_seed, self.first_seed + self.seeds))

    def phase_bounds(self) -> dict[str, tuple[int, int]]:
        """Each phase's [start, stop) episodes: the first 500, before and after the flip,
        and the last 1 000 ('recovered', never reaching back before the flip)."""
        n, flip = self.episodes, self.flip
        return {
            "first500": (0, min(500, flip)),
            "pre": (0, flip),
            "post": (flip, n),
            "recovered": (max(flip, n - 1000), n),
        }
