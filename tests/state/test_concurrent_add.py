"""Processes that add the same lesson at once, as workers do when each adds its lessons at start:
one lesson comes of it, and every process is given its id."""

from __future__ import annotations

import dataclasses
import multiprocessing
import threading
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING, Any

import pytest

from lamar import Experience, Lamar, Status
from tests.at_once import at_once

if TYPE_CHECKING:
    import psycopg

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


def test_an_add_that_finds_a_copy_waits_for_an_earlier_copy_still_committing(postgres_url: str,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL's fold mode: adds commit out of the order they took their place in. A copy
    added first is still committing, one added after it has committed; an add that finds the
    later copy waits for the first, and returns its id, as the adds of both copies do."""
    import psycopg

    from lamar.policy.lesson import LessonState
    from lamar.safety.boundary import admitted
    from lamar.store import Event
    from lamar.store.postgres import connection, locks, rows
    from lamar.store.postgres.known import KnownRows
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("same")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    lam = Lamar(url)
    lam.experiences()  # the rows built

    def copy_added(conn: psycopg.Connection[Any]) -> str:
        """An add of the lesson through `lamar_write`, as an engine's add writes it."""
        exp = admitted(Experience("the build fails", "clear the cache")).with_identity()
        write = rows.empty_write(namespace)
        write.update(take_lock=True, active=1, added=KnownRows(url).rows_json([LessonState(exp, rank=1)]),
                     events=connection.events_json([Event("experience", exp.to_dict(), key=f"experience:{exp.id}")]))
        conn.execute(rows._WRITE_ONE, write)
        return exp.id

    try:
        with psycopg.connect(postgres_url) as first_conn, psycopg.connect(postgres_url, autocommit=True) as later:
            first = copy_added(first_conn)  # its place taken, its transaction left open
            second = copy_added(later)  # committed
            # A wait long enough that a stall of a loaded machine cannot pass for waiting it out.
            monkeypatch.setattr(locks, "_SETTLE_WAIT", 30.0)
            commit = threading.Timer(0.3, first_conn.commit)  # commits while the add waits for it
            commit.start()
            returned = lam.add(Experience("the build fails", "clear the cache"))
            commit.join()
            assert returned == first
        assert [exp.id for exp in lam.experiences()] == [first, second]  # it stored no third copy
    finally:
        lam.close()
        drop_namespaces(postgres_url, namespace)
