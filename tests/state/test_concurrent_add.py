"""Processes that add the same lesson at once, as workers do when each adds its lessons at start:
one lesson comes of it, and every process is given its id."""

from __future__ import annotations

import dataclasses
import multiprocessing
from multiprocessing.synchronize import Barrier

from lamar import Experience, Lamar, Status
from tests.at_once import at_once

_WORKERS = 4
_ROUNDS = 6


def _add_at_once(location: str, text: str, barrier: Barrier, ids: multiprocessing.Queue[str]) -> None:
    lam = Lamar(location)
    barrier.wait()  # every process has read the lessons before any adds
    ids.put(lam.add(Experience(f"the build fails {text}", "clear the cache")))
    lam.close()


def test_workers_adding_the_same_lesson_at_once_get_one_lesson(store_location: str) -> None:
    Lamar(store_location).close()  # the store exists before the workers open it
    for round_ in range(_ROUNDS):
        text = f"in round {round_}"
        returned = set(at_once([(_add_at_once, (store_location, text))] * _WORKERS))
        lam = Lamar(store_location)
        copies = [exp for exp in lam.experiences() if exp.precondition.endswith(text)]
        active = [exp for exp in copies if exp.status is not Status.RETIRED]
        assert len(returned) == 1, f"round {round_}: the workers were given {len(returned)} ids"
        assert [exp.id for exp in active] == list(returned), f"round {round_}: {len(active)} active copies"
        for copy in copies:  # each later copy says which lesson it is a copy of
            if copy not in active:
                assert f"added at the same time as {active[0].id}" in lam.history(copy.id).trail[-1][1]
        # Adding it again later returns the same lesson, not a retired copy.
        assert lam.add(Experience(f"the build fails {text}", "clear the cache")) == active[0].id
        lam.close()


def test_a_file_added_again_names_the_lesson_not_its_retired_copy() -> None:
    from lamar.lesson_file import new_lessons, read_lessons

    first, copy = read_lessons("- When the build fails, clear the cache\n- When the build fails, clear the cache\n")
    copy = dataclasses.replace(copy, id="exp_copy", status=Status.RETIRED)
    first = dataclasses.replace(first, id="exp_first")
    _, held = new_lessons([first, copy], read_lessons("- When the build fails, clear the cache\n"))
    assert [h.by.id for h in held] == ["exp_first"]
