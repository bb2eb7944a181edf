"""Choosing: which eligible lessons a recall injects, which it holds out, and every coin's probability."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

from lamar.policy.config import Policy
from lamar.policy.lesson import LessonState
from lamar.policy.verdicts import LAMBDAS, Verdict

# Where randomization is spent (docs/decisions.md, "Value of information"): a verdict is worth
# buying when the bound is expected to reach it within REACH times the lesson's eligible episodes
# so far (a store's future, forecast by its past); a verdict already decided keeps a coin of
# DECIDED times `holdout`. NEEDED is the bound's own arithmetic, fitted to `lamar.audit.physics`:
# about NEEDED log(6 / alpha) sigma^2 / (lift^2 q (1 - q)) randomized episodes for 80% power.
REACH = 4.0
DECIDED = 0.25
NEEDED = 3.0


def choose(eligible: list[LessonState], slots: int, ctx: Mapping[str, str] | None, sigma: float, n: int,
           policy: Policy, rng: random.Random) -> tuple[list[LessonState], list[str], dict[str, float]]:
    """Thompson sampling in this context, then one evidence coin per wanted lesson. Returns
    (injected, held-out ids, each eligible lesson's inclusion probability).

    The wanted lessons are the (at most `slots`) highest positive draws; cold lessons draw +inf
    and come first, in random order. Each wanted lesson is held out with its own probability
    (`coin`), and its slot stays empty, so the coins are independent and each lesson's two arms
    differ by that lesson alone. Every probability is
    known before its coin is flipped and logged in `p` (docs/decisions.md, "The evidence coin").
    `sigma` is the reward spread; `n` is not read (alpha is each lesson's own).
    """
    context = ctx or {}
    p = {state.experience.id: 0.0 for state in eligible}
    chosen, held = [], []
    for _, state in ranked(eligible, context, sigma, policy, rng)[:slots]:
        q = coin(state, sigma, policy, context)
        p[state.experience.id] = 1.0 - q
        if q > 0.0 and rng.random() < q:
            held.append(state.experience.id)
        else:
            chosen.append(state)
    return chosen, held, p


def ranked(eligible: list[LessonState], context: Mapping[str, str], sigma: float, policy: Policy,
           rng: random.Random) -> list[tuple[float, LessonState]]:
    """The lessons whose Thompson draw in `context` is positive, with their draws, best first
    (cold lessons draw +inf; among ties the lesson whose scope names more of the context first, then
    random order): a recall wants the first `slots` of them."""
    rows = []
    for state in eligible:
        draw = state.slices.sample(state.arms, context, sigma, policy.explore, policy.warmup, rng)
        if draw > 0.0:  # a NaN draw is not wanted either
            # A lesson scoped to this task is eligible only where its condition holds, while one scoped to the
            # whole project competes everywhere: among untried lessons, the narrower gets its tries first.
            rows.append((draw, len(state.experience.scope), rng.random(), state))
    rows.sort(key=lambda row: (row[0], row[1], row[2]), reverse=True)
    return [(draw, state) for draw, _, _, state in rows]


def coin(state: LessonState, sigma: float, policy: Policy, context: Mapping[str, str] | None = None) -> float:
    """The chance that this wanted lesson is held out: `holdout` while its verdict is undecided and
    within reach, a quarter of it once decided, none when out of reach (predictable: it reads only
    what was folded before this recall). Reach is judged at the lift estimated in this context, so
    a lesson that helps in one language and hurts in another is randomized where its slices can
    be told apart."""
    q = policy.holdout
    if q <= 0.0:
        return 0.0
    verdict, _, _ = state.judge(policy)
    if verdict is not Verdict.UNKNOWN:
        return q * DECIDED
    arms = state.arms
    if arms.cold(policy.warmup):
        return q
    lift = state.slices.estimate(arms, context or {}, sigma)
    if lift == 0.0:
        return 0.0
    helps, harms = state.alphas(policy)
    level = math.log(len(LAMBDAS) / (helps if lift > 0.0 else harms))
    needed = NEEDED * level * sigma * sigma / (lift * lift * q * (1.0 - q))
    return q if needed <= state.ledger.n + REACH * state.eligible else 0.0


__all__ = ["choose", "coin", "ranked"]
