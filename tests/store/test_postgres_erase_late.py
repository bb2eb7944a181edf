"""Two erases at once in PostgreSQL's fold mode, where an event may commit after a reader passed
its seq: the eraser whose scrub of the checkpoint lands last checks what it wrote against every
erase event stored by then, the one that committed late below its own seq included."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from lamar import Experience, Lamar, Signal
from lamar.edit import edit_key
from lamar.policy.config import Policy
from lamar.state.erasure import scrubbed
from lamar.store import open_store
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

_FIRST, _SECOND = "Ottoline Brandquist", "Aurelio Fenwick"


@pytest.fixture
def url(postgres_url: str) -> Iterator[str]:
    namespace = unique_namespace("late-erase")
    yield namespace_url(postgres_url, namespace, lamar_fold="on")
    drop_namespaces(postgres_url, namespace)


def test_an_erase_event_committed_late_below_the_erasers_seq_is_in_its_put_back_check(
        url: str, postgres_url: str) -> None:
    with Lamar(url, seed=3) as lam:
        first = lam.add(Experience(f"{_FIRST} reports a crash", f"ask {_FIRST} for the log"))
        second = lam.add(Experience(f"{_SECOND} reports a hang", f"ask {_SECOND} for the trace"))
        lam.report(lam.recall({}).episode_id, Signal.SHIPPED)
        assert lam.checkpoint()  # a snapshot holding both lessons
        key = edit_key(first, lam.get(first).version + 1)
    namespace = url.rsplit("lamar_namespace=", 1)[1].split("&")[0]
    late = psycopg.connect(postgres_url)  # the other eraser's write of its event, in flight
    at = time.time()
    data = {"id": first, "by": "ops", "reason": "r", "contexts": False, "episodes": [], "events": 2}
    eraser = Lamar(url, seed=4)
    scrub = eraser.store.scrub  # type: ignore[attr-defined]

    def racing(events: Any) -> int:
        if not events and not late.info.transaction_status:  # before this eraser's event: the other takes a seq first
            written: int = scrub(events)
            late.execute("INSERT INTO lamar_events (namespace, seq, kind, key, time, data) VALUES "
                         "(%s, nextval('lamar_seq'), 'erase', %s, %s, %s)",
                         (namespace, key, at, json.dumps({**data, "pending": True})))
            return written
        if any(e.kind == "snapshot" for e in events) and late.info.transaction_status:
            late.commit()  # after this eraser read the log; then the other scrubs and checks to its end
            other = open_store(url)
            stored = other.read(0)
            changed, _ = scrubbed(stored, first, False, "ops", at, Policy())
            other.scrub([e for e in changed if e.kind != "erase"])
            other.scrub([e for e in changed if e.kind == "erase"])  # its check found nothing: done
            other.close()
        done: int = scrub(events)
        return done

    eraser.store.scrub = racing  # type: ignore[attr-defined]
    eraser.erase(second, by="ops")
    eraser.close()
    late.close()
    store = open_store(url)
    stored = store.read(0)
    store.close()
    assert [e.data["id"] for e in stored if e.kind == "erase" and not e.data.get("pending")] == [first, second]
    assert _FIRST not in json.dumps([e.data for e in stored])  # the later scrub put it back
