"""A replaced report in PostgreSQL's fold mode: the engine undoes the outcome it replaces from a mark
and folds again from there, then rewrites only the rows that changed, under the namespace's write lock."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lamar import Experience, Lamar, Scope, Signal
from lamar.state.cache import FoldCache
from lamar.store.base import Event
from tests.state.seam import folded
from tests.store.test_postgres import compared_evidence, drop_namespaces, namespace_url, unique_namespace
from tests.store.test_postgres_fold import _assert_rows_are_the_replay, _decisive, _rows

PROJECTS = ["p0", "p1", "p2", "p3"]


@pytest.fixture
def url(postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("pgfold-replace")
    yield namespace_url(postgres_url, namespace, options="-c synchronous_commit=off") + "&lamar_fold=on"
    drop_namespaces(postgres_url, namespace)


def _engine(location: str) -> Lamar:
    lam = Lamar(location, k=2, seed=3, warmup=1, holdout=0.5)
    for i in range(8):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project=PROJECTS[i % 4]), id=f"L{i}"))
    return lam


def _folds_of(cache: FoldCache) -> list[int]:
    """The seqs of the events `cache` folds from now on, a whole log's or a refold's."""
    seqs: list[int] = []
    fold = cache.fold

    def counted(event: Event, *again: bool) -> None:
        seqs.append(event.seq)
        fold(event, *again)

    cache.fold = counted  # type: ignore[method-assign]
    return seqs


def _versions(location: str) -> dict[str, int]:
    base, _, query = location.partition("?")
    namespace = dict(part.split("=", 1) for part in query.split("&"))["lamar_namespace"]
    with psycopg.connect(base) as conn:
        rows = conn.execute("SELECT id, version FROM lamar_lessons WHERE namespace = %s", (namespace,)).fetchall()
    return {str(i): int(v) for i, v in rows}


def _episodes(lam: Lamar, rng: random.Random, n: int, projects: list[str]) -> list[str]:
    ids = []
    for i in range(n):
        rec = lam.recall({"project": projects[i % len(projects)], "lang": rng.choice(["py", "go"])})
        lam.report(rec.episode_id, rng.choice([1.0, -1.0, 0.5, -0.25]))
        ids.append(rec.episode_id)
    return ids


def test_a_replaced_report_refolds_from_a_mark_and_rewrites_only_the_rows_it_changed(url: str) -> None:
    lam = _engine(url)
    rng = random.Random(5)
    _episodes(lam, rng, 400, PROJECTS)
    late = _episodes(lam, rng, 150, ["p0"])  # the last 300 events touch p0's two lessons only
    cache = folded(lam).cache
    seqs = _folds_of(cache)
    before = _versions(url)
    lam.report(late[-1], -1.0, replace=True)
    # The first replacement in a process folds the log once (no state was saved), then from a mark.
    assert len(seqs) <= 1100 + 2 * 128 + 2, len(seqs)
    after = _versions(url)
    assert {i for i in after if after[i] != before[i]} == {"L0", "L4"}  # p0's rows; no build of every row
    _episodes(lam, rng, 30, ["p0", "p1"])
    seqs.clear()
    lam.report(late[-2], Signal.SHIPPED, replace=True)
    assert 0 < len(seqs) <= 60 + 2 * 128 + 2, len(seqs)  # the tail since the last fold, and a refold from a mark
    lam.close()
    _assert_rows_are_the_replay(url, [f"L{i}" for i in range(8)])


def _observe(lam: Lamar) -> dict[str, Any]:
    stats = dict(lam.stats())
    for key in ("store", "events", "compacted"):
        stats.pop(key, None)
    return {"evidence": {f"L{i}": compared_evidence(lam, f"L{i}") for i in range(8)}, "stats": stats,
            "pending": [(dict(p.context), p.injected) for p in lam.pending()]}


@pytest.mark.parametrize("seed", [0, 1])
def test_a_replaced_report_gives_the_state_a_fresh_fold_of_the_final_reports_gives(
        url: str, tmp_path: Path, seed: int) -> None:
    """The same calls on memory, SQLite and the fold mode: reports replaced once and again, recently
    and long ago (before any mark: the whole log folded again), and a retire and a revive between
    replacements. The rows equal a build from the log, bit for bit, and each engine's evidence,
    stats and pending episodes equal the other stores'."""
    sides = {name: _engine(location) for name, location in
             (("memory", ":memory:"), ("sqlite", str(tmp_path / "s.db")), ("postgres", url))}
    mine: dict[str, list[str]] = {name: [] for name in sides}  # each engine draws its own episode ids
    plan = random.Random(seed)
    for step in range(6):
        for name, lam in sides.items():
            mine[name] += _episodes(lam, random.Random(seed * 10 + step), 60, PROJECTS)
        count = len(mine["memory"])
        picks = [plan.randrange(count - 60, count), plan.randrange(count), count - 1]
        signal = plan.choice([Signal.SHIPPED, Signal.REVERTED, 0.25])
        for name, lam in sides.items():
            for pick in picks:
                lam.report(mine[name][pick], signal, replace=True)
            if step == 3:
                lam.retire("L5")
            if step == 4:
                lam.revive("L5")
    want = _observe(sides["memory"])
    for name in ("sqlite", "postgres"):
        assert _observe(sides[name]) == want, name
    rows = _rows(url)
    sides["postgres"].rebuild()
    assert _rows(url) == rows  # a build from the whole log writes the same rows
    for lam in sides.values():
        lam.close()


