"""The second design's choosing (holdout coins, exposure rounds), frozen for the gym's frontier."""

from __future__ import annotations

import random
from collections.abc import Mapping

from lamar.gym.v2.config import Policy
from lamar.gym.v2.lesson import LessonState
from lamar.policy.verdicts import Verdict


def choose(eligible: list[LessonState], slots: int, ctx: Mapping[str, str] | None, sigma: float, n: int,
           policy: Policy, rng: random.Random) -> tuple[list[LessonState], list[str], dict[str, float]]:
    """Rank by the optimistic bound in this context, flip each wanted lesson's holdout coin, maybe
    run an exposure round. Returns (injected, held-out ids, each eligible lesson's inclusion probability).

    Every coin's probability is known before it is flipped and logged in `p`, so each
    lesson's evidence stays unbiased (docs/decisions.md, "Harm must be provable").
    `sigma` is the reward spread and `n` the verdicts' lesson divisor.
    """
    ranked = []
    exposable: list[LessonState] = []
    retest: list[LessonState] = []
    contested: list[LessonState] = []
    for state in eligible:
        context = ctx or {}
        upper = state.slices.upper(state.arms, context, sigma, policy.explore, policy.warmup)
        if upper <= 0.0:
            # Not wanted here. Its verdict is only as good as its randomized episodes, and the
            # selector no longer gives it any: a lesson judged harms gets rare re-tests (harms
            # stays revisable); any other gets exposure rounds, so that a suspected harm can be
            # proven and a helps verdict the selector now contradicts (a fossil, or a fall of
            # the base rate) can be re-tested, up to `harm_budget` randomized episodes unless
            # it still claims helps (docs/decisions.md, "Harm must be provable").
            verdict = state.judge(policy, n)[0]
            if verdict is Verdict.HARMS:
                retest.append(state)
            elif verdict is Verdict.HELPS or state.in_doubt():
                # A claim in force that nothing tests any more, or one withdrawn on doubt that
                # only fresh randomized episodes can give back or prove changed: first.
                contested.append(state)
            elif state.ledger.n < policy.harm_budget:
                exposable.append(state)
            continue
        if upper > 0.0:  # a NaN bound is neither wanted nor exposed
            ranked.append((upper, rng.random(), state))
    ranked.sort(key=lambda row: (row[0], row[1]), reverse=True)
    wanted = [state for _, _, state in ranked[:slots]]
    p = {state.experience.id: 0.0 for state in eligible}
    exposed, vacated = _exposure_round(contested or exposable, retest, wanted, slots, p, policy, rng)
    chosen, held = [], []
    for state in wanted:
        if state is vacated:
            held.append(state.experience.id)  # out by the round's coin: p stays 0 (no evidence)
            continue
        q = policy.holdout
        if state.ledger.mean > 0.0 and state.judge(policy, n)[1] > 0.0:  # proven, or withdrawn on doubt
            doubt = state.detector
            watch = doubt.doubted or doubt.doubt > policy.doubt_holdout or state.arms.suspected
            q = policy.holdout_doubt if watch else policy.holdout_proven
        p[state.experience.id] = 1.0 - q
        if rng.random() < q:
            held.append(state.experience.id)  # its slot stays empty: coins stay independent
        else:
            chosen.append(state)
    if exposed is not None:
        chosen.append(exposed)
    return chosen, held, p


def _exposure_round(exposable: list[LessonState], retest: list[LessonState], wanted: list[LessonState],
                    slots: int, p: dict[str, float], policy: Policy,
                    rng: random.Random) -> tuple[LessonState | None, LessonState | None]:
    """Maybe spend this episode proving (or re-testing) harm: returns (exposed, vacated).

    A round happens with probability `harm_exposure` (or `harm_retest` for lessons judged
    harms) and tests one candidate picked at random, injected on a fair coin into a free
    slot or, if none, the slot of the lowest-ranked wanted lesson, vacated whatever the coin
    says. The candidate's two arms then differ by the candidate alone; the vacated lesson
    gets p = 0 for the episode (its absence was not its coin), so no lesson's evidence
    carries another's effect.
    """
    if not slots or not (exposable or retest):
        return None, None
    pool = exposable if exposable and rng.random() < policy.harm_exposure else None
    if pool is None and retest and rng.random() < policy.harm_retest:
        pool = retest
    if pool is None:
        return None, None
    candidate = pool[rng.randrange(len(pool))]
    vacated = wanted[-1] if len(wanted) == slots else None
    p[candidate.experience.id] = 0.5
    return (candidate if rng.random() < 0.5 else None), vacated


__all__ = ["choose"]
