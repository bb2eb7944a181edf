"""The gym's world and baselines: fair by construction, reproducible from the seed."""

from __future__ import annotations

import pytest

from lamar import Signal
from lamar.gym.policies import POLICIES, QValue, Similarity, make_policy
from lamar.gym.retrieval import BM25, context_query
from lamar.gym.world import LESSONS_PER_TASK, TASKS, Kind, World, context_of


def test_each_task_holds_one_helpful_one_harmful_four_inert_lessons_and_one_task_the_fossil() -> None:
    world = World(seed=5, episodes=1000)
    for task in range(len(TASKS)):
        kinds = sorted(lesson.kind.value for lesson in world.lessons if lesson.task == task)
        helpful = "fossil" if task == world.fossil_task else "true"
        assert kinds == sorted(["false", helpful] + ["inert"] * (LESSONS_PER_TASK - 2))
        preconditions = {lesson.precondition for lesson in world.lessons if lesson.task == task}
        assert len(preconditions) == 1  # equally relevant: the same wording
    assert world.lessons[world.fossil].kind is Kind.FOSSIL


def test_the_fossil_flips_from_help_to_harm_at_half_and_nothing_else_changes() -> None:
    world = World(seed=2, episodes=1000, help_effect=0.2, hurt_effect=0.15)
    assert world.effect(world.fossil, 499) == 0.2
    assert world.effect(world.fossil, 500) == -0.15
    for lesson in world.lessons:
        if lesson.kind is not Kind.FOSSIL:
            assert world.effect(lesson.index, 0) == world.effect(lesson.index, 999)


def test_the_worlds_coins_depend_only_on_the_seed() -> None:
    a, b, c = World(7, 2000), World(7, 2000), World(8, 2000)
    assert (a.tasks, a.coins, a.signal_coins) == (b.tasks, b.coins, b.signal_coins)
    assert a.fossil_task == b.fossil_task
    assert a.coins != c.coins
    assert [lesson.kind for lesson in a.lessons] == [lesson.kind for lesson in b.lessons]


def test_outcomes_follow_the_coin_and_the_fixed_signal_proportions() -> None:
    world = World(seed=11, episodes=20000, base=0.4)
    signals = [world.outcome(t, []) for t in range(world.episodes)]
    success = sum(s.success for s in signals) / len(signals)
    assert success == pytest.approx(0.4, abs=0.015)
    wins = [s for s in signals if s.success]
    losses = [s for s in signals if not s.success]
    assert wins.count(Signal.SHIPPED) / len(wins) == pytest.approx(0.5, abs=0.03)
    for kind in (Signal.REVERTED, Signal.CORRECTED, Signal.REASKED):
        assert losses.count(kind) / len(losses) == pytest.approx(1 / 3, abs=0.03)
    helpful = next(lesson.index for lesson in world.lessons if lesson.kind is Kind.TRUE)
    assert world.success_probability(0, [helpful, helpful, helpful, helpful]) == 1.0  # clipped


def test_bm25_finds_a_tasks_six_lessons_exactly_tied_and_nothing_else() -> None:
    world = World(seed=0, episodes=100)
    bm25 = BM25([f"{lesson.precondition} {lesson.action}" for lesson in world.lessons])
    for task in range(len(TASKS)):
        scores = bm25.scores(context_query(context_of(task)))
        own = {scores[lesson.index] for lesson in world.lessons if lesson.task == task}
        others = {scores[lesson.index] for lesson in world.lessons if lesson.task != task}
        assert len(own) == 1 and own.pop() > 0.0
        assert others == {0.0}


def test_similarity_picks_at_random_among_the_tied_lessons() -> None:
    world = World(seed=1, episodes=100)
    policy = Similarity(world, k=2, seed=1)
    picked = [tuple(policy.choose(0, 0)[0]) for _ in range(600)]
    counts = {i: sum(i in pair for pair in picked) for i in range(LESSONS_PER_TASK)}
    assert all(len(set(pair)) == 2 for pair in picked)
    assert all(150 <= n <= 250 for n in counts.values())  # 2/6 of 600 = 200 each


def test_qvalue_is_greedy_on_the_moving_average_of_shared_reward() -> None:
    world = World(seed=1, episodes=100)
    policy = QValue(world, k=1, seed=3)
    first = policy.choose(0, 0)[0]
    policy.learn(Signal.SHIPPED, policy.ticket)
    assert policy.q[first[0]] == pytest.approx(0.1)  # 0 + 0.1 * (1.0 - 0)
    assert all(policy.choose(t, 0)[0] == first for t in range(1, 20))  # no exploration once ahead


def test_the_oracle_injects_only_what_helps_now() -> None:
    world = World(seed=4, episodes=1000)
    oracle = make_policy("oracle", world, k=2, seed=4)
    before, _ = oracle.choose(0, world.fossil_task)
    after, _ = oracle.choose(999, world.fossil_task)
    assert before == [world.fossil] and after == []


def test_an_unknown_policy_name_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="qvalue"):
        make_policy("bandit", World(0, 100), k=2, seed=0)
    assert set(POLICIES) == {"none", "similarity", "qvalue", "lamar", "oracle"}
