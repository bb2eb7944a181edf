"""`LangGraphStore` over a subclass of LangGraph's `PostgresStore` whose `batch` is its own: a write's events and
its commit go in one batch only where the store's `batch` is known to write them in one statement."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.base import Op, PutOp, Result
from langgraph.store.postgres import PostgresStore

from lamar import InvalidArgument
from lamar.store import Event
from lamar_langgraph import LangGraphStore


class OneOpAtATime(PostgresStore):
    """A PostgresStore whose `batch` sends each op as a batch of its own (as one that retries, logs or throttles
    op by op may): a write's events, its commit and the end of its hold on the lock no longer land together."""

    def batch(self, ops: Any) -> list[Result]:
        self.sent.append(list(ops))
        results: list[Result] = []
        for op in self.sent[-1]:
            results += super().batch([op])
        return results

    sent: list[list[Op]]


@pytest.fixture
def label(postgres_url: str) -> Iterator[str]:
    import psycopg

    name = f"pgstore-{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('store')").fetchone() != (None,):
            conn.execute("DELETE FROM store WHERE prefix LIKE %s", (f"lamar.{name}.%",))


@pytest.fixture
def base(postgres_url: str) -> Iterator[OneOpAtATime]:
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(postgres_url, autocommit=True, prepare_threshold=0, row_factory=dict_row) as conn:
        store = OneOpAtATime(conn)
        store.setup()
        store.sent = []
        yield store


def commits_with_their_events(sent: list[list[Op]]) -> list[list[Op]]:
    """The batches that put events and the head past them together."""
    return [ops for ops in sent if {op.namespace[-1] for op in ops if isinstance(op, PutOp)} >= {"events", "head"}]


def test_a_subclass_that_overrides_batch_commits_after_its_events_are_in(base: OneOpAtATime, label: str) -> None:
    store = LangGraphStore(base, ("lamar", label))
    written = store.append([Event("status", {"id": "a", "status": "active"}, key="status:a")])
    assert [e.key for e in store.read()] == ["status:a"] and [e.seq for e in written] == [1]
    # The general path: the events, then (their writer still holding the lock) the head, each a batch.
    assert commits_with_their_events(base.sent) == []
    puts = [op.namespace[-1] for ops in base.sent for op in ops if isinstance(op, PutOp)]
    assert puts.index("events") < puts.index("head")


def test_a_subclass_whose_batch_hands_the_ops_on_whole_may_say_so(base: OneOpAtATime, label: str) -> None:
    whole = LangGraphStore(base, ("lamar", label), ordered_batch=True)  # taken at its word
    whole.append([Event("status", {"id": "a", "status": "active"})])
    assert len(commits_with_their_events(base.sent)) == 1
    with pytest.raises(InvalidArgument, match="ordered_batch is True, False or None"):
        LangGraphStore(base, ("lamar", label), ordered_batch="yes")  # type: ignore[arg-type]
