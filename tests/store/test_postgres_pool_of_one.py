"""A write under the namespace's write lock whose COMMIT goes unanswered, on a pool of one connection: the lost
connection was the only one, so none is left to ask whether the write was kept."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from lamar import StoreError
from lamar.store.base import Event
from lamar.store.postgres import PostgresStore
from tests.store.test_postgres import DroppingProxy, _through, drop_namespaces, unique_namespace


@contextlib.contextmanager
def _proxied(postgres_url: str) -> Iterator[tuple[DroppingProxy, str]]:
    """A proxy to cut the server's link with, and a namespace of the test's own; both gone after the block."""
    namespace, proxy = unique_namespace("pgstore-pool"), DroppingProxy()
    try:
        yield proxy, namespace
    finally:
        proxy.close()
        drop_namespaces(postgres_url, namespace)


_COPY = [Event("applied", {"proposal": "a"}, key="a"), Event("status", {"id": "x", "status": "active"})]


def test_a_lost_commit_under_the_lock_on_a_pool_of_one_says_why_it_is_unknown_and_what_to_do(
        postgres_url: str) -> None:
    with _proxied(postgres_url) as (proxy, namespace):
        store = PostgresStore(_through(proxy, postgres_url, namespace, "on"), pool_size=1, settle_timeout=1.0)
        try:
            proxy.cuts = ["after"]
            with pytest.raises(StoreError) as raised:
                store.append_unfolded(_COPY)  # a copy's write, under the write lock on the pool's one connection
            said = str(raised.value)
            # Why it could not learn (not the server, which answers), that the write is whole or absent, and the
            # two ways on: read the store before writing again, and a pool that can ask.
            assert "its pool's only one (pool_size=1)" in said and "all or nothing" in said, said
            assert "read the store" in said and "pool_size=2" in said, said
            assert [(e.kind, e.key) for e in store.read()] == [("applied", "a"), ("status", None)]  # kept, once
        finally:
            store.close()


def test_a_pool_of_two_learns_whether_that_commit_was_kept(postgres_url: str) -> None:
    with _proxied(postgres_url) as (proxy, namespace):
        store = PostgresStore(_through(proxy, postgres_url, namespace, "on"), pool_size=2, settle_timeout=5.0)
        try:
            proxy.cuts = ["after"]
            written = store.append_unfolded(_COPY)
            assert [(e.seq, e.key) for e in store.read()] == [(e.seq, e.key) for e in written]
        finally:
            store.close()
