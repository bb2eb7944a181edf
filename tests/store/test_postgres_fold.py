"""The fold mode of PostgresStore (lamar_fold=on): PostgreSQL holds every lesson's folded state.

The conformance suite again in this mode, then what the mode promises: the rows equal a replay
of the log in-process (exactly), writers on different lessons never wait for each other, the
namespace's counter row is not on the write path, and what the rows cannot fold is rebuilt.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from typing import Any, ClassVar

import psycopg
import pytest

from lamar import CorruptStore, DuplicateReport, Experience, Lamar, Scope, Signal
from lamar.policy import fold
from lamar.state.erasure import scrubbed
from lamar.store import Event
from lamar.store.postgres import PostgresStore, inbox, known, locks, wire
from lamar.store.postgres import rows as fold_rows
from lamar.store.postgres.rows import OPTIMISTIC_TRIES
from tests.state.seam import folded
from tests.store import test_postgres
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


class TestPostgresFoldStore(test_postgres.TestPostgresStore):
    mode: ClassVar[dict[str, str]] = {"lamar_fold": "on"}

    def test_the_suite_runs_in_the_fold_mode(self) -> None:
        self.assertIsNotNone(self.opened().rows)  # an empty `mode` here would run the log mode again


def _rows(url: str) -> dict[str, dict[str, Any]]:
    store = PostgresStore(url)
    assert store.rows is not None
    view = store.rows.lessons()
    store.close()
    return {s.experience.id: _decisive(s) for s in view.states}


def _decisive(state):
    """What the rows hold: the state without its history (drawn from a fold of the log)."""
    return {k: v for k, v in state.to_dict().items() if k != "history"}


def _replayed(url: str) -> Lamar:
    """The in-process engine folding the same log (the log mode reads; it writes nothing here)."""
    return Lamar(url + "&lamar_fold=off", k=2, seed=0)


def _assert_rows_are_the_replay(url: str, ids: list[str], *engines: Lamar) -> None:
    """The rows of `ids` equal the in-process fold of the log; then every engine is closed."""
    replay = _replayed(url)
    assert _rows(url) == {i: _decisive(folded(replay).lesson(i)) for i in ids}
    replay.close()
    for lam in engines:
        lam.close()


# -- the rows are the fold of the log ---------------------------------------------------------


def test_the_rows_equal_an_in_process_replay_of_the_log_exactly(fold_url: str) -> None:
    """3 engines in threads, 3 000 episodes over 6 lessons in 3 scope shapes, with a retire and a
    revive, a narrowed scope, a merge, a replaced outcome and a refused duplicate: every lesson's
    row equals the in-process fold of the log in seq order, and so does every verdict and bound."""
    setup = Lamar(fold_url, k=2, seed=1)
    scopes = [Scope(), Scope(task="a"), Scope(task="a"), Scope(task="b"), Scope(task="b", lang="py"), Scope(task="a")]
    effect = [0.0, 0.7, -0.7, 0.4, -0.5, 0.0]
    ids = [setup.add(Experience(f"case {i}", f"do {i}", scope=s)) for i, s in enumerate(scopes)]
    gain = dict(zip(ids, effect, strict=True))
    reported: list[str] = []

    def agent(seed: int, episodes: int) -> None:
        lam = Lamar(fold_url, k=2, seed=seed)
        rng = random.Random(seed)
        for n in range(episodes):
            ctx = {"task": rng.choice("ab"), "lang": rng.choice(["py", "go"])}
            rec = lam.recall(ctx)
            reward = 0.1 + sum(gain[i] for i in rec.ids) + rng.gauss(0.0, 0.3)
            lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
            if n % 97 == 0:
                reported.append(rec.episode_id)
        lam.close()

    def run(episodes: int) -> None:
        threads = [threading.Thread(target=agent, args=(seed, episodes)) for seed in (11, 12, 13)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    run(400)
    setup.retire(ids[3])
    setup.store.append([Event("scope", {"id": ids[0], "key": "lang", "value": "py"})])
    run(300)
    setup.revive(ids[3])
    setup.store.append([Event("merge", {"into": ids[1], "from": [ids[5]]})])
    with pytest.raises(DuplicateReport):
        setup.report(reported[0], Signal.SHIPPED)
    setup.report(reported[1], -1.0, replace=True)  # the rows cannot unfold it: built again from the log
    run(300)

    rows = _rows(fold_url)
    replay = _replayed(fold_url)
    assert replay.stats()["episodes"] == 3000 and replay.stats()["reports"] == 3000
    assert rows == {i: _decisive(folded(replay).lesson(i)) for i in ids}
    ours = {i: setup.evidence(i) for i in ids}
    assert ours == {i: replay.evidence(i) for i in ids}
    verdicts = {e.verdict.value for e in ours.values()}
    assert verdicts & {"helps", "harms"}, ours  # the comparison covers decided verdicts too
    assert rows[ids[5]]["experience"]["status"] == "retired" and rows[ids[0]]["experience"]["scope"] == {"lang": "py"}
    replay.close()
    setup.close()


def test_concurrent_reports_on_the_same_lessons_lose_no_fold(fold_url: str) -> None:
    """Every report folds into the same 3 rows, so the writers queue on their locks; a row
    updated while a writer waited is still folded (a semi-join in the locking query once
    dropped such rows: half the folds went missing)."""
    setup = Lamar(fold_url, k=2, seed=1)
    ids = [setup.add(Experience(f"case {i}", f"do {i}")) for i in range(3)]
    errors: list[BaseException] = []

    def agent(seed: int) -> None:
        try:
            lam = Lamar(fold_url, k=2, seed=seed)
            rng = random.Random(seed)
            for _ in range(100):
                lam.report(lam.recall({"task": "x"}).episode_id, rng.uniform(-1.0, 1.0))
            lam.close()
        except BaseException as exc:  # noqa: BLE001 - shown by the assert
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [setup.evidence(i).eligible for i in ids] == [400, 400, 400]
    replay = _replayed(fold_url)
    assert _rows(fold_url) == {i: _decisive(folded(replay).lesson(i)) for i in ids}
    replay.close()
    setup.close()


@pytest.mark.parametrize("size", [0, 1, 3, 8, 9, 11], ids=lambda n: f"{n}-items")
def test_a_recall_finds_the_lessons_whose_scope_its_context_contains(fold_url: str, size: int) -> None:
    """By the scope index, one probe per subset of the context (up to 8 items: 256 subsets), and
    row by row above that: either way the lessons the in-process engine finds."""
    from lamar.store.memory import MemoryStore

    scopes = [{}, {"k0": "a"}, {"k0": "b"}, {"k0": "a", "k1": "a"}, {"k1": "a"}, {"k7": "a", "k8": "a"},
              {"k2": "a", "k10": "a"}, {"k0": "a", "k3": "a", "k5": "a", "k9": "a"}, {"other": "x"}]
    engines = [Lamar(fold_url, k=2, seed=1), Lamar(MemoryStore(), k=2, seed=1)]
    for n, scope in enumerate(scopes):
        for lam in engines:
            lam.add(Experience(f"case {n}", f"do {n}", scope=Scope(scope), id=f"lesson-{n}"))
    for lam in engines:
        lam.retire("lesson-1")  # a retired lesson is never eligible
    context = {f"k{i}": "a" for i in range(size)}
    fold_mode, in_process = (lam.recall(context).eligible for lam in engines)
    assert sorted(fold_mode) == sorted(in_process) and "lesson-0" in fold_mode and "lesson-1" not in fold_mode
    assert list(fold_mode) == sorted(fold_mode, key=lambda i: int(i.split("-")[1]))  # in the order they were added
    assert ("lesson-5" in fold_mode) is (size >= 9)
    for lam in engines:
        lam.close()


def test_each_outcome_names_the_spread_and_divisor_its_fold_used(fold_url: str) -> None:
    lam = Lamar(fold_url, k=2, seed=2)
    for i in range(3):
        lam.add(Experience(f"case {i}", f"do {i}"))
    for _ in range(5):
        lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    folds = [e.data["fold"] for e in lam.store.read() if e.kind == "outcome"]
    assert [f["active"] for f in folds] == [3] * 5
    assert folds[0]["sigma"] > folds[-1]["sigma"] > 0.0  # equal rewards: the spread shrinks from the prior
    lam.close()


def test_a_report_after_its_recall_folds_the_rows_the_recall_read(fold_url: str) -> None:
    """No read of its own: one message, once the store has seen that its rows stay as its recalls
    read them (its first report reads, and finds them unmoved). The rows are still the log's
    fold, and its outcome names the spread of the recall's read with this reward added, and the
    recall's divisor."""
    lam = Lamar(fold_url, k=2, seed=2)
    ids = [lam.add(Experience(f"case {i}", f"do {i}")) for i in range(3)]
    rows = lam.store.rows  # type: ignore[attr-defined]
    for signal in (Signal.SHIPPED, Signal.REVERTED, Signal.ACCEPTED):
        lam.report(lam.recall({"task": "x"}).episode_id, signal)
    assert (rows.counters.reread, rows.counters.unread, rows.counters.conflicts) == (1, 2, 0)
    rewards = [e.data["reward"] for e in lam.store.read() if e.kind == "outcome"]
    mean = sum(rewards) / 3
    last = [e for e in lam.store.read() if e.kind == "outcome"][-1].data["fold"]
    assert last == {"sigma": pytest.approx(fold.spread(3, sum((r - mean) ** 2 for r in rewards))), "active": 3}
    _assert_rows_are_the_replay(fold_url, ids, lam)


def test_a_report_whose_rows_moved_since_its_recall_reads_them_and_folds_again(fold_url: str) -> None:
    setup, ids = _shared_lessons(fold_url)
    first, other = Lamar(fold_url, k=2, seed=4), Lamar(fold_url, k=2, seed=5)
    rows = _rows_of(first)
    rows._saved = 0.0  # as after reports that a read of their own did not help: the next is folded from its recall
    episode = first.recall({"task": "x"}).episode_id
    other.report(other.recall({"task": "x"}).episode_id, -1.0)  # folds into the same rows meanwhile
    first.report(episode, 1.0)
    assert (rows.counters.unread, rows.counters.conflicts, rows.counters.locked) == (0, 1, 0)
    assert [setup.evidence(i).eligible for i in ids] == [2, 2, 2]
    first.report(first.recall({"task": "x"}).episode_id, 1.0)
    assert rows.counters.unread == 1  # the next report is folded from its recall again
    _assert_rows_are_the_replay(fold_url, ids, first, other, setup)


