"""An engine's first replacement, resumed from a state another engine saved after the outcome it
replaces: it goes back to an undo mark saved with that state, not to the start of the log."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from lamar import Lamar, Signal
from tests.state.seam import folded
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace
from tests.store.test_postgres_fold import _assert_rows_are_the_replay
from tests.store.test_postgres_replace import PROJECTS, _engine, _episodes, _folds_of, _observe


@pytest.fixture
def urls(postgres_url: str) -> Iterator[tuple[str, str]]:
    """Two namespaces of one database: this test's, and another writer's."""
    ours, theirs = unique_namespace("pgfold-resumed"), unique_namespace("pgfold-beside")
    yield _fold_url(postgres_url, ours), _fold_url(postgres_url, theirs)
    drop_namespaces(postgres_url, ours, theirs)


def _fold_url(postgres_url: str, namespace: str) -> str:
    return namespace_url(postgres_url, namespace, options="-c synchronous_commit=off") + "&lamar_fold=on"


# Another namespace's episodes written between two of this one's: none, or enough that the database's
# one sequence hands out several times more seqs than this namespace's log takes events.
@pytest.mark.parametrize("beside", [0, 8])
def test_a_first_replacement_after_a_saved_state_refolds_from_a_saved_mark(
        urls: tuple[str, str], tmp_path: Path, beside: int) -> None:
    url, other = urls
    locations = {"sqlite": str(tmp_path / "s.db"), "postgres": url}
    mine: dict[str, list[str]] = {}
    for name, location in locations.items():  # one engine writes, replaces a report, and saves its state at close
        lam = _engine(location)
        mine[name] = _episodes(lam, random.Random(1), 400, PROJECTS)
        lam.report(mine[name][-5], Signal.REVERTED, replace=True)
        neighbour = _engine(other) if name == "postgres" and beside else None
        rng, theirs = random.Random(2), random.Random(4)
        for i in range(60):
            mine[name] += _episodes(lam, rng, 1, [PROJECTS[i % 4]])
            if neighbour is not None:
                _episodes(neighbour, theirs, beside, PROJECTS)
        if neighbour is not None:
            neighbour.close()
        lam.close()
    sides = {name: Lamar(location, k=2, seed=3, warmup=1, holdout=0.5) for name, location in locations.items()}
    seqs = _folds_of(folded(sides["postgres"]).cache)
    for name, lam in sides.items():
        lam.report(mine[name][-20], Signal.SHIPPED, replace=True)  # after the state's oldest mark
    # A fold of the whole log folds about 930 events: from the mark, at most two marks' spacing and the reports since.
    assert 0 < len(seqs) <= 2 * 128 + 2 * 20 + 2, len(seqs)
    assert _observe(sides["postgres"]) == _observe(sides["sqlite"])
    for name, lam in sides.items():
        lam.report(mine[name][10], 0.25, replace=True)  # before every mark: the whole log again, and the same
    assert _observe(sides["postgres"]) == _observe(sides["sqlite"])
    for lam in sides.values():
        lam.close()
    _assert_rows_are_the_replay(url, [f"L{i}" for i in range(8)])
