"""`Lamar.erase` on PostgreSQL, in the log mode and the fold mode: the lesson's text and the
contexts of its episodes leave every row of the namespace (the log, the lesson rows, the saved
state, the inbox) and a later `lamar export`, while every lesson's verdict, lift and bounds, read
by a new engine, stay as they were."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lamar import Experience, Lamar, Scope, Status
from lamar.store import open_store
from tests.store.test_postgres import backends, drop_namespaces, namespace_url, unique_namespace

NAME = "Ottoline Brandquist"
TABLES = ("lamar_events", "lamar_lessons", "lamar_state", "lamar_inbox", "lamar_rewards")


@pytest.fixture(params=["off", "on"], ids=["log", "fold"])
def url(request: pytest.FixtureRequest, postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("erase")
    yield namespace_url(postgres_url, namespace, lamar_fold=request.param)
    drop_namespaces(postgres_url, namespace)


def _rows(url: str) -> str:
    """Every row the namespace holds in any of Lamar's tables, as PostgreSQL prints it."""
    store = open_store(url)
    namespace = store.namespace  # type: ignore[attr-defined]
    store.close()
    with psycopg.connect(url.split("?", 1)[0], autocommit=True) as conn:
        return "\n".join(row[0] for table in TABLES
                         if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() != (None,)
                         for row in conn.execute(f"SELECT t::text FROM {table} t WHERE namespace = %s",
                                                 (namespace,)).fetchall())


def _evidence(location: str) -> dict[str, tuple[object, ...]]:
    with Lamar(location) as lam:
        return {e.id: (ev.verdict, ev.lift, ev.lower, ev.upper, ev.randomized, ev.injected)
                for e in lam.experiences() for ev in [lam.evidence(e.id)]}


# A reader at the defaults checks what erase left in rows folded at holdout 0.5: two tunings on purpose.
@pytest.mark.filterwarnings("ignore:the lesson rows of .* were folded under other tuning:UserWarning")
def test_erase_leaves_no_text_in_any_row_or_an_export_and_keeps_every_verdict(url: str, tmp_path: Path) -> None:
    lam = Lamar(url, k=2, seed=4, holdout=0.5)
    secret = lam.add(Experience(f"{NAME} reports a crash", f"ask {NAME} for the log", scope=Scope(task="t")))
    other = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    rng = random.Random(4)
    for n in range(300):
        rec = lam.recall({"task": "t", "asked_by": NAME if n % 2 else "ops"})
        reward = 0.1 + 0.6 * (secret in rec.ids) - 0.2 * (other in rec.ids) + rng.gauss(0.0, 0.3)
        lam.report(rec.episode_id, max(-1.0, min(1.0, reward)))
    lam.checkpoint()  # a saved state holding the text too
    before = _evidence(url)
    assert before[secret][0] == "helps" and NAME in _rows(url)  # the checks below can fail

    erased = lam.erase(secret, contexts=True, by="the DPO", reason="a request")
    lam.close()

    assert erased.episodes and NAME not in _rows(url)
    assert _evidence(url) == before
    with Lamar(url) as again:
        lesson = again.get(secret)
        assert (lesson.precondition, lesson.action, lesson.status) == ("[erased]", "[erased]", Status.RETIRED)
        assert again.history(secret).trail[-1][1] == "erased by the DPO: a request"
    copy = tmp_path / "copy.db"
    out = subprocess.run([sys.executable, "-m", "lamar.cli", "export", "--store", url, "--out", str(copy)],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert not [p for p in tmp_path.iterdir() if NAME.encode() in p.read_bytes()]
    assert _evidence(str(copy)) == before


def test_a_scrub_waits_for_an_apply_writing_in_the_fold_mode_instead_of_deadlocking(postgres_url: str) -> None:
    """A fold-mode write holds the namespace's write lock shared from its start, and its `applied`
    event's trigger then takes the rewrite lock shared: a scrub (`erase`) takes them in that order."""
    import threading

    from lamar.store.postgres.locks import ROWS_LOCK
    from lamar.store.postgres.store import _REWRITE_LOCK

    namespace = unique_namespace("scrub-order")
    location = namespace_url(postgres_url, namespace, lamar_fold="on")
    Lamar(location).close()
    store = open_store(location)
    try:
        with psycopg.connect(postgres_url) as writer:  # an apply's write, stopped between its two locks
            writer.execute("SELECT pg_advisory_xact_lock_shared(%s, hashtext(%s))", (ROWS_LOCK, namespace))
            failed: list[BaseException] = []

            def scrub() -> None:
                try:
                    store.scrub([])  # type: ignore[attr-defined]
                except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                    failed.append(exc)

            scrubber = threading.Thread(target=scrub)
            scrubber.start()
            scrubber.join(1.0)  # the scrub waits now, on the write lock
            writer.execute("SET deadlock_timeout = '100ms'")
            writer.execute("SELECT pg_advisory_xact_lock_shared(%s, hashtext(%s))", (_REWRITE_LOCK, namespace))
            writer.commit()
            scrubber.join(60)
        assert not failed, failed
    finally:
        store.close()
        drop_namespaces(postgres_url, namespace)


# A reader at the defaults checks what erase left in rows folded at holdout 0.5: two tunings on purpose.
@pytest.mark.filterwarnings("ignore:the lesson rows of .* were folded under other tuning:UserWarning")
def test_erase_leaves_no_scope_value_in_any_row_and_keeps_the_other_lessons_evidence(url: str) -> None:
    customer = "Jane Doe"
    lam = Lamar(url, k=2, seed=4, holdout=0.5)
    secret = lam.add(Experience("the deploy fails", "roll back first",
                                scope=Scope(project="acme-for-jane-doe", customer=customer)))
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="acme-for-jane-doe")))
    lam.add(Experience("a test flakes", "run it again"))
    rng = random.Random(4)
    for n in range(120):
        rec = lam.recall({"project": "acme-for-jane-doe", "customer": customer if n % 2 else "Bo"})
        lam.report(rec.episode_id, rng.uniform(-1.0, 1.0))
        if n == 80:
            lam.checkpoint()  # a saved state holding the scope too
    before = _evidence(url)
    assert customer in _rows(url)  # the check below can fail

    lam.erase(secret, contexts=True)
    lam.close()

    assert customer not in _rows(url)
    after = _evidence(url)
    assert {i: f for i, f in after.items() if i != secret} == {i: f for i, f in before.items() if i != secret}
    with Lamar(url) as again:
        assert dict(again.get(secret).scope) == {"customer": "[erased]", "project": "[erased]"}


