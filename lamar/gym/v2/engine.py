"""The second design's decision core behind a small in-memory engine: the gym runs it beside
today's engine (`lamar-v2`) so that one run compares both (`--frontier`)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import Any

from lamar.experience import Experience
from lamar.gym.v2.choose import choose
from lamar.gym.v2.config import Policy
from lamar.gym.v2.lesson import LessonState
from lamar.policy.verdicts import Evidence
from lamar.signals import Signal

_PRIOR_SIGMA, _PRIOR_WEIGHT = 0.75, 10.0  # the fold's prior on the reward spread, frozen with this design


@dataclasses.dataclass(frozen=True)
class FrozenRecall:
    """What a recall returns: the same fields the gym reads from `lamar.Recall`."""

    episode_id: str
    experiences: list[Experience]
    held_out: tuple[str, ...]
    propensities: dict[str, float]

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.experiences]


class FrozenEngine:
    """add / recall / report / evidence of the second design, in memory.

    It folds outcomes as that design did: the reward spread from every outcome so far, the
    Bonferroni divisor from the active lessons, each eligible lesson's state through
    `LessonState.observe`. No store, no sleep, no persistence.
    """

    def __init__(self, k: int, seed: int, **tuning: Any) -> None:
        self.k = k
        self.policy = Policy(**tuning)
        self._rng = random.Random(seed)
        self._states: dict[str, LessonState] = {}
        self._by_scope: dict[tuple[tuple[str, str], ...], list[LessonState]] = {}
        self._open: dict[str, tuple[list[str], list[str], dict[str, float], dict[str, str]]] = {}
        self._n = 0
        self._mean = 0.0
        self._m2 = 0.0
        self._next = 0

    def add(self, experience: Experience) -> str:
        state = LessonState(experience)
        self._states[experience.id] = state
        self._by_scope.setdefault(experience.scope.items_key, []).append(state)
        return experience.id

    def _sigma(self) -> float:
        return float(((self._m2 + _PRIOR_WEIGHT * _PRIOR_SIGMA**2) / (self._n + _PRIOR_WEIGHT)) ** 0.5)

    def recall(self, context: Mapping[str, str]) -> FrozenRecall:
        eligible = [s for key, states in self._by_scope.items() if all(context.get(f) == v for f, v in key)
                    for s in states]
        chosen, held, p = choose(eligible, self.k, context, self._sigma(), len(self._states), self.policy,
                                 self._rng)
        self._next += 1
        episode_id = f"v2-{self._next}"
        self._open[episode_id] = ([s.experience.id for s in eligible], [s.experience.id for s in chosen], p,
                                      dict(context))
        return FrozenRecall(episode_id, [s.experience for s in chosen], tuple(held), p)

    def report(self, episode_id: str, signal: Signal) -> None:
        eligible, injected, p, context = self._open.pop(episode_id)
        reward = signal.reward
        self._n += 1
        delta = reward - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (reward - self._mean)
        sigma, n = self._sigma(), len(self._states)
        chosen = set(injected)
        for exp_id in eligible:
            self._states[exp_id].observe(reward, exp_id in chosen, p.get(exp_id, 0.0), sigma, self.policy, n,
                                          context)

    def evidence(self, exp_id: str) -> Evidence:
        return self._states[exp_id].evidence(self.policy, len(self._states))
