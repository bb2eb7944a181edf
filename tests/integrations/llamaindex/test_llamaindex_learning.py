"""A short seeded gym through a real query engine: outcomes beat similarity."""

from __future__ import annotations

import random

from llama_index.core import VectorStoreIndex

from lamar import Experience, Lamar, Scope, Signal
from lamar_llamaindex import (
    LamarPostprocessor,
    experience_id_of,
    lessons_to_nodes,
    report_response,
    track_episodes,
)

QUERY = "the flaky test suite fails on CI"
CONTEXT = {"project": "shop"}
BASE, EFFECT = 0.5, 0.35  # success chance without lessons, and what each lesson moves it by


def outcome(rng: random.Random, chosen: set[str], helpful: str, harmful: str) -> Signal:
    """The simulated user: ships more often with the helpful lesson, reverts more with the harmful."""
    p = BASE + EFFECT * (helpful in chosen) - EFFECT * (harmful in chosen)
    return Signal.SHIPPED if rng.random() < p else Signal.REVERTED


def test_helpful_lesson_beats_a_more_similar_harmful_one(bag_of_words: object) -> None:
    lam = Lamar(":memory:", k=1, seed=7)
    helpful = lam.add(Experience("tests fail only sometimes",
                                 "run each failing test alone to find leaked shared state",
                                 scope=Scope(project="shop")))
    harmful = lam.add(Experience("the flaky test suite fails on CI",
                                 "retry the flaky test suite on CI until it passes",
                                 scope=Scope(project="shop")))
    index = VectorStoreIndex(lessons_to_nodes(lam))

    # Similarity alone prefers the harmful lesson: it repeats the query's words.
    by_similarity = index.as_retriever(similarity_top_k=2).retrieve(QUERY)
    assert [experience_id_of(n) for n in by_similarity] == [harmful, helpful]
    assert by_similarity[0].score > by_similarity[1].score  # type: ignore[operator]

    post = LamarPostprocessor(lam, top_n=1, context=CONTEXT)
    query_engine = index.as_query_engine(similarity_top_k=2, node_postprocessors=[post])
    rng = random.Random(7)
    invisible = 0  # episodes whose response carries no episode id (every wanted lesson held out)
    for _ in range(40):
        with track_episodes() as log:
            response = query_engine.query(QUERY)
        chosen = {experience_id_of(n) for n in response.source_nodes}
        invisible += not response.source_nodes
        assert report_response(lam, log, outcome(rng, chosen, helpful, harmful)) == [post.last_episode_id]
    assert invisible > 0  # the control group exists, and only the log could report it

    picks = {helpful: 0, harmful: 0, None: 0}
    for _ in range(30):
        response = query_engine.query(QUERY)
        chosen = {experience_id_of(n) for n in response.source_nodes}
        picks[next(iter(chosen)) if chosen else None] += 1
        lam.report(post.last_episode_id, outcome(rng, chosen, helpful, harmful))

    # The harmful lesson still appears in exposure rounds (a logged fair coin in 30% of episodes
    # while its harm is unproven, docs/decisions.md): 4 of 30 here, where it was 0 or 1 before
    # harm had to be provable.
    assert picks[harmful] <= 6
    assert picks[helpful] >= 18  # the rest are holdout coins: the price of measuring it
    assert lam.evidence(helpful).lift > 0


async def test_async_loop_learns_the_same_preference(bag_of_words: object) -> None:
    lam = Lamar(":memory:", k=1, seed=3)
    helpful = lam.add(Experience("tests fail only sometimes", "run each failing test alone",
                                 scope=Scope(project="shop")))
    harmful = lam.add(Experience("the flaky test suite fails on CI", "retry the flaky suite on CI",
                                 scope=Scope(project="shop")))
    post = LamarPostprocessor(lam, top_n=1, context=CONTEXT)
    query_engine = VectorStoreIndex(lessons_to_nodes(lam)).as_query_engine(similarity_top_k=2,
                                                                           node_postprocessors=[post])
    rng = random.Random(3)
    late = {helpful: 0, harmful: 0}
    for step in range(60):
        with track_episodes() as log:
            response = await query_engine.aquery(QUERY)
        chosen = {experience_id_of(n) for n in response.source_nodes}
        for lesson in chosen & set(late):
            late[lesson] += step >= 30  # type: ignore[index]
        await lam.areport(log.last, outcome(rng, chosen, helpful, harmful))  # type: ignore[arg-type]

    assert late[harmful] <= 6  # exposure rounds while its harm is unproven (5 measured)
    assert late[helpful] >= 18
