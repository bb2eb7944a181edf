"""What a recall would choose for a context, and why, without logging an episode (`Lamar.preview`)."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING

from lamar.experience import Experience
from lamar.recall import render_prompt

if TYPE_CHECKING:
    from lamar.policy.config import Policy
    from lamar.policy.lesson import LessonState
    from lamar.policy.verdicts import Verdict


@dataclasses.dataclass(frozen=True)
class PreviewLesson:
    """One eligible lesson as the selection sees it in the previewed context.

    Attributes:
        experience: the lesson.
        wanted: the preview's first draw wanted it (as one recall's draw would).
        chance: the share of the preview's draws that wanted it: the chance a recall wants it now.
        cold: not yet tried its warm-up times (or never seen absent): drawn first, at +inf.
        estimate: the selection's estimate of its lift in this context (no optimism).
        holdout: the chance its evidence coin holds it out when it is wanted (1 - its propensity).
        verdict, lower, upper, randomized: its evidence now (`Lamar.evidence`).
    """

    experience: Experience
    wanted: bool
    chance: float
    cold: bool
    estimate: float
    holdout: float
    verdict: Verdict
    lower: float
    upper: float
    randomized: int

    @property
    def id(self) -> str:
        return self.experience.id

    @property
    def text(self) -> str:
        """'When X, do Y, because Z.'"""
        return self.experience.render()


@dataclasses.dataclass(frozen=True)
class Preview:
    """What `recall(context, k=k)` would choose now; nothing was logged.

    Attributes:
        context: the context previewed.
        k: the slots.
        lessons: every eligible lesson, the wanted ones first (in the order the draw ranked
            them), then by their chance of being wanted.
        draws: how many Thompson draws `chance` counts.

    >>> from lamar import Experience, Lamar
    >>> lam = Lamar(":memory:", k=1, seed=1)
    >>> eid = lam.add(Experience("the build fails", "clear the cache"))
    >>> seen = lam.preview({"task": "build"})
    >>> seen.eligible == (eid,), seen.lessons[0].cold, lam.stats()["episodes"]
    (True, True, 0)
    """

    context: Mapping[str, str]
    k: int
    lessons: tuple[PreviewLesson, ...]
    draws: int

    @property
    def eligible(self) -> tuple[str, ...]:
        """Ids of every lesson whose scope matches the context."""
        return tuple(lesson.id for lesson in self.lessons)

    @property
    def wanted(self) -> list[Experience]:
        """The lessons the first draw wanted, best first: what a recall injects unless a coin holds one out."""
        return [lesson.experience for lesson in self.lessons if lesson.wanted]

    def as_prompt(self) -> str:
        """The prompt block of the wanted lessons ("" when none), as `Recall.as_prompt` renders it."""
        return render_prompt(self.wanted)


def preview(eligible: list[LessonState], slots: int, context: Mapping[str, str], sigma: float, policy: Policy,
            rng: random.Random, draws: int) -> Preview:
    """Each eligible lesson's standing in `context`: the selection's draws repeated `draws` times
    with `rng` (never the engine's own source, so the next recall is unchanged), its coin and
    its evidence. Reads the states only."""
    from lamar.policy.choose import coin, ranked

    counts = {id(state): 0 for state in eligible}
    first: list[LessonState] = []
    for n in range(draws):
        wanted = [state for _, state in ranked(eligible, context, sigma, policy, rng)[:slots]]
        for state in wanted:
            counts[id(state)] += 1
        if n == 0:
            first = wanted
    order = {id(state): rank for rank, state in enumerate(first)}
    rows = []
    for state in sorted(eligible, key=lambda s: (order.get(id(s), len(order)), -counts[id(s)])):
        verdict, lower, upper = state.judge(policy)
        rows.append(PreviewLesson(
            experience=state.experience.copy(),
            wanted=id(state) in order,
            chance=counts[id(state)] / draws,
            cold=state.arms.cold(policy.warmup),
            estimate=state.slices.estimate(state.arms, context, sigma),
            holdout=coin(state, sigma, policy, context),
            verdict=verdict,
            lower=lower,
            upper=upper,
            randomized=state.ledger.n,
        ))
    return Preview(context=dict(context), k=slots, lessons=tuple(rows), draws=draws)


__all__ = ["Preview", "PreviewLesson", "preview"]