def test_a_store_whose_rows_move_during_its_turns_reads_before_it_reports(fold_url: str) -> None:
    """Each report learns whether a read of its own saved it a queuing: its rows moved since its
    recall's read, and no other report waited on them. While that is so, a report reads first
    (two messages) rather than write from its recall's read, conflict and be queued (four here);
    once the rows stay still again, reports go back to their recall's read (one message)."""
    setup, ids = _shared_lessons(fold_url)
    first, other = Lamar(fold_url, k=2, seed=4), Lamar(fold_url, k=2, seed=5)
    rows = _rows_of(first)

    def turn(moved: bool) -> tuple[int, int, int, int]:
        episode = first.recall({"task": "x"}).episode_id
        if moved:  # another agent reports on the same lessons while this one takes its turn
            other.report(other.recall({"task": "x"}).episode_id, -1.0)
        first.report(episode, 1.0)
        return rows.counters.reread, rows.counters.unread, rows.counters.conflicts, rows.counters.queued

    assert turn(False) == (1, 0, 0, 0)  # a new store reads first, and finds its rows unmoved
    assert turn(False) == (1, 1, 0, 0)  # so the next report writes from its recall's read
    assert turn(True) == (1, 1, 1, 1)  # a turn during which they moved: a conflict, queued, folded alone
    assert [turn(True) for _ in range(3)] == [(2, 1, 1, 1), (3, 1, 1, 1), (4, 1, 1, 1)]  # read first
    quiet = [turn(False) for _ in range(4)]  # still again: each read finds the rows as recalled
    assert quiet == [(5, 1, 1, 1), (6, 1, 1, 1), (7, 1, 1, 1), (7, 2, 1, 1)]
    assert [setup.evidence(i).eligible for i in ids] == [14, 14, 14]
    _assert_rows_are_the_replay(fold_url, ids, first, other, setup)


def test_a_report_folded_from_its_recall_whose_answer_is_lost_is_found_by_its_key(postgres_url: str) -> None:
    namespace = unique_namespace("fold")
    proxy = test_postgres.DroppingProxy()
    url = test_postgres._through(proxy, postgres_url, namespace, "on")
    try:
        lam = Lamar(url, k=2, seed=2)
        ids = [lam.add(Experience(f"case {i}", f"do {i}")) for i in range(2)]
        _rows_of(lam)._saved = 0.0  # its rows stay as recalled: a report is folded from its recall's read
        episode = lam.recall({"task": "x"}).episode_id
        proxy.cuts, sent = ["after"], proxy.commits_sent
        lam.report(episode, Signal.SHIPPED)
        assert proxy.commits_sent == sent + 1 and _rows_of(lam).counters.unread == 1
        assert [lam.evidence(i).eligible for i in ids] == [1, 1]
        _assert_rows_are_the_replay(namespace_url(postgres_url, namespace) + "&lamar_fold=on", ids, lam)
    finally:
        proxy.close()
        drop_namespaces(postgres_url, namespace)


