"""Choosing: which eligible lessons a recall injects, which it holds out, and every coin's probability."""

from __future__ import annotations

import random
from collections.abc import Mapping

from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState


def choose(eligible: list[LessonState], slots: int, ctx: Mapping[str, str] | None, sigma: float, n: int,
           policy: Policy, rng: random.Random) -> tuple[list[LessonState], list[str], dict[str, float]]:
    """Thompson sampling in this context, then one evidence coin per wanted lesson. Returns
    (injected, held-out ids, each eligible lesson's inclusion probability).

    The wanted lessons are the (at most `slots`) highest positive draws; cold lessons draw +inf
    and come first, in random order. Each wanted lesson is held out with probability
    `policy.holdout`, whatever its verdict, and its slot stays empty, so the coins are
    independent and each lesson's two arms differ by that lesson alone. Every probability is
    known before its coin is flipped and logged in `p` (docs/decisions.md, "The evidence coin").
    `sigma` is the reward spread; `n` is not read (alpha is each lesson's own).
    """
    context = ctx or {}
    ranked = []
    for state in eligible:
        draw = state.slices.sample(state.arms, context, sigma, policy.explore, policy.warmup, rng)
        if draw > 0.0:  # a NaN draw is not wanted either
            ranked.append((draw, rng.random(), state))
    ranked.sort(key=lambda row: (row[0], row[1]), reverse=True)
    p = {state.experience.id: 0.0 for state in eligible}
    q = policy.holdout
    chosen, held = [], []
    for _, _, state in ranked[:slots]:
        p[state.experience.id] = 1.0 - q
        if q > 0.0 and rng.random() < q:
            held.append(state.experience.id)
        else:
            chosen.append(state)
    return chosen, held, p


__all__ = ["choose"]
