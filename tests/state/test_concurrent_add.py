"""Processes that add the same lesson at once, as workers do when each adds its lessons at start:
one lesson comes of it, and every process is given its id."""

from __future__ import annotations

import dataclasses
import multiprocessing
import threading
import time
from multiprocessing.synchronize import Barrier
from typing import TYPE_CHECKING, Any

import pytest

from lamar import Experience, Lamar, Status
from lamar.state.cache import FoldCache
from lamar.store.base import folded_rows
from tests.at_once import at_once
from tests.state.seam import folded

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


def _add_distinct_at_once(location: str, worker: int, rounds: int, writes: str | None, barrier: Barrier,
                          ids: multiprocessing.Queue[list[str]]) -> None:
    from lamar.store.postgres import PostgresStore

    lam = Lamar(location if writes is None else PostgresStore(location, writes=writes))
    added = []
    for round_ in range(rounds):
        barrier.wait()  # every process adds its lesson of the round at the same moment
        added.append(lam.add(Experience(f"case {round_} of worker {worker}", f"do {round_}")))
    lam.close()
    ids.put(added)


def _ranks(lam: Lamar) -> dict[str, int]:
    """Each lesson's creation rank as the engine judges it: from the rows in PostgreSQL's fold mode,
    else from the engine's fold of the log."""
    rows = folded_rows(lam.store)
    if rows is not None:
        return {state.experience.id: state.rank for state in rows.lessons().states}
    return {exp_id: state.rank for exp_id, state in folded(lam).cache.lessons.items()}  # synced by `experiences`


def _assert_distinct_ranks_added_at_once(location: str, writes: str | None = None) -> None:
    """Processes add a lesson each at the same moment, round after round: every lesson has a rank of
    its own (a share of alpha no other lesson spends), and the log, folded again, gives each the same."""
    rounds = 12
    Lamar(location).close()
    added = [i for ids in at_once([(_add_distinct_at_once, (location, w, rounds, writes)) for w in range(_WORKERS)])
             for i in ids]
    lam = Lamar(location)
    try:
        assert len(lam.experiences()) == len(added) == _WORKERS * rounds
        served = _ranks(lam)
        assert sorted(served.values()) == list(range(1, len(added) + 1))
        replayed = FoldCache(lam.policy, lam.store.location)
        replayed.fold_log(lam.store.read(0))
        assert {i: s.rank for i, s in replayed.lessons.items()} == served  # what a build of the rows gives
        lam.rebuild()
        assert _ranks(lam) == served
    finally:
        lam.close()


def test_lessons_added_at_once_have_distinct_ranks_the_log_gives_them_again(store_location: str) -> None:
    _assert_distinct_ranks_added_at_once(store_location)


def test_adds_at_once_that_lock_their_rows_first_have_distinct_ranks_too(postgres_url: str) -> None:
    """PostgreSQL's fold mode with every write locking its rows before it reads them (`writes="locking"`,
    the path a write takes after its optimistic tries conflicted)."""
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("ranks")
    try:
        _assert_distinct_ranks_added_at_once(namespace_url(postgres_url, namespace, lamar_fold="on"), "locking")
    finally:
        drop_namespaces(postgres_url, namespace)


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

    from lamar.store.postgres import locks
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("same")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    lam = Lamar(url)
    lam.experiences()  # the rows built

    def copy_added(conn: psycopg.Connection[Any]) -> str:
        return _added(conn, url, namespace, Experience("the build fails", "clear the cache"))

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



def test_a_rebuild_keeps_the_lessons_in_the_order_they_were_added(postgres_url: str) -> None:
    """PostgreSQL's fold mode: two adds at once can take their places among the lessons in one
    order and in the log in the other. Built again from the log (a rebuild; an erasure, a replaced
    outcome or a tuning change builds them too), the lessons keep the order they were added in:
    an add of the same lesson returns the lesson, not its retired copy, and recall's order stays."""
    import psycopg

    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("order")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    lam = Lamar(url)
    lam.experiences()  # the rows built
    try:
        same = Experience("the build fails", "clear the cache")
        first, copy = _added_across(postgres_url, url, namespace, same, same)
        lam.retire(copy, f"added at the same time as {first}, the same lesson")  # as the add of the copy does
        other, another = _added_across(postgres_url, url, namespace, Experience("a test flakes", "rerun it alone"),
                                       Experience("the linter fails", "run the formatter"))
        with psycopg.connect(postgres_url) as conn:
            logged = [row[0] for row in conn.execute(
                "SELECT data::json->>'id' FROM lamar_events WHERE namespace = %s AND kind = 'experience' ORDER BY seq",
                (namespace,))]
        assert logged == [copy, first, another, other]
        added = [first, copy, other, another]
        assert [exp.id for exp in lam.experiences()] == added
        assert lam.add(same) == first
        lam.rebuild()
        assert lam.add(same) == first  # the lesson recall serves, where its evidence gathers
        assert [exp.id for exp in lam.experiences()] == added
        assert set(lam.preview({}).eligible) == {first, other, another}
        assert [exp.id for exp in Lamar(url).experiences()] == added  # as another engine reads them
        lam.erase(another)  # an erasure builds the rows again from the scrubbed log
        assert [exp.id for exp in lam.experiences()] == added
        assert lam.add(same) == first
    finally:
        lam.close()
        drop_namespaces(postgres_url, namespace)