def test_an_engine_reads_a_lesson_erased_as_erased_in_both_modes(url: str) -> None:
    """The erasing engine, and another that read the lesson before, read it erased and retired at
    once: the rows built from the scrubbed log take versions neither has seen before."""
    lam, other = Lamar(url, seed=0), Lamar(url, seed=0)
    exp_id = lam.add(Experience("the build fails", f"ask {NAME}", id="lesson-1"))  # never read back
    assert other.get(exp_id).action == f"ask {NAME}"
    lam.erase(exp_id)
    for engine in (lam, other):
        (lesson,) = engine.experiences()
        assert (lesson.action, lesson.status) == ("[erased]", Status.RETIRED)
    lam.close()
    other.close()


def test_an_erase_stopped_behind_its_event_by_another_engine_is_finished_by_a_writer_in_both_modes(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that wrote before another's erase stopped behind its event asks the store again
    for pending erase events once a grace has passed since it last asked (the fold mode folds no
    log on a write), and finishes the scrub; an engine that only reads leaves the text."""
    from lamar.state import erasure

    writer, exp_id = _stopped_erase(url)
    with Lamar(url) as reader:
        reader.stats()
    writer.recall({"task": "t"})  # within the grace: the eraser may still be scrubbing
    assert NAME in _rows(url)
    monkeypatch.setattr(erasure, "GRACE", 0.0)
    writer.recall({"task": "t"})
    assert NAME not in _rows(url)
    assert writer.get(exp_id).action == "[erased]"
    done = writer.erase(exp_id)
    writer.close()
    assert (done.again, done.events) == (True, 0)


def test_an_erase_stopped_a_grace_ago_is_finished_by_the_next_writer_however_short_its_run_in_both_modes(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Engines opened after an erase stopped behind its event, each for one call, as a CLI or a hook
    runs: one within the grace leaves the scrub to the eraser, the first writer after it finishes
    it. The fold mode folds no log on a write, and its rows were built since the stop: the rows
    name the pending erase, so that writer learns of it without asking the server first."""
    import time

    from lamar.state import erasure

    monkeypatch.setattr(erasure, "GRACE", 2.0)
    writer, exp_id = _stopped_erase(url)
    writer.close()
    with Lamar(url) as reader:
        reader.stats()
    with Lamar(url, k=2, seed=4) as early:  # within the grace: the eraser may still be scrubbing
        early.recall({"task": "t"})
    assert NAME in _rows(url)
    time.sleep(2.1)
    with Lamar(url, k=2, seed=5) as late:  # open for one recall, far less than a grace
        late.recall({"task": "t"})
        assert late.get(exp_id).action == "[erased]"
    assert NAME not in _rows(url)


def test_in_the_gap_before_a_stopped_erase_is_finished_no_read_shows_the_text_and_no_copy_takes_it(
        url: str, tmp_path: Path) -> None:
    """An erase stopped behind its event, before the next writer a minute after it (or `erase` run
    again) finishes its scrub: the text is still in the log's rows, but no engine or command shows it (every
    fold reads the lesson erased), and a copy of the store (`lamar export`) takes the text out, since
    no scrub would follow it there."""
    from lamar.store.memory import MemoryStore
    from lamar.store.transfer import transfer

    writer, exp_id = _stopped_erase(url)
    writer.close()
    assert NAME in _rows(url)
    with Lamar(url, k=2, seed=3) as fresh:
        rec = fresh.recall({"task": "t"})
        seen = [fresh.get(exp_id), fresh.experiences(), fresh.history(exp_id), fresh.episode(rec.episode_id),
                fresh.stats(), rec.as_prompt()]
        assert NAME not in repr(seen) and fresh.get(exp_id).action == "[erased]"
        copy = MemoryStore()
        assert transfer(fresh.store, copy).copied > 0
        assert NAME not in repr([e.data for e in copy.read()])
    out_file = tmp_path / "copy.json"
    for command in (["show", exp_id], ["ls"], ["stats"], ["export", "--out", str(out_file)]):
        out = subprocess.run([sys.executable, "-m", "lamar.cli", "--store", url, *command], capture_output=True,
                             text=True, timeout=120, check=False)
        assert NAME not in out.stdout + out.stderr
        assert out.returncode == 0, out.stderr
    assert NAME.encode() not in out_file.read_bytes()
    with Lamar(str(out_file)) as copied:
        assert copied.get(exp_id).action == "[erased]"
    assert NAME in _rows(url)  # the source itself is left to its next writer (or `erase` run again)


def _stopped_erase(url: str) -> tuple[Lamar, str]:
    """A writer with a lesson, and another engine's erase of it stopped behind its event."""
    from lamar.conformance_erase import erase_stopped_behind_its_event

    writer = Lamar(url, k=2, seed=1)
    exp_id = writer.add(Experience(f"{NAME}'s build fails", f"page {NAME}", scope=Scope(task="t")))
    for _ in range(5):
        writer.report(writer.recall({"task": "t"}).episode_id, 1.0)
    eraser = Lamar(url, k=2, seed=2)
    erase_stopped_behind_its_event(eraser, exp_id)
    eraser.close()
    return writer, exp_id


def test_a_checkpoint_finishes_a_stopped_erase_before_it_holds_the_log_in_both_modes(url: str) -> None:
    """The scrub takes the namespace's write lock itself: run under the checkpoint's hold of it (the
    fold mode), it waited for the checkpoint for ever, and every fold-mode write with it."""
    writer, _ = _stopped_erase(url)
    writer.close()
    checkpoint = f"from lamar import Lamar\nwith Lamar({url!r}) as lam:\n    print(lam.checkpoint())"
    try:
        out = subprocess.run([sys.executable, "-c", checkpoint], capture_output=True, text=True, timeout=60,
                             check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("the checkpoint waited for its own lock")
    assert (out.returncode, out.stdout.strip()) == (0, "True"), out.stderr
    assert NAME not in _rows(url)


def test_a_write_stands_when_finishing_a_stopped_erase_fails_in_both_modes(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finishing another engine's erase is the writer's cleanup, after its own write went through: a
    store that fails then (a lost connection) fails none of its recalls and reports, and the
    cleanup is tried again a grace later."""
    from lamar import StoreError
    from lamar.state import erasure

    writer, exp_id = _stopped_erase(url)
    monkeypatch.setattr(erasure, "GRACE", 0.0)

    def lost(keys: list[str]) -> list[object]:
        raise StoreError("lost the connection")

    with monkeypatch.context() as patch:
        patch.setattr(writer.store, "lookup", lost)
        writer.stats()  # the log mode finishes on a read of a writer
        episode = writer.recall({"task": "t"}).episode_id
        writer.report(episode, 1.0)
    assert NAME in _rows(url)
    writer.recall({"task": "t"})
    assert NAME not in _rows(url)
    assert writer.get(exp_id).action == "[erased]"
    writer.close()


_KILLED_ERASER = """import os, signal, sys
from lamar import Lamar
lam = Lamar(sys.argv[1])
append = lam.store.append
def killed(events, **kw):
    if any(e.kind == "erase" for e in events):
        os.kill(os.getpid(), signal.SIGKILL)  # after the erase's first step, before its event
    return append(events, **kw)
lam.store.append = killed
lam.erase(sys.argv[2])
"""


def _kill_an_eraser(url: str, exp_id: str) -> None:
    """A real process that erases `exp_id` and is SIGKILLed after its first step: the rows' texts
    blanked, the rows left stale (no engine built them again)."""
    done = subprocess.run([sys.executable, "-c", _KILLED_ERASER, url, exp_id], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == -9, done.stderr


def test_a_report_after_a_killed_erase_blanked_the_rows_it_recalled_from_is_stored(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine that read the rows while a killed eraser had left them blank kept their blank text,
    and its next report of an episode it recalled from them folded that text: `CorruptStore` on a
    sound store, and the report was lost."""
    namespace = unique_namespace("erase")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    try:
        lam = Lamar(url, k=2, seed=1)
        for i in range(4):
            lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
        target = lam.add(Experience(f"{NAME}'s build fails", f"page {NAME}", scope=Scope(task="t9")))
        for _ in range(6):  # reports that find the rows unmoved: the next one folds from its recall's read
            lam.report(lam.recall({"task": "t0"}).episode_id, 1.0)
        episode = lam.recall({"task": "t0"}).episode_id
        _kill_an_eraser(url, target)
        other = _blanked_after_the_next_build(monkeypatch, lam, url)
        lam.recall({"task": "t0"})  # reads the t0 rows blank
        lam.recall({"task": "t1"})  # builds the rows; reads only t1's
        lam.report(episode, 1.0)
        assert lam.episode(episode).reward == 1.0
        assert lam.stats()["reports"] == 7
        lam.close()
        other.close()
        with Lamar(url) as fresh:
            assert fresh.episode(episode).reward == 1.0
    finally:
        drop_namespaces(postgres_url, namespace)


def test_a_write_whose_unlocked_read_straddles_a_scrub_is_folded_again(postgres_url: str) -> None:
    """A fold-mode write that reads its rows without the lock reads their tuning and their text in
    two statements; a scrub that committed between them (rows blanked, marked stale) made the
    second read blank text under the first's tuning: `CorruptStore` on a sound store, and the
    retire was lost. The scrub here commits while the read waits for the rows' table."""
    import threading
    import time

    namespace, app = unique_namespace("erase"), unique_namespace("straddle")
    url = namespace_url(postgres_url, namespace, lamar_fold="on", application_name=app)
    blocker = psycopg.connect(postgres_url)
    try:
        lam = Lamar(url, k=2, seed=1)
        exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
        rows = lam.store.rows  # type: ignore[attr-defined]
        attempt = rows._attempt

        def scrub_once_the_read_waits() -> None:
            while not backends(postgres_url, app, waiting=True):
                time.sleep(0.005)
            blocker.execute("UPDATE lamar_lessons SET state = '', scope = '{}'::jsonb, version = version + 1 "
                            "WHERE namespace = %s", (namespace,))
            blocker.execute("UPDATE lamar_namespaces SET folded = NULL WHERE namespace = %s", (namespace,))
            blocker.commit()

        def read_behind_a_scrub(*args: object, **kwargs: object) -> object:
            rows._attempt = attempt
            blocker.execute("LOCK TABLE lamar_lessons IN ACCESS EXCLUSIVE MODE")  # for well under a second
            threading.Thread(target=scrub_once_the_read_waits).start()
            return attempt(*args, **kwargs)

        rows._attempt = read_behind_a_scrub
        lam.retire(exp_id)
        assert lam.get(exp_id).status is Status.RETIRED
        lam.close()
        with Lamar(url) as fresh:
            assert fresh.get(exp_id).status is Status.RETIRED
    finally:
        blocker.close()
        drop_namespaces(postgres_url, namespace)


def test_a_lesson_read_while_erases_keep_blanking_the_rows_is_found(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows a killed eraser left blank are built again by the next read; another erase that blanked
    them between that build and the read after it made the read list no lesson: `get` of an
    existing lesson raised UnknownExperience, and a recall found none eligible."""
    namespace = unique_namespace("erase")
    url = namespace_url(postgres_url, namespace, lamar_fold="on")
    try:
        lam = Lamar(url, k=2, seed=1)
        exp_id = lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
        target = lam.add(Experience(f"{NAME}'s build fails", f"page {NAME}", scope=Scope(task="t9")))
        _kill_an_eraser(url, target)
        other = _blanked_after_the_next_build(monkeypatch, lam, url)
        assert lam.get(exp_id).action == "clear the cache"
        assert lam.recall({"task": "t"}).eligible == (exp_id,)
        lam.close()
        other.close()
    finally:
        drop_namespaces(postgres_url, namespace)


def _blanked_after_the_next_build(monkeypatch: pytest.MonkeyPatch, lam: Lamar, url: str) -> Lamar:
    """Another engine on `url` blanks the rows (an erase's first step) right after `lam`'s next
    build of them, before `lam` reads them; that engine, for the test to close."""
    rows, other = lam.store.rows, Lamar(url)  # type: ignore[attr-defined]
    build = rows.build

    def built_then_blanked_again(*args: object, **kwargs: object) -> None:
        build(*args, **kwargs)
        monkeypatch.setattr(rows, "build", build)
        other.store.scrub([])

    monkeypatch.setattr(rows, "build", built_then_blanked_again)
    return other
