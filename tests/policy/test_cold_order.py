"""Among untried lessons, the one scoped to more of the context is tried first."""

from __future__ import annotations

import pytest

from lamar import Experience, Lamar, Scope


@pytest.mark.parametrize("seed", range(20))
def test_a_lesson_scoped_to_the_task_is_tried_before_project_wide_ones(seed: int) -> None:
    lam = Lamar(k=1, seed=seed)
    for n in range(18):
        lam.add(Experience(f"working on shop ({n})", f"keep rule {n}", scope=Scope(project="shop")))
    narrow = lam.add(Experience("a test fails", "run it alone with pytest -x",
                                scope=Scope(project="shop", task="tests_fail")))
    first = lam.recall({"project": "shop", "task": "tests_fail"})
    assert [e.id for e in first.experiences] == [narrow] or first.held_out == (narrow,)


def test_untried_lessons_of_one_breadth_keep_their_random_order() -> None:
    def firsts(seed: int) -> str:
        lam = Lamar(k=1, seed=seed, holdout=0.0)
        for n in range(6):
            lam.add(Experience(f"working on shop ({n})", f"keep rule {n}", scope=Scope(project="shop")))
        return lam.recall({"project": "shop"}).experiences[0].action

    assert len({firsts(seed) for seed in range(40)}) == 6
