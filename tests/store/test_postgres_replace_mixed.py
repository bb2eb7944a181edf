"""Replaced reports in PostgreSQL's fold mode among every other write: the same seeded calls on memory,
SQLite and the fold mode give the same evidence and stats, and the rows equal a build from the log."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, LamarError, Scope, Signal
from tests.store.test_postgres import compared_evidence, drop_namespaces, namespace_url, unique_namespace
from tests.store.test_postgres_fold import _rows

PROJECTS = ["p0", "p1", "p2"]
SIGNALS: list[Any] = [1.0, -1.0, 0.5, -0.25, Signal.SHIPPED, Signal.REVERTED]


@pytest.fixture
def url(postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("pgfold-mixed")
    yield namespace_url(postgres_url, namespace, options="-c synchronous_commit=off") + "&lamar_fold=on"
    drop_namespaces(postgres_url, namespace)


def _observe(lam: Lamar, ids: list[str]) -> dict[str, Any]:
    stats = dict(lam.stats())
    for key in ("store", "events", "compacted"):
        stats.pop(key, None)
    return {"evidence": {i: compared_evidence(lam, i) for i in ids}, "stats": stats,
            "pending": sorted((sorted(p.context.items()), p.injected) for p in lam.pending())}


class Sides:
    """The same call on each engine; each must succeed, or each refuse it with the same error."""

    def __init__(self, engines: dict[str, Lamar]) -> None:
        self.engines = engines
        self.episodes: dict[str, list[str]] = {name: [] for name in engines}

    def each(self, call: Callable[[str, Lamar], Any]) -> dict[str, Any]:
        got: dict[str, Any] = {}
        refused: dict[str, str | None] = {}
        for name, lam in self.engines.items():
            try:
                got[name], refused[name] = call(name, lam), None
            except LamarError as exc:
                refused[name] = type(exc).__name__
        assert len(set(refused.values())) == 1, refused
        return got

    def episode(self, name: str, index: int) -> str:
        return self.episodes[name][index]


def _step(sides: Sides, rng: random.Random, ids: list[str], pending: bool) -> None:
    """Mostly recalls, reports and replacements (so that most replacements find a mark); now and
    then a write that changes a lesson, after which the next replacement folds the whole log."""
    count = len(sides.episodes["sqlite"])
    r = rng.random()
    if r < 0.5 or count == 0:
        ctx = {"project": rng.choice(PROJECTS), "lang": rng.choice(["py", "go"])}  # a slice per lang
        for name, eid in sides.each(lambda n, lam: lam.recall(ctx).episode_id).items():
            sides.episodes[name].append(eid)
        if rng.random() < 0.7:
            signal = rng.choice(SIGNALS)
            sides.each(lambda n, lam: lam.report(sides.episode(n, count), signal))
    elif r < 0.86:  # recent or long ago, replaced or refused as a duplicate
        at = rng.randrange(count) if rng.random() < 0.3 else count - 1 - rng.randrange(min(8, count))
        signal, replace = rng.choice(SIGNALS[:5]), rng.random() < 0.85
        sides.each(lambda n, lam: lam.report(sides.episode(n, at), signal, replace=replace))
    elif r < 0.9:
        if pending:
            sides.each(lambda n, lam: len(lam.settle_pending(now=4e9)))
        else:
            at = rng.randrange(count)
            sides.each(lambda n, lam: lam.expire(sides.episode(n, at)))
    else:
        _change(sides, rng, ids)


def _add(sides: Sides, ids: list[str]) -> None:
    i = len(ids)
    lesson = Experience(f"case {i}", f"do {i}", scope=Scope(project=PROJECTS[i % 3]), id=f"L{i}")
    sides.each(lambda n, lam: lam.add(lesson))
    ids.append(lesson.id)


def _change(sides: Sides, rng: random.Random, ids: list[str]) -> None:
    kind = rng.choice(["expire", "add", "edit", "edit", "retire", "revive", "sleep", "sleep", "erase", "checkpoint"])
    if kind == "expire":
        at = rng.randrange(len(sides.episodes["sqlite"]))
        sides.each(lambda n, lam: lam.expire(sides.episode(n, at)))
    elif kind == "add":
        _add(sides, ids)
    elif kind == "edit":
        exp_id, keep, text = rng.choice(ids), rng.random() < 0.5, rng.randrange(1000)
        sides.each(lambda n, lam: lam.edit(exp_id, rationale=f"because {text}",
                                           evidence="keep" if keep else "restart").id)
    elif kind in ("retire", "revive"):
        exp_id = rng.choice(ids)
        sides.each(lambda n, lam: lam.retire(exp_id) if kind == "retire" else lam.revive(exp_id))
    elif kind == "erase" and rng.random() < 0.5:
        exp_id = rng.choice(ids)
        sides.each(lambda n, lam: lam.erase(exp_id) and None)
    elif kind == "sleep":
        def applied(name: str, lam: Lamar) -> list[str]:
            report = lam.sleep()
            return sorted(p.kind for p in report.proposals if p.id in lam.apply(report).applied)

        sides.each(applied)
    elif kind == "checkpoint" and rng.random() < 0.5:
        if "memory" in sides.engines:  # it keeps no checkpoint: a sealed outcome is refused elsewhere only
            sides.engines.pop("memory").close()
        sides.each(lambda n, lam: lam.checkpoint())


@pytest.mark.parametrize(("seed", "pending"), [(7, False), (8, True)])
def test_replacements_among_every_other_write_give_every_store_the_same_state_and_the_rows_a_build(
        url: str, tmp_path: Path, seed: int, pending: bool) -> None:
    """Seeded calls: recalls in two slices, reports, replacements recent and old, refused duplicates,
    expiries, late reports over pending defaults, adds, edits (evidence kept or restarted), retires,
    revives, an erase, sleep proposals applied, checkpoints. At every few steps each store's evidence,
    stats and pending episodes equal the others', and the rows equal a build from the whole log."""
    rng = random.Random(seed)
    options: dict[str, Any] = {"k": 2, "seed": 3, "warmup": 1, "holdout": 0.5}
    if pending:
        options.update(pending_after=1e9, pending_outcome=rng.choice([Signal.ACCEPTED, None, 0.3]))
    engines = {name: Lamar(location, **options) for name, location in
               (("memory", ":memory:"), ("sqlite", str(tmp_path / "s.db")), ("postgres", url))}
    sides = Sides(engines)
    ids: list[str] = []
    for _ in range(5):
        _add(sides, ids)
    try:
        for step in range(120):
            _step(sides, rng, ids, pending)
            if step % 12 == 11:
                want = _observe(engines["sqlite"], ids)
                for name, lam in engines.items():
                    assert _observe(lam, ids) == want, (name, step)
                rows = _rows(url)
                builder = Lamar(url, **options)
                builder.rebuild()
                builder.close()
                assert _rows(url) == rows, step
    finally:
        for lam in engines.values():
            lam.close()