def test_a_checkpoint_writes_the_lessons_in_the_order_they_were_added(postgres_url: str) -> None:
    """PostgreSQL's fold mode: two lessons added at once stand in one order in the rows and in the
    other in the log. A checkpoint's snapshot lists them in the rows' order, so that afterwards
    what reads the log itself (a copy of the store, an engine with the fold mode off, a rebuild)
    lists them as every fold-mode engine does."""
    from lamar.store.memory import MemoryStore
    from lamar.store.transfer import transfer
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("ckpt")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    lam = Lamar(url)
    try:
        before = lam.add(Experience("the deploy hangs", "restart the runner"))
        first, then = _added_across(postgres_url, url, namespace, Experience("a test flakes", "rerun it alone"),
                                    Experience("the linter fails", "run the formatter"))
        added = [before, first, then]
        assert [exp.id for exp in lam.experiences()] == added
        assert lam.checkpoint() is True
        copy = MemoryStore()
        transfer(lam.store, copy)  # what `lamar export` writes
        assert [exp.id for exp in Lamar(copy).experiences()] == added, "a copy of the store"
        with Lamar(namespace_url(postgres_url, namespace, lamar_fold="off")) as off:
            assert [exp.id for exp in off.experiences()] == added, "the fold mode off"
        lam.rebuild()
        assert [exp.id for exp in lam.experiences()] == added, "rebuilt"
        with Lamar(url) as again:
            assert [exp.id for exp in again.experiences()] == added, "another fold-mode engine"
    finally:
        lam.close()
        drop_namespaces(postgres_url, namespace)


def test_a_pair_added_at_once_after_a_checkpoint_differs_in_a_copy_only_in_its_order_until_the_next(
        postgres_url: str) -> None:
    """Left as documented (docs/postgres.md, "Adding the same lesson at once"): what reads the log itself
    lists such a pair in its events' order until the next checkpoint; the lessons, their statuses
    and the stats are the same."""
    from lamar.store.memory import MemoryStore
    from lamar.store.transfer import transfer
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace("ckpt")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    lam = Lamar(url)

    def copied() -> Lamar:
        copy = MemoryStore()
        transfer(lam.store, copy)  # what `lamar export` writes
        return Lamar(copy)

    try:
        before = lam.add(Experience("the deploy hangs", "restart the runner"))
        assert lam.checkpoint() is True
        first, then = _added_across(postgres_url, url, namespace, Experience("a test flakes", "rerun it alone"),
                                    Experience("the linter fails", "run the formatter"))
        lam.report(lam.recall({}).episode_id, "shipped")
        copy = copied()
        assert [exp.id for exp in lam.experiences()] == [before, first, then]
        assert [exp.id for exp in copy.experiences()] == [before, then, first]
        assert {e.id: e.status for e in copy.experiences()} == {e.id: e.status for e in lam.experiences()}
        where = {"events", "store"}  # the copy's own log and location
        assert {k: v for k, v in copy.stats().items() if k not in where} == {
            k: v for k, v in lam.stats().items() if k not in where}
        assert lam.checkpoint() is True
        assert [exp.id for exp in copied().experiences()] == [before, first, then]
    finally:
        lam.close()
        drop_namespaces(postgres_url, namespace)


def _added(conn: psycopg.Connection[Any], url: str, namespace: str, experience: Experience) -> str:
    """An add of a lesson through `lamar_write`, as an engine's add writes it; the caller commits."""
    from lamar.policy.lesson import LessonState
    from lamar.safety.boundary import admitted
    from lamar.store import Event
    from lamar.store.postgres import rows, wire
    from lamar.store.postgres.known import KnownRows

    exp = admitted(experience).with_identity()
    write = rows.empty_write(namespace)
    write.update(take_lock=True, active=1, added=KnownRows(url).rows_json([LessonState(exp, rank=1)]),
                 events=wire.events_json([Event("experience", exp.to_dict(), key=f"experience:{exp.id}")]))
    conn.execute(rows._WRITE_ONE, write)
    return exp.id


def _added_across(postgres_url: str, url: str, namespace: str, first: Experience, then: Experience) -> tuple[str, str]:
    """Add `first`, then `then`, in PostgreSQL's fold mode as two adds that do not take turns can (`_added`
    takes no add lock): `then`'s whole add runs after `first`'s row took its place among the lessons and
    before its event took its place in the log. Returns their ids: the rows list `first` first, the log
    `then` first."""
    import psycopg

    from lamar.store.postgres import rows

    def shard_of(conn: psycopg.Connection[Any]) -> tuple[int, int]:
        found = conn.execute("SELECT pg_backend_pid(), mod(pg_backend_pid(), %s)", (rows.SHARDS,)).fetchone()
        assert found is not None
        return found[0], found[1]

    with psycopg.connect(postgres_url) as blocker, psycopg.connect(postgres_url) as early, \
            psycopg.connect(postgres_url, autocommit=True) as watcher:
        pid, shard = shard_of(early)
        # `lamar_write` counts an added lesson in its connection's counter row after the row took
        # its place and before the event takes its own: that row held here stops `first`'s add
        # between the two.
        blocker.execute("INSERT INTO lamar_rewards AS s (namespace, shard, n, mean, m2, active) "
                        "VALUES (%s, %s, 0, 0, 0, 0) ON CONFLICT (namespace, shard) DO UPDATE SET n = s.n",
                        (namespace, shard))
        ids: list[str] = []
        adding = threading.Thread(target=lambda: (ids.append(_added(early, url, namespace, first)), early.commit()))
        adding.start()
        try:
            while watcher.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                                  (pid,)).fetchone() != ("Lock",):
                time.sleep(0.01)  # a look at the server, not a guess at how long the add takes
            later = psycopg.connect(postgres_url, autocommit=True)
            while shard_of(later)[1] == shard:  # its counter row would wait behind the blocker too
                later.close()
                later = psycopg.connect(postgres_url, autocommit=True)
            with later:
                second = _added(later, url, namespace, then)
        finally:
            blocker.rollback()
            adding.join()
    return ids[0], second