def test_a_recall_read_too_long_ago_is_read_again(fold_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lam = Lamar(fold_url, k=2, seed=2)
    ids = [lam.add(Experience(f"case {i}", f"do {i}")) for i in range(2)]
    _rows_of(lam)._saved = 0.0  # its rows stay as recalled: only the read's age decides
    monkeypatch.setattr(known, "_FRESH", 0.0)
    lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    assert _rows_of(lam).counters.unread == 0
    monkeypatch.setattr(known, "_FRESH", 60.0)
    lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    assert _rows_of(lam).counters.unread == 1
    _assert_rows_are_the_replay(fold_url, ids, lam)


# -- contention stays narrow ------------------------------------------------------------------


def _hold(url: str, query: str, params: tuple[Any, ...]) -> psycopg.Connection[Any]:
    holder = psycopg.connect(url.split("?", 1)[0])
    holder.execute(query, params)  # a transaction stays open: the lock is held until rollback
    return holder


def _finishes(work: Any, seconds: float) -> tuple[threading.Thread, list[BaseException]]:
    errors: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - shown by the caller's assert
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(seconds)
    return thread, errors


def test_writers_on_different_lessons_never_wait_for_each_other(fold_url: str) -> None:
    lam = Lamar(fold_url, k=1, seed=3)
    a = lam.add(Experience("case a", "do a", scope=Scope(task="a")))
    lam.add(Experience("case b", "do b", scope=Scope(task="b")))
    on_a, on_b = lam.recall({"task": "a"}), lam.recall({"task": "b"})
    namespace = lam.store.namespace  # type: ignore[attr-defined]
    holder = _hold(fold_url, "SELECT * FROM lamar_lessons WHERE namespace = %s AND id = %s FOR UPDATE",
                   (namespace, a))
    try:
        other = Lamar(fold_url, k=1, seed=4)
        thread, errors = _finishes(lambda: other.report(on_b.episode_id, Signal.SHIPPED), 10.0)
        assert not thread.is_alive() and errors == []  # lesson b's row was free
        blocked, errors = _finishes(lambda: other.report(on_a.episode_id, Signal.SHIPPED), 1.0)
        assert blocked.is_alive()  # lesson a's row is held: this one waits for it
    finally:
        holder.rollback()
        holder.close()
    blocked.join(10.0)
    assert not blocked.is_alive() and errors == []
    assert lam.evidence(a).eligible == 1
    other.close()
    lam.close()


def test_the_namespace_counter_row_is_not_on_the_write_path(fold_url: str) -> None:
    lam = Lamar(fold_url, k=1, seed=5)
    lam.add(Experience("case", "do"))
    lam.recall({"task": "x"})  # builds the (empty) rows: the namespace's row exists now
    holder = _hold(fold_url, "SELECT * FROM lamar_namespaces WHERE namespace = %s FOR UPDATE",
                   (lam.store.namespace,))  # type: ignore[attr-defined]
    try:
        def episodes() -> None:
            for _ in range(5):
                lam.report(lam.recall({"task": "x"}).episode_id, Signal.ACCEPTED)

        thread, errors = _finishes(episodes, 10.0)
        assert not thread.is_alive() and errors == []
    finally:
        holder.rollback()
        holder.close()
    assert lam.stats()["reports"] == 5
    lam.close()


# -- what the rows cannot fold ----------------------------------------------------------------


def test_a_write_in_the_log_mode_marks_the_rows_stale_and_the_fold_mode_rebuilds_them(fold_url: str) -> None:
    lam = Lamar(fold_url, k=2, seed=6)
    ids = [lam.add(Experience(f"case {i}", f"do {i}")) for i in range(2)]
    for _ in range(20):
        lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    old = Lamar(fold_url + "&lamar_fold=off", k=2, seed=7)  # a rollback to the log mode writes
    for _ in range(20):
        old.report(old.recall({"task": "x"}).episode_id, Signal.REVERTED)
    old.close()
    assert sum(lam.evidence(i).eligible for i in ids) == 80  # the rows were built again, with all 40
    for _ in range(5):  # and the fold mode's seqs go on after the log mode's
        lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    seqs = [e.seq for e in lam.store.read()]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    replay = _replayed(fold_url)
    assert _rows(fold_url) == {i: _decisive(folded(replay).lesson(i)) for i in ids}
    replay.close()
    lam.close()


def test_a_report_of_an_unknown_episode_writes_nothing(fold_url: str) -> None:
    from lamar import UnknownEpisode

    lam = Lamar(fold_url, k=2, seed=8)
    lesson = lam.add(Experience("case", "do"))
    for _ in ("rows not built yet", "rows built by the recall"):
        before = len(lam.store.read())
        with pytest.raises(UnknownEpisode):
            lam.report("ep_nope", Signal.SHIPPED)
        with pytest.raises(UnknownEpisode, match="that is a lesson id, not an episode id"):
            lam.report(lesson, Signal.SHIPPED)  # the rows' own transaction refuses it first
        assert len(lam.store.read()) == before
        lam.recall({"task": "x"})
    assert lam.store.rows.lessons().tuning is not None  # type: ignore[attr-defined]
    lam.close()


def test_the_location_keeps_the_mode(postgres_url: str) -> None:
    namespace = unique_namespace()
    fold = PostgresStore(postgres_url, namespace=namespace)  # the fold mode is the default
    log = PostgresStore(postgres_url + "?lamar_fold=off", namespace=namespace)
    assert fold.rows is not None and log.rows is None
    assert log.location.endswith("lamar_fold=off") and "lamar_fold" not in fold.location
    assert PostgresStore(log.location).rows is None
    assert PostgresStore(postgres_url + "?lamar_fold=on", namespace=namespace).rows is not None
    fold.close()
    log.close()
    with pytest.raises(Exception, match="lamar_fold is 'on'"):
        PostgresStore(postgres_url + "?lamar_fold=maybe")


def test_an_engine_with_other_tuning_builds_the_rows_again_under_its_own(fold_url: str) -> None:
    first = Lamar(fold_url, k=2, seed=9)
    ids = [first.add(Experience(f"case {i}", f"do {i}")) for i in range(2)]
    for _ in range(30):
        first.report(first.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    other = Lamar(fold_url, k=2, seed=9, discount=0.9)  # the selection forgets faster: other rows
    before = _rows(fold_url)
    with pytest.warns(UserWarning, match=r"folded under other tuning \(discount 1.0 there, 0.9 here\)") as caught:
        other.evidence(ids[0])  # reads the rows: they were folded under other tuning, so built again
    # The warning names the user's call, not the line of Lamar that found the other tuning.
    assert [w.filename for w in caught] == [__file__]
    after = _rows(fold_url)
    assert after != before
    replay = Lamar(fold_url + "&lamar_fold=off", k=2, seed=0, discount=0.9)
    assert after == {i: _decisive(folded(replay).lesson(i)) for i in ids}
    other.report(other.recall({"task": "x"}).episode_id, Signal.REVERTED)  # folded under the new tuning
    assert sum(other.evidence(i).eligible for i in ids) == 62
    replay.close()
    other.close()
    first.close()


def test_a_rows_build_moves_the_shared_sequence_only_when_the_log_is_ahead_of_it(
        fold_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The build moves the sequence by nextval only, as many times as the log is ahead of it: every seq of a
    # fold-mode log came from the sequence, so a build takes no seq but its rows' version.
    # test_postgres_sequence.py has the race a setval lost to another session's nextval.
    first = Lamar(fold_url, k=2, seed=9)
    ids = [first.add(Experience(f"case {i}", f"do {i}")) for i in range(2)]
    for _ in range(5):
        first.report(first.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    said: list[str] = []
    moves: list[int] = []  # the nextvals each statement that moves the sequence past the log took
    execute = psycopg.Connection.execute

    def spied(self: psycopg.Connection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        said.append(str(query))
        cursor = execute(self, query, *args, **kwargs)
        if "generate_series" in str(query) and "lamar_seq" in str(query):
            moves.append(int((cursor.fetchone() or (-1,))[0]))
        return cursor

    monkeypatch.setattr(psycopg.Connection, "execute", spied)
    other = Lamar(fold_url, k=2, seed=9, discount=0.9)
    with pytest.warns(UserWarning, match="folded under other tuning"):
        other.evidence(ids[0])  # other tuning: the rows are built again
    assert any(q.startswith("DELETE FROM lamar_lessons") for q in said)
    assert not any("setval" in q for q in said)
    assert moves == [0]  # every seq of this log came from the sequence, which is ahead of it: left alone
    other.close()
    first.close()


def test_a_late_report_replaces_a_pending_default_and_the_rows_follow(fold_url: str) -> None:
    lam = Lamar(fold_url, k=2, seed=10, pending_after=0.0, pending_outcome=Signal.ACCEPTED)
    ids = [lam.add(Experience(f"case {i}", f"do {i}")) for i in range(2)]
    late = lam.recall({"task": "x"})  # the recall applies the policy: its own episode is due at once
    assert lam.episode(late.episode_id).settled == "default"  # the default is folded like any outcome
    lam.report(late.episode_id, Signal.REVERTED)  # replaces it: the rows are built again
    assert lam.episode(late.episode_id).signal == "reverted"
    replay = Lamar(fold_url + "&lamar_fold=off", k=2, seed=0, pending_after=0.0, pending_outcome=Signal.ACCEPTED)
    assert _rows(fold_url) == {i: _decisive(folded(replay).lesson(i)) for i in ids}
    replay.close()
    lam.close()


def test_engines_opening_unbuilt_rows_at_once_all_see_every_lesson(postgres_url: str) -> None:
    """Rows are read in one snapshot: a build committing in the middle of a read once made an
    empty set of rows look built, and a recall then found no lesson eligible."""
    for round_ in range(15):
        namespace = unique_namespace("race")
        url = namespace_url(postgres_url, namespace, options="-c synchronous_commit=off")
        try:
            setup = Lamar(url, k=2, seed=round_)
            for i in range(3):
                setup.add(Experience(f"case {i}", f"do {i}"))  # the rows are built by the first read
            found: list[int] = []
            barrier = threading.Barrier(8)

            def agent(seed: int, url: str = url, barrier: threading.Barrier = barrier,
                      found: list[int] = found) -> None:
                lam = Lamar(url, k=2, seed=seed)
                barrier.wait()
                found.append(len(lam.recall({"task": "x"}).eligible))
                lam.close()

            threads = [threading.Thread(target=agent, args=(seed,)) for seed in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert found == [3] * 8, (round_, found)
            setup.close()
        finally:
            drop_namespaces(postgres_url, namespace)


def test_the_engine_that_builds_the_rows_keeps_no_copy_of_the_fold(fold_url: str) -> None:
    """A build folds the whole log in the engine that runs it; the rows then hold that fold, and
    the engine drops its own copy (it would weigh on every later call: the process's garbage
    collector walks it)."""
    old = Lamar(fold_url + "&lamar_fold=off", k=2, seed=1)
    ids = [old.add(Experience(f"case {i}", f"do {i}")) for i in range(30)]
    for _ in range(20):
        old.report(old.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    old.close()
    lam = Lamar(fold_url, k=2, seed=1)
    assert lam.evidence(ids[0]).eligible == 20  # built the rows from the log
    assert (folded(lam).cache.lessons, folded(lam).cache.episodes, folded(lam).cache.seq) == ({}, {}, 0)
    assert lam.stats()["episodes"] == 20  # a call that needs the whole fold folds the log again
    lam.close()


def test_a_fleet_opening_unbuilt_rows_builds_them_once(fold_url: str) -> None:
    setup = Lamar(fold_url, k=2, seed=1)
    setup.add(Experience("case", "do", id="exp_case"))  # an id of its own: no look for a twin, so nothing built
    folds: list[int] = []
    engines = [Lamar(fold_url, k=2, seed=seed) for seed in range(6)]
    for lam in engines:  # a build folds the log with the fold cache's fold_log: count those
        cache = folded(lam).cache

        def counting(events: Any, fold: Any = cache.fold_log) -> Any:
            folds.append(1)
            return fold(events)

        cache.fold_log = counting  # type: ignore[method-assign]
    barrier = threading.Barrier(len(engines))

    def first_read(lam: Lamar) -> None:
        barrier.wait()
        assert len(lam.recall({"task": "x"}).eligible) == 1

    threads = [threading.Thread(target=first_read, args=(lam,)) for lam in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(folds) == 1  # six engines found the rows unbuilt; one built them
    for lam in engines:
        lam.close()
    setup.close()


# -- calls that need the whole fold fold the settled log, incrementally --------------------------


def _counts(lam: Lamar) -> dict[str, Any]:
    """Stats without what differs between two stores of the same log (its place, its seqs)."""
    return {k: v for k, v in lam.stats().items() if k not in ("store", "events")}


def _late_episode(url: str, lam: Lamar) -> tuple[psycopg.Connection[Any], str]:
    """A write in flight: an episode written through `lamar_write` in a transaction left open,
    so its seq is taken (under the namespace's write lock, as every write takes its seqs) and it
    commits whenever the caller commits the connection, after writes that took later seqs."""
    episode = next(e for e in lam.store.read() if e.kind == "episode")
    late = f"ep_late_{uuid.uuid4().hex[:8]}"
    write = fold_rows.empty_write(lam.store.namespace)  # type: ignore[attr-defined]
    write.update(take_lock=True, events=wire.events_json(
        [Event("episode", {**episode.data, "id": late}, key=f"episode:{late}", time=time.time())]))
    conn = psycopg.connect(url.split("?", 1)[0])  # not in autocommit: the transaction stays open
    conn.execute(fold_rows._WRITE_ONE, write)
    return conn, late


def test_a_late_commit_below_the_folded_seq_is_folded_once_it_commits(fold_url: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Seq order is not commit order in the fold mode: an episode that took its seq first
    commits after episodes with later seqs. A stats call made while it is in flight waits up to a
    second for it; past that it folds what is visible and starts from the start next time. A
    tail read from the last folded seq would pass over that episode for good."""
    lam = Lamar(fold_url, k=2, seed=1)
    lam.add(Experience("case", "do"))
    for _ in range(5):
        lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    reader = Lamar(fold_url, k=2, seed=2)
    assert reader.stats()["episodes"] == 5 and folded(reader).cache.settled

    conn, late = _late_episode(fold_url, lam)
    lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)  # seqs above the late one's, committed
    started = time.monotonic()
    assert reader.stats()["episodes"] == 6  # waited a second, then folded what is visible
    assert time.monotonic() - started >= locks._SETTLE_WAIT and not folded(reader).cache.settled
    conn.commit()
    assert reader.stats()["episodes"] == 7 and folded(reader).cache.settled  # the late episode is there
    assert late in folded(reader).cache.episodes

    conn, late = _late_episode(fold_url, lam)
    lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    # A longer wait, so that a stall of a loaded machine cannot pass for waiting it out: the call
    # returns once the commit lands, 0.3 s in.
    monkeypatch.setattr(locks, "_SETTLE_WAIT", 5.0)
    threading.Timer(0.3, conn.commit).start()  # commits while the next call waits for it
    started = time.monotonic()
    assert reader.stats()["episodes"] == 9 and folded(reader).cache.settled
    assert 0.3 <= time.monotonic() - started < locks._SETTLE_WAIT
    conn.close()
    lam.report(lam.recall({"task": "x"}).episode_id, Signal.ACCEPTED)
    assert _counts(reader) == _counts(_replayed(fold_url))
    for engine in (lam, reader):
        engine.close()


def test_a_reader_folding_while_a_fleet_writes_ends_equal_to_a_replay(fold_url: str) -> None:
    """4 writer threads (recalls, reports, an add and a retire) while a reader calls stats
    between their writes: the reader folds each settled tail once, in seq order, and ends equal
    to an engine that folds the whole log."""
    setup = Lamar(fold_url, k=2, seed=1)
    ids = [setup.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}"))) for i in range(4)]
    reader = Lamar(fold_url, k=2, seed=2)
    errors: list[BaseException] = []

    def write(seed: int) -> None:
        lam, rng = Lamar(fold_url, k=2, seed=seed), random.Random(seed)
        try:
            for n in range(60):
                rec = lam.recall({"task": f"t{n % 2}"})
                if rng.random() < 0.8:
                    lam.report(rec.episode_id, rng.choice(list(Signal)))
                if seed == 10 and n == 30:
                    lam.add(Experience("new case", "new fix", scope=Scope(task="t0")))
                if seed == 11 and n == 40:
                    lam.retire(ids[3])
        except BaseException as exc:  # noqa: BLE001 - shown by the assert below
            errors.append(exc)
        finally:
            lam.close()

    writers = [threading.Thread(target=write, args=(seed,)) for seed in range(10, 14)]
    for t in writers:
        t.start()
    calls = 0
    while any(t.is_alive() for t in writers):
        reader.stats()
        calls += 1
    for t in writers:
        t.join()
    assert not errors and calls > 5
    assert _counts(reader) == _counts(_replayed(fold_url))
    assert _counts(reader)["episodes"] == 240
    setup.close()
    reader.close()


def test_a_checkpoint_does_not_wait_for_its_own_exclusive_lock(fold_url: str) -> None:
    """A checkpoint holds the namespace's write lock exclusively while it folds: that holder
    takes no seq, so the settled read does not wait for it (only shared holders are writes)."""
    lam = Lamar(fold_url, k=2, seed=1)
    lam.add(Experience("case", "do"))
    for _ in range(20):
        lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    started = time.monotonic()
    assert lam.checkpoint() is True
    assert time.monotonic() - started < locks._SETTLE_WAIT and folded(lam).cache.settled
    assert lam.stats()["episodes"] == 20 and lam.store.read()[0].kind == "snapshot"
    lam.close()


def test_recalls_apply_the_pending_policy_now_and_then(fold_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pending policy needs the engine's own fold of the log: a fold-mode recall applies it
    at its first call, then once a minute at most (a quarter of `pending_after` if shorter)."""
    from lamar.state import holder

    # pending_after leaves the second episode 2 s to be read unsettled, which a loaded machine's
    # stalls never took (at 0.05 s, one in a few runs beside other jobs read it settled already).
    lam = Lamar(fold_url, k=2, seed=1, pending_after=2.0, pending_outcome=Signal.ACCEPTED)
    lam.add(Experience("case", "do"))
    first = lam.recall({"task": "x"}).episode_id
    time.sleep(2.05)
    second = lam.recall({"task": "x"}).episode_id  # 2.05 s later (past 2.0 / 4): settles the first
    assert lam.episode(first).settled == "default" and lam.episode(second).settled is None
    assert [p.episode_id for p in lam.pending()] == [second] and lam.stats()["reports"] == 1
    lam.close()

    calls: list[int] = []
    # Long enough that five recalls fit in it on a loaded machine (at 0.3 s, beside other jobs, they did not).
    monkeypatch.setattr(holder, "_SETTLE_EVERY", 3.0)
    monkeypatch.setattr(holder, "settle", lambda log, now: calls.append(1) or [])
    lam = Lamar(fold_url, k=2, seed=1, pending_after=40.0)
    for _ in range(5):
        lam.recall({"task": "x"})
    assert len(calls) == 1  # the first recall; the next 4 came within 3 s
    time.sleep(3.05)
    lam.recall({"task": "x"})
    assert len(calls) == 2
    lam.close()


def test_a_fresh_engine_resumes_from_the_state_a_folding_engine_saved(fold_url: str) -> None:
    """No fold-mode writer folds the log, so the engine that folds it for a call (stats here)
    saves the state once the tail is long, and a new process's first such call starts from it."""
    lam = Lamar(fold_url, k=2, seed=1)
    ids = [lam.add(Experience(f"case {i}", f"do {i}")) for i in range(3)]
    for _ in range(300):
        lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    assert lam.store.load_state() is None  # a writer folds nothing, so it saves nothing
    counts = _counts(lam)
    assert lam.store.load_state() is not None  # 600 events folded: saved
    fresh = Lamar(fold_url, k=2, seed=2)
    assert _counts(fresh) == counts and folded(fresh).cache.partial  # resumed, then folded the (empty) tail
    fresh.report(fresh.recall({"task": "x"}).episode_id, Signal.REVERTED)
    assert fresh.stats()["episodes"] == 301
    assert {i: fresh.evidence(i) for i in ids} == {i: _replayed(fold_url).evidence(i) for i in ids}
    for engine in (lam, fresh):
        engine.close()


def test_a_process_that_only_reads_saves_the_state_it_folded(fold_url: str) -> None:
    """No fold-mode writer folds the log, so a reader (stats, show, ui) saves the state it folded,
    and the next reader folds only the tail after it; not one told to leave the namespace as it
    found it (`lamar mcp --read-only`), nor one over a state saved under other tuning."""
    writer = Lamar(fold_url, k=2, seed=1)
    ids = [writer.add(Experience(f"case {i}", f"do {i}")) for i in range(3)]
    for _ in range(300):
        writer.report(writer.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    writer.close()  # a fold-mode writer folds nothing, so it saves nothing
    barred = Lamar(fold_url, k=2, seed=2)
    barred.store.writes_on_read = False  # type: ignore[attr-defined]
    events = len(barred.store.read(0))
    counts = _counts(barred)  # the whole log folded, 600 events past no state
    assert barred.store.load_state() is None and len(barred.store.read(0)) == events
    barred.close()
    other = Lamar(fold_url, k=2, seed=2, warmup=7)  # no saved state: it saves one under its own tuning
    other.stats()
    theirs = other.store.load_state()
    assert theirs is not None
    reader = Lamar(fold_url, k=2, seed=2)
    assert _counts(reader) == counts and not folded(reader).cache.partial  # the whole log again
    assert reader.store.load_state() == theirs  # not replaced: engines of that tuning resume from it
    with psycopg.connect(fold_url.partition("?")[0]) as conn:
        conn.execute("DELETE FROM lamar_state WHERE namespace = %s", (reader.store.namespace,))
    reader.close()
    reader = Lamar(fold_url, k=2, seed=2)
    assert _counts(reader) == counts and reader.store.load_state() is not None
    assert [reader.evidence(i) for i in ids] and reader.experiences() and reader.pending() == []
    reader.close()
    writer = Lamar(fold_url, k=2, seed=3)
    writer.report(writer.recall({"task": "x"}).episode_id, Signal.REVERTED)
    writer.close()
    fresh = Lamar(fold_url, k=2, seed=4)
    cache, seqs = folded(fresh).cache, []
    fold = cache.fold
    cache.fold = lambda event, *again: (seqs.append(event.seq), fold(event, *again))  # type: ignore[method-assign]
    assert fresh.stats()["episodes"] == 301 and cache.partial
    assert len(seqs) == 2  # resumed from the reader's state: the tail alone (an episode and its report)
    assert {i: fresh.evidence(i) for i in ids} == {i: _replayed(fold_url).evidence(i) for i in ids}
    fresh.close()


# -- optimistic writes: no lock across a round trip -------------------------------------------


def _shared_lessons(url: str, n: int = 3) -> tuple[Lamar, list[str]]:
    setup = Lamar(url, k=2, seed=1)
    ids = [setup.add(Experience(f"case {i}", f"do {i}")) for i in range(n)]
    setup.recall({"task": "x"})  # builds the rows
    return setup, ids


def test_a_lesson_added_after_a_retirement_has_the_logs_creation_rank(fold_url: str) -> None:
    """Lessons are retired, never removed: an add folded by the rows counts every row, retired ones
    too, as the log's fold does, so the new lesson's share of alpha is the same either way."""
    lam = Lamar(fold_url, k=2, seed=0)
    ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="a"))) for i in range(3)]
    lam.retire(ids[0])
    ids += [lam.add(Experience("case 3", "do 3", scope=Scope(task="a")))]
    lam.store.append([Event("merge", {"into": ids[1], "from": [ids[2]]})])
    ids += [lam.add(Experience("case 4", "do 4", scope=Scope(task="a")))]
    assert [_rows(fold_url)[i]["rank"] for i in ids] == [1, 2, 3, 4, 5]
    _assert_rows_are_the_replay(fold_url, ids, lam)


def test_an_add_waits_for_other_adds_and_nothing_else_does(postgres_url: str) -> None:
    """While an add holds the namespace's add lock (from its read to its commit), recall, report,
    retire and a merge go through (a wait past the URL's lock_timeout would fail them), and another
    add waits for it on the server, then takes the next rank."""
    namespace, app = unique_namespace("adds"), f"adds-{uuid.uuid4().hex[:8]}"
    url = namespace_url(postgres_url, namespace, application_name=app, options="-c lock_timeout=10s",
                        lamar_fold="on")
    lam, adder = Lamar(url, k=2, seed=0), Lamar(url, k=2, seed=1)
    try:
        ids = [lam.add(Experience(f"case {i}", f"do {i}")) for i in range(3)]
        added: list[str] = []
        with psycopg.connect(postgres_url) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (locks.ADDS_LOCK, namespace))
            recall = lam.recall({"task": "x"})
            lam.report(recall.episode_id, "shipped")
            lam.retire(ids[0])
            lam.store.append([Event("merge", {"into": ids[1], "from": [ids[2]]})])
            adding = threading.Thread(target=lambda: added.append(adder.add(Experience("case 3", "do 3"))))
            adding.start()
            while adding.is_alive() and not test_postgres.backends(postgres_url, app, waiting=True):
                time.sleep(0.01)  # a look at the server: the add waits there for the lock
            assert added == [], "the add did not wait for the add lock"
        adding.join()
        assert _rows(url)[added[0]]["rank"] == 4
        _assert_rows_are_the_replay(url, [*ids, *added], lam, adder)
    finally:
        drop_namespaces(postgres_url, namespace)


def _rows_of(lam: Lamar) -> Any:
    rows = lam.store.rows  # type: ignore[attr-defined]
    assert rows is not None
    return rows


def test_a_client_stopped_between_its_read_and_its_write_stalls_nobody(fold_url: str) -> None:
    """A report paused after reading its rows (as a SIGSTOP or a GC pause would pause it) holds no
    lock: reports on the same lessons go through meanwhile, and the paused one, resumed, finds
    its rows moved, folds again and is counted once."""
    setup, ids = _shared_lessons(fold_url)
    stopped, paused, resume = Lamar(fold_url, k=2, seed=2), threading.Event(), threading.Event()

    def pause() -> None:
        paused.set()
        assert resume.wait(30.0)

    _rows_of(stopped)._between = pause
    episode = stopped.recall({"task": "x"}).episode_id
    waiting, errors = _finishes(lambda: stopped.report(episode, Signal.SHIPPED), 0.0)
    assert paused.wait(10.0)
    other = Lamar(fold_url, k=2, seed=3)
    try:
        def reports() -> None:
            for _ in range(5):
                other.report(other.recall({"task": "x"}).episode_id, Signal.REVERTED)

        thread, other_errors = _finishes(reports, 10.0)
        assert not thread.is_alive() and other_errors == []  # done while the first one is stopped
        assert waiting.is_alive()
    finally:
        resume.set()
    waiting.join(10.0)
    assert not waiting.is_alive() and errors == []
    assert _rows_of(stopped).counters.conflicts == 1 and _rows_of(stopped).counters.locked == 0
    assert [setup.evidence(i).eligible for i in ids] == [6, 6, 6]
    _assert_rows_are_the_replay(fold_url, ids, stopped, other, setup)


def test_a_report_holds_no_transaction_open_while_its_client_folds(fold_url: str, postgres_url: str) -> None:
    """Its read is a transaction of its own, its write one message: between them its connection
    is idle, so a client stopped there holds back nothing (not even the pruning of old rows)."""
    setup, ids = _shared_lessons(fold_url)
    episode = setup.recall({"task": "x"}).episode_id  # recalled elsewhere: the report reads first
    lam = Lamar(PostgresStore(fold_url, pool_size=1), k=2, seed=2)
    backend = lam.store.connections.run(lambda conn: conn.info.backend_pid)  # type: ignore[attr-defined]
    states: list[str] = []

    def look() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            states.append(conn.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", (backend,)).fetchone()[0])

    _rows_of(lam)._between = look
    lam.report(episode, Signal.SHIPPED)
    assert states == ["idle"]
    assert [setup.evidence(i).eligible for i in ids] == [1, 1, 1]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def test_a_conflict_is_retried_and_the_retried_fold_is_the_one_stored(fold_url: str) -> None:
    setup, ids = _shared_lessons(fold_url)
    setup.report(setup.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    first, other = Lamar(fold_url, k=2, seed=4), Lamar(fold_url, k=2, seed=5)
    calls: list[int] = []

    def interleave() -> None:  # another client reports between this one's read and its write, once
        calls.append(1)
        if len(calls) == 1:
            other.report(other.recall({"task": "x"}).episode_id, -1.0)

    _rows_of(first)._between = interleave
    before = {i: setup.evidence(i).eligible for i in ids}
    first.report(first.recall({"task": "x"}).episode_id, 1.0)
    assert len(calls) == 2 and _rows_of(first).counters.conflicts == 1 and _rows_of(first).counters.locked == 0
    assert {i: setup.evidence(i).eligible for i in ids} == {i: n + 2 for i, n in before.items()}
    outcomes = [e for e in setup.store.read() if e.kind == "outcome"]
    assert [e.data["reward"] for e in outcomes[-2:]] == [-1.0, 1.0]  # the retry's seq follows the other's
    # The stored fold is the retry's: it saw the other report's reward in the spread and in the rows.
    rewards = [e.data["reward"] for e in outcomes]
    m2 = sum((r - sum(rewards) / len(rewards)) ** 2 for r in rewards)
    assert outcomes[-1].data["fold"]["sigma"] == pytest.approx(fold.spread(len(rewards), m2))
    _assert_rows_are_the_replay(fold_url, ids, first, other, setup)


def test_a_report_that_keeps_losing_is_folded_by_the_report_that_beats_it(fold_url: str) -> None:
    """A hot lesson cannot starve a reporter: once its write conflicts, its outcome waits in the
    inbox, and a report that finds it there folds it along with its own, in one write."""
    setup, ids = _shared_lessons(fold_url)
    loser, other = Lamar(fold_url, k=2, seed=6), Lamar(fold_url, k=2, seed=7)
    _rows_of(loser)._between = lambda: other.report(other.recall({"task": "x"}).episode_id, Signal.ACCEPTED)
    episode = loser.recall({"task": "x"}).episode_id
    loser.report(episode, Signal.REVERTED)
    assert (_rows_of(loser).counters.queued, _rows_of(loser).counters.locked) == (1, 0)
    assert (_rows_of(other).counters.queued, _rows_of(other).counters.combined) == (1, 2)  # its own and the loser's
    assert [setup.evidence(i).eligible for i in ids] == [3, 3, 3]
    outcomes = [e for e in setup.store.read() if e.kind == "outcome"]
    assert [e.data["episode"] for e in outcomes].count(episode) == 1
    _assert_rows_are_the_replay(fold_url, ids, loser, other, setup)


def _queue_and_vanish(url: str, reward: float) -> str:
    """A first report that was queued, its reporter gone before any write folded it (killed): the
    episode it reports, its outcome waiting in the inbox."""
    lam = Lamar(url, k=2, seed=11)
    episode = lam.recall({"task": "x"}).episode_id
    status, _, _ = _enqueue(lam, Event("outcome", {"episode": episode, "reward": reward, "signal": None,
                                                         "replace": False}, key=f"outcome:{episode}"))
    assert status == "queued"
    lam.close()
    return episode


def _enqueue(lam: Lamar, event: Event) -> tuple[str, int, int | None]:
    """Queue a first report without waiting for its turn: status, ticket, the outcome ahead."""
    return lam.store.connections.run(lambda conn: _rows_of(lam)._inbox._enqueue(conn, event))[:3]  # type: ignore[attr-defined,no-any-return]


def _inbox(url: str) -> list[str]:
    store = PostgresStore(url)
    keys = store.connections.run(lambda conn: [row[0] for row in conn.execute(
        "SELECT key FROM lamar_inbox WHERE namespace = %s AND ticket IS NOT NULL ORDER BY ticket",
        (store.namespace,)).fetchall()])
    store.close()
    return keys


def test_an_outcome_left_queued_is_folded_by_the_next_report(fold_url: str) -> None:
    setup, ids = _shared_lessons(fold_url)
    left = _queue_and_vanish(fold_url, -1.0)
    assert _inbox(fold_url) == [f"outcome:{left}"] and [setup.evidence(i).eligible for i in ids] == [0, 0, 0]
    lam = Lamar(fold_url, k=2, seed=12)
    lam.report(lam.recall({"task": "x"}).episode_id, 1.0)
    assert _inbox(fold_url) == [] and (_rows_of(lam).counters.queued, _rows_of(lam).counters.combined) == (1, 2)
    first = next(e.data for e in setup.store.read() if e.kind == "outcome")
    assert (first["episode"], first["reward"]) == (left, -1.0)  # folded first: queued first
    assert [setup.evidence(i).eligible for i in ids] == [2, 2, 2]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def test_a_store_whose_report_was_queued_behind_others_queues_its_next_at_once(fold_url: str) -> None:
    """After a report queued behind another's, the next report of an episode this store wrote
    skips its own read or write (it would find the rows contended again) and is queued at once;
    once it folds alone, the store writes its reports alone again."""
    setup, ids = _shared_lessons(fold_url)
    _queue_and_vanish(fold_url, -1.0)
    lam = Lamar(fold_url, k=2, seed=12)
    rows = _rows_of(lam)
    lam.report(lam.recall({"task": "x"}).episode_id, 1.0)  # found the inbox full: queued, folded both
    assert (rows.counters.queued, rows.counters.combined, rows._crowded) == (1, 2, True)
    reads = rows._transaction
    sent: list[str] = []

    def counting(events: Any, how: str, *args: Any, **kwargs: Any) -> Any:
        sent.append(how)
        return reads(events, how, *args, **kwargs)

    rows._transaction = counting  # type: ignore[method-assign]
    lam.report(lam.recall({"task": "x"}).episode_id, 0.5)
    assert sent == ["plain", "combine"]  # the episode, then no read or write of its own: queued, folded alone
    assert (rows.counters.queued, rows.counters.combined, rows._crowded) == (2, 3, False)
    lam.report(lam.recall({"task": "x"}).episode_id, 0.5)
    # written alone again, folded from its recall
    assert sent[2:] == ["plain", "recalled"] and rows.counters.queued == 2
    assert [setup.evidence(i).eligible for i in ids] == [4, 4, 4]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


class _Recording:
    """A connection that records the first word of each statement sent through it (`lamar_enqueue`,
    `lamar_turn`, `UNLISTEN`) and, as the queue hands it back, the channels it listens to."""

    def __init__(self, conn: Any, sent: list[str], listening: list[list[str]]) -> None:
        self._conn, self._sent, self._listening = conn, sent, listening

    def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
        text = str(query)
        self._sent.append("lamar_" + text.split("lamar_", 1)[1].split("(", 1)[0] if "FROM lamar_" in text
                          else text.split()[0])
        return self._conn.execute(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _recording_queue(lam: Lamar) -> tuple[list[str], list[list[str]]]:
    """Record what `lam`'s queue sends (`_Recording`), and what each connection it used listens to
    once the queue is done with it."""
    store, sent, listening = lam.store, [], []  # type: ignore[var-annotated]
    run = store.connections.run  # type: ignore[attr-defined]

    def recorded(query: Any, doing: str = "read") -> Any:
        if doing != "write":
            return run(query, doing)

        def through(conn: Any) -> Any:
            try:
                return query(_Recording(conn, sent, listening))
            finally:
                listening.append([row[0] for row in conn.execute("SELECT pg_listening_channels()").fetchall()])

        return run(through, doing)

    store.connections.run = recorded  # type: ignore[attr-defined]
    return sent, listening


def test_a_report_first_in_the_inbox_is_queued_in_one_message(fold_url: str) -> None:
    """A queued report with no outcome ahead of it on its lessons is queued by one message: the
    enqueue did not LISTEN, so there is nothing to UNLISTEN. One queued behind another listens
    while it waits, and hands its connection back listening to nothing."""
    setup, ids = _shared_lessons(fold_url)
    _queue_and_vanish(fold_url, -1.0)
    lam = Lamar(fold_url, k=2, seed=12)
    rows = _rows_of(lam)
    sent, listening = _recording_queue(lam)
    lam.report(lam.recall({"task": "x"}).episode_id, 1.0)  # found the inbox full: queued behind it, folded both
    # behind the stopped reporter's outcome: it listened, asked its turn, waited out the lease
    assert sent == ["lamar_enqueue", "lamar_turn", "lamar_turn", "UNLISTEN"] and listening == [[]]
    assert (rows.counters.queued, rows.counters.combined, rows.counters.waited, rows._crowded) == (1, 2, 1, True)
    sent.clear()
    listening.clear()
    lam.report(lam.recall({"task": "x"}).episode_id, 0.5)  # crowded: queued at once, nothing ahead
    assert sent == ["lamar_enqueue"] and listening == [[]]
    assert (rows.counters.queued, rows.counters.combined, rows._crowded) == (2, 3, False)
    assert [setup.evidence(i).eligible for i in ids] == [3, 3, 3]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def test_queued_reports_reuse_the_inbox_slots_their_folds_freed(fold_url: str) -> None:
    """A slot is rewritten in place for the next queued report once its outcome is folded: 30
    reports queued one after another take one slot, and 2 at a time take 2. (Version 6 added a row
    per report and deleted it, and its reads walked past every deleted one until a VACUUM.)"""
    setup, ids = _shared_lessons(fold_url)
    lam = Lamar(fold_url, k=2, seed=12)
    rows = _rows_of(lam)
    for _ in range(30):
        rows._crowded = True  # queue it at once, as after a report queued behind others'
        lam.report(lam.recall({"task": "x"}).episode_id, 0.5)
    assert (rows.counters.queued, rows.counters.combined) == (30, 30)
    slots = "SELECT count(*), count(ticket) FROM lamar_inbox WHERE namespace = %s"
    store = PostgresStore(fold_url)
    assert store.connections.run(lambda conn: conn.execute(slots, (store.namespace,)).fetchone()) == (1, 0)
    for _ in range(5):
        _queue_and_vanish(fold_url, -1.0)
        lam.report(lam.recall({"task": "x"}).episode_id, 1.0)  # finds it queued: folds both
    assert store.connections.run(lambda conn: conn.execute(slots, (store.namespace,)).fetchone()) == (2, 0)
    assert [setup.evidence(i).eligible for i in ids] == [40, 40, 40]
    store.close()
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def _queued_by_a_leader(fold_url: str) -> tuple[Lamar, list[str], Lamar, Lamar, str, int]:
    """Shared lessons, and a leader whose report is queued (its reporter alive, not folding yet),
    beside a waiter: setup, ids, leader, waiter, the leader's episode and ticket."""
    setup, ids = _shared_lessons(fold_url)
    leader, waiter = Lamar(fold_url, k=2, seed=11), Lamar(fold_url, k=2, seed=12)
    first = leader.recall({"task": "x"}).episode_id
    status, ticket, _ = _enqueue(leader, Event("outcome", {"episode": first, "reward": -1.0, "signal": None,
                                                           "replace": False}, key=f"outcome:{first}"))
    assert status == "queued"
    return setup, ids, leader, waiter, first, ticket


def test_a_report_queued_behind_a_live_reporter_is_folded_by_it_and_woken(
        fold_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where outcomes wait in the inbox, the reporter of the oldest one that shares a lesson folds
    them all; the others wait for its write (it notifies them) instead of each folding the same
    outcomes and all but one losing. Here the waiting reporter's lease is 10 s: it is woken by
    the fold, writes nothing of its own, and returns its outcome as the fold stored it."""
    monkeypatch.setattr(inbox, "_LEASE", 10.0)
    setup, ids, leader, waiter, first, ticket = _queued_by_a_leader(fold_url)
    episode = waiter.recall({"task": "x"}).episode_id
    began = time.monotonic()
    waiting, errors = _finishes(lambda: waiter.report(episode, Signal.SHIPPED), 0.0)
    while len(_inbox(fold_url)) < 2 and time.monotonic() - began < 10.0:
        time.sleep(0.01)
    time.sleep(0.2)  # the waiter is now waiting for its turn
    folded = _rows_of(leader)._transaction([], "combine", False, ticket=ticket)
    waiting.join(5.0)
    assert not waiting.is_alive() and errors == [] and time.monotonic() - began < 5.0
    assert folded is not None and [e.key for e in folded] == [f"outcome:{first}", f"outcome:{episode}"]
    counters = _rows_of(waiter).counters
    assert (counters.queued, counters.waited, counters.combined) == (1, 0, 0)
    assert _inbox(fold_url) == [] and [setup.evidence(i).eligible for i in ids] == [2, 2, 2]
    _assert_rows_are_the_replay(fold_url, ids, leader, waiter, setup)


def test_a_fold_that_commits_before_the_listen_takes_effect_is_not_waited_for(
        fold_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """lamar_enqueue LISTENs in the transaction that finds outcomes ahead, and PostgreSQL skips
    the notices of writes committed before that transaction did. Here the outcome ahead, and
    this one with it, are folded right after the enqueue and the notice is thrown away, as if
    the fold had committed in that gap: the reporter asks again once it listens, finds its
    outcome folded and returns at once, instead of waiting out its lease (10 s here)."""
    monkeypatch.setattr(inbox, "_LEASE", 10.0)
    setup, ids, leader, waiter, _, ticket = _queued_by_a_leader(fold_url)
    rows = _rows_of(waiter)
    enqueue = rows._inbox._enqueue

    def folded_in_the_gap(conn: Any, event: Event) -> Any:
        queued = enqueue(conn, event)
        assert queued[2] == ticket  # the outcome ahead
        assert _rows_of(leader)._transaction([], "combine", False, ticket=ticket) is not None  # folds both
        for _ in conn.notifies(timeout=0.2):  # its notice, unheard
            pass
        return queued

    rows._inbox._enqueue = folded_in_the_gap  # type: ignore[method-assign]
    began = time.monotonic()
    waiter.report(waiter.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    assert time.monotonic() - began < 2.0
    assert (rows.counters.queued, rows.counters.waited, rows.counters.combined) == (1, 0, 0)
    assert _inbox(fold_url) == [] and [setup.evidence(i).eligible for i in ids] == [2, 2, 2]
    _assert_rows_are_the_replay(fold_url, ids, leader, waiter, setup)


def test_a_queued_report_that_vanishes_unfolded_is_queued_again(fold_url: str) -> None:
    """The inbox is UNLOGGED: a server that restarts empties it, and a reporter that waited there
    finds its outcome neither queued nor in the log. It queues it again (here its slot is freed
    by hand while it waits, and a notice wakes it), and the report is folded once."""
    setup, ids = _shared_lessons(fold_url)
    _queue_and_vanish(fold_url, -1.0)  # a report ahead of it, whose reporter never comes
    lam = Lamar(fold_url, k=2, seed=12)
    episode = lam.recall({"task": "x"}).episode_id
    rows = _rows_of(lam)
    wait = rows._inbox._wait

    def emptied(conn: Any, event: Event, ticket: int, *rest: Any) -> Any:
        store = PostgresStore(fold_url)
        store.connections.run(lambda other: other.execute(
            "UPDATE lamar_inbox SET ticket = NULL, key = NULL, time = NULL, data = NULL, lessons = NULL "
            "WHERE namespace = %s AND ticket = %s", (store.namespace, ticket)))
        # A write's notice in this namespace naming none of its tickets: the reporter asks its turn.
        # Every reporter of the database listens on the channel: one naming no namespace would make
        # those of other tests running meanwhile ask too (and fail a test that counts their asks).
        note = {"ns": store.namespace, "done": [], "seqs": [], "wait": [], "lead": []}
        store.connections.run(lambda other: other.execute("SELECT pg_notify(%s, %s)",
                                                          (inbox.INBOX_CHANNEL, json.dumps(note))))
        store.close()
        rows._inbox._wait = wait  # type: ignore[method-assign]
        return wait(conn, event, ticket, *rest)

    rows._inbox._wait = emptied  # type: ignore[method-assign]
    lam.report(episode, 1.0)  # asked on the notice: gone, not in the log: queued again, then folded
    outcomes = [e.data["episode"] for e in setup.store.read() if e.kind == "outcome"]
    assert outcomes.count(episode) == 1 and len(outcomes) == 2 and _inbox(fold_url) == []
    assert [setup.evidence(i).eligible for i in ids] == [2, 2, 2]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def test_a_report_queued_behind_a_stopped_reporter_waits_out_the_lease_then_folds_both(fold_url: str) -> None:
    """A folder that never comes (its reporter stopped or died after queuing) delays the others
    by the lease, no more: then the next reporter folds its outcome with its own."""
    setup, ids = _shared_lessons(fold_url)
    left = _queue_and_vanish(fold_url, -1.0)
    lam = Lamar(fold_url, k=2, seed=12)
    episode = lam.recall({"task": "x"}).episode_id
    began = time.monotonic()
    lam.report(episode, 1.0)
    assert time.monotonic() - began >= inbox._LEASE
    assert (_rows_of(lam).counters.queued, _rows_of(lam).counters.waited, _rows_of(lam).counters.combined) == (1, 1, 2)
    assert _inbox(fold_url) == [] and [setup.evidence(i).eligible for i in ids] == [2, 2, 2]
    assert [e.data["episode"] for e in setup.store.read() if e.kind == "outcome"] == [left, episode]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


@pytest.mark.parametrize("named", [True, False], ids=["lessons named", "lessons not named"])
def test_folds_of_other_lessons_do_not_extend_a_wait_behind_a_stopped_reporter(fold_url: str, postgres_url: str,
                                                                               named: bool) -> None:
    """Every fold in the namespace notifies the waiting reporters, whatever its lessons; only a
    fold of the outcomes ahead of a reporter's own gives it a new lease. Here the namespace is
    notified every 20 ms for 3 s while the outcome ahead never moves: the report still folds both
    after about one lease, not once the notifications stop. A notice that names its lessons, none
    of them this report's, costs the reporter no query; one that does not is answered by asking
    whose turn it is."""
    setup, ids = _shared_lessons(fold_url)
    left = _queue_and_vanish(fold_url, -1.0)
    namespace = setup.store.namespace  # type: ignore[attr-defined]
    lam = Lamar(fold_url, k=2, seed=12)
    episode = lam.recall({"task": "x"}).episode_id
    stop = threading.Event()
    # a write's notice as a fold of other lessons sends it: it names none of this report's tickets
    other = {"ns": namespace, "done": [1], "seqs": [1], "wait": [], "lead": [],
             **({"lessons": ["exp_elsewhere"]} if named else {})}
    rows, asked = _rows_of(lam), []
    turn = rows._inbox._turn

    def counting(*args: Any) -> Any:
        asked.append(args[-1])
        return turn(*args)

    rows._inbox._turn = counting  # type: ignore[method-assign]

    def notify() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            while not stop.wait(0.02):
                conn.execute("SELECT pg_notify(%s, %s)", (inbox.INBOX_CHANNEL, json.dumps(other)))

    notifier = threading.Thread(target=notify)
    notifier.start()
    try:
        began = time.monotonic()
        lam.report(episode, 1.0)
        took = time.monotonic() - began
    finally:
        stop.set()
        notifier.join()
    assert inbox._LEASE <= took < 2.0, took
    assert (rows.counters.waited, rows.counters.combined) == (1, 2)
    # once listening, then as the lease ran out; else at each notice too
    assert len(asked) == 2 if named else len(asked) >= 4
    assert [e.data["episode"] for e in setup.store.read() if e.kind == "outcome"] == [left, episode]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def test_a_queued_report_waits_only_for_reports_on_its_own_lessons(fold_url: str) -> None:
    """Reports on other lessons neither join the inbox nor fold what waits there: they contend
    with nobody. The next report on the waiting report's lessons folds it."""
    setup = Lamar(fold_url, k=2, seed=1)
    mine = [setup.add(Experience(f"case {i}", f"do {i}", scope=Scope(project="a"))) for i in range(2)]
    other = [setup.add(Experience(f"case {i}", f"do {i}", scope=Scope(project="b"))) for i in range(2)]
    lam = Lamar(fold_url, k=2, seed=12)
    episode = lam.recall({"project": "a"}).episode_id
    assert _enqueue(lam, Event("outcome", {"episode": episode, "reward": 1.0, "signal": None,
                                                    "replace": False}, key=f"outcome:{episode}"))[0] == "queued"
    lam.report(lam.recall({"project": "b"}).episode_id, -1.0)
    assert (_rows_of(lam).counters.queued, _inbox(fold_url)) == (0, [f"outcome:{episode}"])
    assert [setup.evidence(i).eligible for i in mine + other] == [0, 0, 1, 1]
    lam.report(lam.recall({"project": "a"}).episode_id, -1.0)
    assert (_rows_of(lam).counters.queued, _rows_of(lam).counters.combined, _inbox(fold_url)) == (1, 2, [])
    assert [setup.evidence(i).eligible for i in mine + other] == [2, 2, 1, 1]
    _assert_rows_are_the_replay(fold_url, mine + other, lam, setup)


def test_a_queued_report_is_the_first_report_of_its_episode(fold_url: str) -> None:
    setup, ids = _shared_lessons(fold_url)
    left = _queue_and_vanish(fold_url, -1.0)
    with pytest.raises(DuplicateReport):
        setup.report(left, 1.0)  # reported again while the first report waits in the inbox
    lam = Lamar(fold_url, k=2, seed=12)
    lam.report(lam.recall({"task": "x"}).episode_id, 1.0)  # folds the queued one too
    assert [(o["episode"], o["reward"]) for o in (e.data for e in setup.store.read() if e.kind == "outcome")
            if o["episode"] == left] == [(left, -1.0)]
    with pytest.raises(DuplicateReport):
        setup.report(left, 1.0)
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def test_an_outcome_queued_twice_at_once_is_folded_once(fold_url: str) -> None:
    """Two reporters queuing the same episode's outcome at the same moment can both find its key
    free and take a slot each (the slots' key is not unique): the write that folds them keeps the
    older and drops the newer, whose reporter then learns that another report came first."""
    setup, ids = _shared_lessons(fold_url)
    left = _queue_and_vanish(fold_url, -1.0)
    store = PostgresStore(fold_url)
    store.connections.run(lambda conn: conn.execute(
        "INSERT INTO lamar_inbox (namespace, slot, ticket, key, time, data, lessons) SELECT namespace, "
        "nextval('lamar_seq'), nextval('lamar_seq'), key, time + 1, replace(data, '-1.0', '1.0'), lessons "
        "FROM lamar_inbox WHERE namespace = %s AND key = %s", (store.namespace, f"outcome:{left}")))
    store.close()
    assert _inbox(fold_url) == [f"outcome:{left}"] * 2
    lam = Lamar(fold_url, k=2, seed=12)
    lam.report(lam.recall({"task": "x"}).episode_id, 1.0)  # folds the older, drops the newer
    assert _inbox(fold_url) == [] and _rows_of(lam).counters.combined == 2
    assert [(o["episode"], o["reward"]) for o in (e.data for e in setup.store.read() if e.kind == "outcome")
            if o["episode"] == left] == [(left, -1.0)]
    _assert_rows_are_the_replay(fold_url, ids, lam, setup)


def test_a_queued_reporter_stopped_mid_write_stalls_nobody(fold_url: str) -> None:
    """Folding the inbox holds no lock across a round trip: while a queued reporter is stopped
    between its read and its write, others report on the same rows and fold its outcome; resumed,
    it finds its outcome folded and returns."""
    setup, ids = _shared_lessons(fold_url)
    stopped, other = Lamar(fold_url, k=2, seed=2), Lamar(fold_url, k=2, seed=3)
    paused, resume = threading.Event(), threading.Event()
    _rows_of(stopped)._saved = 0.0  # it writes from its recall's read (a read first would not conflict)
    episode = stopped.recall({"task": "x"}).episode_id
    other.report(other.recall({"task": "x"}).episode_id, Signal.SHIPPED)  # the stopped one's recall is stale

    def pause() -> None:
        if _rows_of(stopped).counters.queued:  # in its write that folds the inbox
            paused.set()
            assert resume.wait(30.0)

    _rows_of(stopped)._between = pause
    waiting, errors = _finishes(lambda: stopped.report(episode, Signal.REVERTED), 0.0)
    assert paused.wait(10.0)
    try:
        thread, other_errors = _finishes(
            lambda: [other.report(other.recall({"task": "x"}).episode_id, Signal.ACCEPTED) for _ in range(3)], 10.0)
        assert not thread.is_alive() and other_errors == [] and waiting.is_alive()
    finally:
        resume.set()
    waiting.join(10.0)
    assert not waiting.is_alive() and errors == []
    assert _rows_of(other).counters.combined >= 1 and _inbox(fold_url) == []
    assert [setup.evidence(i).eligible for i in ids] == [5, 5, 5]
    _assert_rows_are_the_replay(fold_url, ids, stopped, other, setup)


def test_a_writer_that_keeps_losing_takes_the_locks(fold_url: str) -> None:
    """Rows that keep moving under a queued report (here by status writes, which fold no queued
    outcome) cannot starve it either: after OPTIMISTIC_TRIES conflicts it locks them."""
    setup, ids = _shared_lessons(fold_url)
    loser, other = Lamar(fold_url, k=2, seed=6), Lamar(fold_url, k=2, seed=7)
    moves: list[int] = []

    def move() -> None:
        moves.append(1)
        (other.retire if len(moves) % 2 else other.revive)(ids[0])

    _rows_of(loser)._between = move
    loser.report(loser.recall({"task": "x"}).episode_id, Signal.REVERTED)
    assert _rows_of(loser).counters.conflicts == OPTIMISTIC_TRIES and _rows_of(loser).counters.locked == 1
    assert len(moves) == OPTIMISTIC_TRIES
    assert [setup.evidence(i).eligible for i in ids] == [1, 1, 1]
    _assert_rows_are_the_replay(fold_url, ids, loser, other, setup)


def test_a_locking_fold_that_finds_its_report_folded_already_returns_it(fold_url: str, postgres_url: str) -> None:
    """After OPTIMISTIC_TRIES conflicts a reporter locks before reading; if another write has
    folded its report meanwhile, it ends that transaction, finds its report in the log, and its
    connection is left idle."""
    setup, ids = _shared_lessons(fold_url)
    loser, other = Lamar(PostgresStore(fold_url, pool_size=1), k=2, seed=6), Lamar(fold_url, k=2, seed=7)
    moves: list[int] = []

    def move() -> None:  # the rows move under each optimistic try; before the last, another report folds it
        moves.append(1)
        if len(moves) < OPTIMISTIC_TRIES:
            other.retire(ids[0])
            other.revive(ids[0])
        elif len(moves) == OPTIMISTIC_TRIES:
            other.report(other.recall({"task": "x"}).episode_id, Signal.ACCEPTED)

    _rows_of(loser)._between = move
    episode = loser.recall({"task": "x"}).episode_id
    loser.report(episode, Signal.REVERTED)
    assert len(moves) == OPTIMISTIC_TRIES and _rows_of(other).counters.combined == 2
    backend = loser.store.connections.run(lambda conn: conn.info.backend_pid)  # type: ignore[attr-defined]
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert conn.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", (backend,)).fetchone() == ("idle",)
    assert [e.data["episode"] for e in setup.store.read() if e.kind == "outcome"].count(episode) == 1
    _rows_of(loser)._between = None
    loser.report(loser.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    assert [setup.evidence(i).eligible for i in ids] == [3, 3, 3]
    _assert_rows_are_the_replay(fold_url, ids, loser, other, setup)


def test_rows_built_again_between_a_read_and_its_write_are_a_conflict(fold_url: str) -> None:
    """A log-mode write marks the rows stale and a fold-mode read builds them again, between one
    report's read and its write: the rebuilt rows carry new versions, so the report folds again."""
    setup, ids = _shared_lessons(fold_url)
    first = Lamar(fold_url, k=2, seed=8)
    calls: list[int] = []

    def rebuild() -> None:
        calls.append(1)
        if len(calls) == 1:
            old = Lamar(fold_url + "&lamar_fold=off", k=2, seed=9)
            old.report(old.recall({"task": "x"}).episode_id, Signal.REVERTED)
            old.close()
            setup.evidence(ids[0])  # finds them stale: builds them from the log

    _rows_of(first)._between = rebuild
    first.report(first.recall({"task": "x"}).episode_id, Signal.SHIPPED)
    assert _rows_of(first).counters.conflicts == 1
    assert [setup.evidence(i).eligible for i in ids] == [2, 2, 2]
    _assert_rows_are_the_replay(fold_url, ids, first, setup)


def test_many_writers_on_the_same_rows_lose_no_fold(fold_url: str) -> None:
    """8 engines x 60 reports into the same 3 rows, retrying on conflicts and falling back to
    locks: every fold is in the rows, and the rows are the log's fold."""
    setup, ids = _shared_lessons(fold_url)
    errors: list[BaseException] = []
    engines = [Lamar(fold_url, k=2, seed=seed) for seed in range(20, 28)]
    barrier = threading.Barrier(len(engines))

    def agent(lam: Lamar) -> None:
        try:
            rng = random.Random(lam.seed)
            barrier.wait()
            for _ in range(60):
                lam.report(lam.recall({"task": "x"}).episode_id, rng.uniform(-1.0, 1.0))
        except BaseException as exc:  # noqa: BLE001 - shown by the assert
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(lam,)) for lam in engines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [setup.evidence(i).eligible for i in ids] == [480, 480, 480]
    assert _inbox(fold_url) == []
    _assert_rows_are_the_replay(fold_url, ids, *engines, setup)


# -- every call probes by key: no plan scans a table ---------------------------------------------


@pytest.mark.parametrize("fold_mode", ["on", "off"])
def test_no_call_scans_a_table_though_its_plans_were_made_while_the_tables_were_tiny(postgres_url: str,
                                                                                      fold_mode: str) -> None:
    """The functions are planned once per connection, generically, with whatever the tables held
    then; a plan made while a table was tiny (a new store) would scan it for ever after, however
    large it grows. In a schema of their own, two engines start on empty tables, the tables then
    grow (3 000 rows of another namespace in each), and the engines go on: recalls, reports folded
    from their recall or read first, a report whose rows moved under it (queued, then folded from
    the inbox), a retire, a recall too large to list its subsets. After the migration no table
    is read by a sequential scan, from the first call to the last; nor in the log mode."""
    schema = f"scan_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    url = namespace_url(postgres_url, "scan", options=f"-c search_path={schema}", lamar_fold=fold_mode)
    try:
        migrated = _seq_scans(postgres_url, schema, [PostgresStore(url, pool_size=1)])
        first, second = (Lamar(PostgresStore(url, pool_size=1), k=2, seed=seed) for seed in (1, 2))
        ids = [first.add(Experience(f"case {i}", f"do {i}")) for i in range(3)]
        for lam in (first, second, first):
            lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
        with psycopg.connect(postgres_url, autocommit=True, options=f"-c search_path={schema}") as conn:
            conn.execute("INSERT INTO lamar_lessons (namespace, id, added, status, scope, state) "
                         "SELECT 'filler', 'exp_' || i, i, 'active', '{}', '{}' FROM generate_series(1, 3000) AS i")
            conn.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) "
                         "SELECT 'filler', i, 'episode', 'episode:' || i, 0, '{}' FROM generate_series(1, 3000) AS i")
            conn.execute("INSERT INTO lamar_inbox (namespace, slot, ticket, key, time, data, lessons) "
                         "SELECT 'filler', i, i, 'outcome:' || i, 0, '{}', '{exp_1}' "
                         "FROM generate_series(1, 3000) AS i")
        for step in range(12):
            lam = (first, second)[step % 2]
            lam.report(lam.recall({"task": "x"}).episode_id, Signal.SHIPPED)
        if fold_mode == "on":
            episode = first.recall({"task": "x"}).episode_id
            _rows_of(first)._between = lambda: second.report(second.recall({"task": "x"}).episode_id, -1.0)
            first.report(episode, Signal.ACCEPTED)  # its rows moved: queued, then folded from the inbox
            _rows_of(first)._between = None
            assert _rows_of(first).counters.queued == 1
        second.report(first.recall({"task": "x"}).episode_id, Signal.REVERTED)  # recalled elsewhere: read first
        first.retire(ids[0])
        assert len(first.recall({f"k{i}": "v" for i in range(10)}).eligible) == 2
        used = _seq_scans(postgres_url, schema, [first.store, second.store])
        assert used["lamar_events"][1] > migrated["lamar_events"][1]  # the engines' counts arrived
        assert {table: seq - migrated[table][0] for table, (seq, _) in used.items()} == dict.fromkeys(used, 0), \
            (migrated, used)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _seq_scans(url: str, schema: str, stores: list[Any]) -> dict[str, tuple[int, int]]:
    """Close `stores`, then each table of `schema`: (sequential scans, index scans) so far. A
    backend's counts reach the statistics as it exits, so this waits for their backends to end."""
    pids = [store.connections.run(lambda conn: conn.info.backend_pid) for store in stores]
    for store in stores:
        store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(200):
            if not conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchall():
                break
            time.sleep(0.05)
        conn.execute("SELECT pg_stat_clear_snapshot()")
        return {table: (int(seq), int(idx or 0)) for table, seq, idx in conn.execute(
            "SELECT relname, seq_scan, idx_scan FROM pg_stat_user_tables WHERE schemaname = %s", (schema,))}


@pytest.mark.parametrize("damage", ["not a row", "{}\n[1, 2]", '{}\n["qq", "AAAA", [], {}, 1]'])
def test_a_damaged_row_is_a_corrupt_store_error_and_a_rebuild_repairs_it(fold_url: str, damage: str) -> None:
    setup, ids = _shared_lessons(fold_url)
    for reward in (1.0, -0.5, 0.5):
        setup.report(setup.recall({"task": "x"}).episode_id, reward)
    before = [setup.evidence(i).eligible for i in ids]
    store = PostgresStore(fold_url)
    store.connections.run(lambda conn: conn.execute("UPDATE lamar_lessons SET state = %s, version = version + 1 "
                                         "WHERE namespace = %s AND id = %s", (damage, store.namespace, ids[1])))
    store.close()
    fresh = Lamar(fold_url, k=2, seed=3)
    with pytest.raises(CorruptStore, match=f"row of lesson {ids[1]}.*rebuild"):
        fresh.recall({"task": "x"})
    fresh.rebuild()  # from the log, which the damage did not touch
    assert [fresh.evidence(i).eligible for i in ids] == before
    fresh.report(fresh.recall({"task": "x"}).episode_id, 1.0)
    assert [fresh.evidence(i).eligible for i in ids] == [n + 1 for n in before]


def test_merging_a_retired_lesson_leaves_the_count_of_active_lessons_as_the_log_folds_it(fold_url: str) -> None:
    """The count of lessons not retired (every verdict's divisor) drops once per lesson a merge
    retires: a lesson retired already, or merged already into another, is not counted again."""
    lam = Lamar(fold_url, k=2, seed=1)
    a, b, c = (lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t"))) for i in range(3))
    lam.retire(b)
    lam.store.append([Event("merge", {"into": a, "from": [b]})])
    lam.store.append([Event("merge", {"into": c, "from": [b]})])
    lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    replay = _replayed(fold_url)
    assert lam.store.rows.lessons().active == replay.stats()["experiences"] - 1 == 2  # type: ignore[attr-defined]
    assert lam.evidence(a) == replay.evidence(a) and lam.evidence(c) == replay.evidence(c)
    replay.close()
    lam.close()


def test_rows_another_release_folded_under_other_tuning_are_built_again_not_refused(fold_url: str) -> None:
    """Rows whose text this Lamar cannot decode (a release whose lesson state holds other numbers),
    folded under tuning other than this engine's, are stale for it: it builds them again from the
    log, as for any other tuning. (Under its own tuning such a row is refused: the test above.)"""
    setup, ids = _shared_lessons(fold_url)
    for reward in (1.0, -0.5, 0.5):
        setup.report(setup.recall({"task": "x"}).episode_id, reward)
    before = [setup.evidence(i).eligible for i in ids]
    store = PostgresStore(fold_url)
    store.connections.run(lambda conn: conn.execute(
        "UPDATE lamar_lessons SET state = '{}' || chr(10) || '[\"qq\", \"AAAA\", [], {}, 1]', version = version + 1 "
        "WHERE namespace = %s", (store.namespace,)))
    store.connections.run(lambda conn: conn.execute(
        "UPDATE lamar_namespaces SET folded = '{\"warmup\": 3}' WHERE namespace = %s", (store.namespace,)))
    store.close()
    fresh = Lamar(fold_url, k=2, seed=3)
    fresh.report(fresh.recall({"task": "x"}).episode_id, 1.0)
    assert [fresh.evidence(i).eligible for i in ids] == [n + 1 for n in before]
    fresh.close()
    setup.close()


def test_a_report_that_gets_no_connection_fails_with_a_store_error(postgres_url: str) -> None:
    """The engine's first report writes through the rows directly; a server it cannot reach gives
    the StoreError that integrations fail open on (the write certainly did not happen), and the
    report succeeds once a connection is free."""
    from lamar import StoreError

    namespace = unique_namespace()
    try:
        store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold="on"), pool_size=1, timeout=0.5)
        lam = Lamar(store, k=2, seed=0)
        lam.add(Experience("case", "do"))
        episode = lam.recall({}).episode_id
        # The pool's one connection is held by another part of the program.
        with (store.connections.connection(),
              pytest.raises(StoreError, match="stayed in use.*nothing of this call was kept")):
            lam.report(episode, Signal.SHIPPED)
        lam.report(episode, Signal.SHIPPED)
        assert lam.stats()["reports"] == 1
        lam.close()
    finally:
        drop_namespaces(postgres_url, namespace)


def test_no_build_hands_out_a_version_a_row_had_even_after_a_scrub_deleted_the_rows(fold_url: str) -> None:
    """Builds in a row, one after a checkpoint and one after a scrub (which deletes the rows and
    their versions, and stores no event) each number the rows above every version they had: an
    engine that parsed a row at an old version reads the scrubbed text, not its copy."""
    lam = Lamar(fold_url, k=2, seed=1)
    secret = lam.add(Experience("Quorvath's build fails", "page Quorvath"))
    lam.add(Experience("the build fails", "clear the cache"))
    for _ in range(6):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    store = lam.store

    def versions() -> set[int]:
        return {int(v) for (v,) in store.connections.run(lambda conn: conn.execute(  # type: ignore[attr-defined]
            "SELECT version FROM lamar_lessons WHERE namespace = %s", (store.namespace,)).fetchall())}  # type: ignore[attr-defined]

    seen = versions()
    lam.rebuild()
    other = Lamar(fold_url, k=2, seed=2)
    assert other.get(secret).action == "page Quorvath"  # parsed at the version this build gave
    for step in ("rebuild", "checkpoint", "scrub"):
        seen |= versions()
        if step == "checkpoint":
            assert lam.checkpoint() is True
        elif step == "scrub":
            changed, _ = scrubbed(store.read(), secret, False, "ops", 1.0, lam.policy)  # the snapshot holds the text
            assert store.scrub(changed) == 1  # type: ignore[attr-defined]
        lam.rebuild()
        if step == "scrub":
            assert other.get(secret).action == "[erased]"
        assert versions().isdisjoint(seen), step
    other.close()
    lam.close()


def test_an_engine_that_folds_another_engines_checkpoint_can_checkpoint_too(fold_url: str) -> None:
    # A snapshot folded from the log's tail is an event of the settled log like any other: the
    # fold stays settled, so this engine's own checkpoint is not refused as if a write were in flight.
    one, other = Lamar(fold_url, k=1, seed=1), Lamar(fold_url, k=1, seed=2)
    one.add(Experience("the build fails", "read the first error", scope=Scope(task="t")))
    for _ in range(3):
        one.report(one.recall({"task": "t"}).episode_id, Signal.SHIPPED)
        other.report(other.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    one.stats()  # settled through the last report
    other.report(other.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert other.checkpoint() is True  # a snapshot past what the first engine folded
    assert one.checkpoint() is False  # its sync folds that snapshot from the tail: checkpointed that far
    one.report(one.recall({"task": "t"}).episode_id, Signal.SHIPPED)
    assert one.checkpoint() is True
    assert next(e.kind for e in one.store.read()) == "snapshot"
    one.close()
    other.close()
