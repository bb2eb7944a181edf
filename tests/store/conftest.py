"""Fixtures the store tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace


@pytest.fixture
def fold_url(postgres_url: str) -> Iterator[str]:
    """A fresh PostgreSQL namespace in the fold mode; commits skip the fsync (locks and order are
    the same)."""
    namespace = unique_namespace("fold")
    yield namespace_url(postgres_url, namespace, options="-c synchronous_commit=off") + "&lamar_fold=on"
    drop_namespaces(postgres_url, namespace)


@pytest.fixture
def counted_folds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of events every `FoldCache` of this process folded (the real fold, counted)."""
    from lamar.state.cache import FoldCache

    folds = [0]
    fold = FoldCache.fold

    def counting(self: FoldCache, *args: object, **kwargs: object) -> None:
        folds[0] += 1
        fold(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(FoldCache, "fold", counting)
    return folds