def test_a_late_report_over_a_pending_default_rewrites_only_its_rows(url: str) -> None:
    lam = Lamar(url, k=2, seed=10, pending_after=0.0, pending_outcome=Signal.ACCEPTED)
    for i in range(8):
        lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(project=PROJECTS[i % 4]), id=f"L{i}"))
    rng = random.Random(2)
    _episodes(lam, rng, 200, PROJECTS)
    _episodes(lam, rng, 150, ["p2"])
    late = lam.recall({"project": "p2"})  # its own recall settles it at once: the default stands in
    assert lam.episode(late.episode_id).settled == "default"
    before = _versions(url)
    lam.report(late.episode_id, Signal.REVERTED)  # replaces the default
    after = _versions(url)
    assert {i for i in after if after[i] != before[i]} == {"L2", "L6"}
    assert lam.episode(late.episode_id).signal == "reverted"
    lam.close()
    replay = Lamar(url + "&lamar_fold=off", k=2, seed=0, pending_after=0.0, pending_outcome=Signal.ACCEPTED)
    ids = [f"L{i}" for i in range(8)]
    assert _rows(url) == {i: _decisive(folded(replay).cache.lessons[i]) for i in ids}
    replay.close()


def test_replacements_beside_agents_reporting_on_the_same_lessons_leave_the_rows_the_replay(url: str) -> None:
    """Three agents report on shared lessons while a fourth replaces reports, recent and older: the
    rows equal the in-process fold of the log, and nothing a writer folded meanwhile is lost."""
    setup = _engine(url)
    errors: list[BaseException] = []

    def agent(seed: int) -> None:
        try:
            lam = Lamar(url, k=2, seed=seed, warmup=1, holdout=0.5)
            _episodes(lam, random.Random(seed), 150, PROJECTS[:2])
            lam.close()
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            errors.append(exc)

    def replacer() -> None:
        try:
            lam = Lamar(url, k=2, seed=99, warmup=1, holdout=0.5)
            rng = random.Random(99)
            mine = _episodes(lam, rng, 40, PROJECTS[:2])
            for n in range(40):
                mine += _episodes(lam, rng, 2, PROJECTS[:2])
                lam.report(mine[-1 - rng.randrange(min(len(mine), 20))], rng.choice([1.0, -1.0]), replace=True)
            lam.close()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=agent, args=(s,)) for s in (11, 12, 13)] + [threading.Thread(target=replacer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    setup.close()
    _assert_rows_are_the_replay(url, [f"L{i}" for i in range(8)])
