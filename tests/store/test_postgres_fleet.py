"""PostgresStore as a fleet's store: many processes at once, and namespaces that never leak."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lamar import Experience, Lamar, LamarError, Scope, Signal, StoreError
from lamar.conformance import DEFAULT_OPENER, WORKER
from lamar.store.postgres import PostgresStore
from tests.conftest import POSTGRES_URL, require_service
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

REPO = Path(__file__).parents[2]
# Per process: enough that the fleet still writes for seconds after the three pauses, which end
# within about 3 s of the 300th event.
FLEET_EPISODES = 300


@pytest.mark.parametrize("mode", ["log", "fold"])
def test_eight_processes_count_every_report_once_and_a_paused_one_stalls_nobody(
        tmp_path: Path, postgres_url: str, mode: str) -> None:
    """8 x 300 recall+report at once, in each mode; one process is stopped (SIGSTOP) now and
    then wherever it is, mid-write included. The sessions skip the fsync at COMMIT
    (synchronous_commit=off): locks, visibility and order are the same, only a server crash
    could drop the last acknowledged writes, which this test does not do; it runs 3x faster."""
    namespace = unique_namespace("fleet")
    url = namespace_url(postgres_url, namespace, options="-c synchronous_commit=off")
    url += "&lamar_fold=on" if mode == "fold" else ""
    try:
        _run_fleet(tmp_path, url)
    finally:
        drop_namespaces(postgres_url, namespace)


def _run_fleet(tmp_path: Path, url: str) -> None:
    lam = Lamar(url, k=2, seed=0)
    for i in range(6):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task=f"t{i % 2}")))
    logs = [tmp_path / f"w{i}.log" for i in range(8)]
    workers = [
        subprocess.Popen([sys.executable, "-c", WORKER.format(
            paths=[str(REPO)], opener=DEFAULT_OPENER, location=url, seed=seed, log=str(log), episodes=FLEET_EPISODES)],
            stderr=subprocess.PIPE)
        for seed, log in enumerate(logs)
    ]
    # Pause one client now and then, wherever it is (mid-write included): the rest go on.
    deadline = time.monotonic() + 60
    while not logs[0].exists() or len(lam.store.read()) < 300:
        assert time.monotonic() < deadline, "the workers did not start writing"
        time.sleep(0.1)
    rng = random.Random(3)
    progress = []
    for _ in range(3):
        workers[0].send_signal(signal.SIGSTOP)
        before = len(lam.store.read())
        time.sleep(0.5)
        progress.append(len(lam.store.read()) - before)
        workers[0].send_signal(signal.SIGCONT)
        time.sleep(rng.uniform(0.2, 1.0))
    for w in workers:
        _, err = w.communicate(timeout=240)
        assert w.returncode == 0, err.decode()[-2000:]
    assert min(progress) > 10, progress

    done = [line for log in logs for line in log.read_text().split()]
    total = 8 * FLEET_EPISODES
    assert len(done) == total and len(set(done)) == total
    stats = lam.stats()
    assert (stats["episodes"], stats["reports"], stats["unreported"]) == (total, total, 0)
    outcomes = Counter(e.data["episode"] for e in lam.store.read() if e.kind == "outcome")
    assert set(outcomes) == set(done) and set(outcomes.values()) == {1}
    live = {e.id: lam.evidence(e.id) for e in lam.experiences()}
    if lam.store.rows is not None:  # the fold mode: the rows are the in-process fold of the log
        replay = Lamar(url.replace("&lamar_fold=on", ""), k=2, seed=0)
        assert {e.id: replay.evidence(e.id) for e in replay.experiences()} == live
        replay.close()
    lam.rebuild()
    assert {e.id: lam.evidence(e.id) for e in lam.experiences()} == live
    lam.close()


# -- namespace isolation ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Namespace A with lessons, episodes, outcomes and a sleep report; B, its neighbour."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    with pytest.MonkeyPatch.context() as home:  # the sleep's figures go in ~/.lamar: a home of the module's own
        home.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        yield from _neighbours()


def _neighbours() -> Iterator[dict[str, Any]]:
    a_ns, b_ns = unique_namespace("a"), unique_namespace("b")
    a = Lamar(PostgresStore(POSTGRES_URL, namespace=a_ns), k=2, seed=1)
    ids = [a.add(Experience("the build fails", "clear the cache", scope=Scope(task="build"))),
           a.add(Experience("The build fails!", "Clear the cache.", scope=Scope(task="build"))),
           a.add(Experience("the build fails", "reinstall the toolchain", scope=Scope(task="build")))]
    episodes = []
    for i in range(6):
        rec = a.recall({"task": "build"})
        episodes.append(rec.episode_id)
        if i % 2:
            a.report(rec.episode_id, Signal.SHIPPED)
    report = a.sleep()
    assert {p.kind for p in report} >= {"merge", "contradiction"}
    b = Lamar(PostgresStore(POSTGRES_URL, namespace=b_ns), k=2, seed=2)
    own = b.add(Experience("the build fails", "read the log", scope=Scope(task="build")))
    yield {"a": a, "b": b, "ids": ids, "episodes": episodes, "report": report, "own": own}
    a.close()
    b.close()
    drop_namespaces(POSTGRES_URL, a_ns, b_ns)


def _foreign_ids(data: dict[str, Any]) -> st.SearchStrategy[str]:
    known = data["ids"] + data["episodes"] + [p.id for p in data["report"]]
    return st.one_of(
        st.sampled_from(known),
        st.sampled_from(known).map(lambda s: s + "' OR '1'='1"),
        st.text(max_size=30),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_nothing_of_one_namespace_is_visible_or_changeable_from_another(
        neighbours: dict[str, Any], data: st.DataObject) -> None:
    a, b = neighbours["a"], neighbours["b"]
    a_tail = a.store.read()[-1].seq
    b_lessons = b.experiences()
    target = data.draw(_foreign_ids(neighbours), label="id")
    action = data.draw(st.sampled_from(
        ["get", "evidence", "episode", "report", "replace", "retire", "revive", "recall", "apply", "apply_only"]),
        label="action")
    if action == "recall":  # candidates from A are simply not there
        rec = b.recall({"task": "build"}, candidates=[target, *neighbours["ids"]])
        assert (rec.eligible, rec.held_out, rec.experiences) == ((), (), [])
    elif action == "apply":
        result = b.apply(neighbours["report"])
        assert result.applied == []
        assert all("not in this store" in why for _, why in result.skipped)
    else:
        calls = {
            "get": lambda: b.get(target),
            "evidence": lambda: b.evidence(target),
            "episode": lambda: b.episode(target),
            "report": lambda: b.report(target, Signal.REVERTED),
            "replace": lambda: b.report(target, -1.0, replace=True),
            "retire": lambda: b.retire(target, "from B"),
            "revive": lambda: b.revive(target, "from B"),
            "apply_only": lambda: b.apply(neighbours["report"], only=[target + "-x"]),
        }
        with pytest.raises(LamarError):
            calls[action]()
    assert a.store.read(a_tail) == []  # A was not written
    assert b.experiences() == b_lessons  # nor were B's lessons touched
    assert not {e.key for e in b.store.read() if e.key} & {e.key for e in a.store.read() if e.key}


@settings(max_examples=40, deadline=None)
@given(name=st.text(max_size=70) | st.from_regex(r"[a-z0-9][a-z0-9_.-]{0,20}", fullmatch=True))
def test_a_namespace_is_a_safe_name_or_refused(name: str) -> None:
    """In the URL or as a keyword, a name is taken whole or refused (never cut at '&' or '#')."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    for opened in (lambda: PostgresStore(namespace_url(POSTGRES_URL, name)),
                   lambda: PostgresStore(POSTGRES_URL, namespace=name)):
        try:
            store = opened()
        except StoreError as exc:
            assert "invalid namespace" in str(exc)
            continue
        again = PostgresStore(store.location)
        assert store.namespace == again.namespace == name
        store.close()
        again.close()
