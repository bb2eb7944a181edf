"""PostgresStore against the real server: conformance, namespaces, lost connections, kills.

Helpers here (`namespace_url`, `drop_namespaces`, `DroppingProxy`) are shared by the other
test_postgres_*.py files.
"""

from __future__ import annotations

import contextlib
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import unittest
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, urlencode

import psycopg
import pytest

from lamar import EventConflict, Experience, Lamar, Scope, Signal, StoreError
from lamar.bench.fleet.clients import NAMESPACE_TABLES, drop_namespace
from lamar.conformance import StoreConformance
from lamar.store import Event, ExperienceStore
from lamar.store.postgres import PostgresStore
from lamar.store.transfer import transfer
from tests.conftest import POSTGRES_URL, require_service
from tests.store.relay import Link, Relay

REPO = Path(__file__).parents[2]


def unique_namespace(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def namespace_url(url: str, namespace: str, **params: str) -> str:
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}{urlencode({'lamar_namespace': namespace, **params}, quote_via=quote)}"


def compared_evidence(lam: Any, lesson: str) -> dict[str, Any]:
    """`lam.evidence(lesson).to_dict()` without the notes Evidence equality leaves out (when the lesson was last
    chosen and fell, how long since): a PostgreSQL fold-mode row keeps none of them, and each engine dates them
    by its own clock."""
    import dataclasses

    from lamar.policy.verdicts import Evidence

    notes = {f.name for f in dataclasses.fields(Evidence) if not f.compare}
    return {k: v for k, v in lam.evidence(lesson).to_dict().items() if k not in notes}


def drop_namespaces(url: str, *namespaces: str) -> None:
    """Delete every row of `namespaces` from every table that holds one, so that a run leaves nothing."""
    drop_namespace(url, *namespaces)


def backends(url: str, app: str, *, waiting: bool = False) -> list[int]:
    """Server pids of the connections named `app` (only those waiting on a lock if asked)."""
    query = "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
    if waiting:
        query += " AND wait_event_type = 'Lock'"
    with psycopg.connect(url, autocommit=True) as conn:
        return [row[0] for row in conn.execute(query, (app,)).fetchall()]


def wait_until_waiting(url: str, app: str, failure: str) -> None:
    """Poll until a connection named `app` waits on a lock; `failure` is the assertion's message
    if none has within ten seconds."""
    deadline = time.monotonic() + 10
    while not backends(url, app, waiting=True):
        assert time.monotonic() < deadline, failure
        time.sleep(0.01)


def _database(url: str) -> str:
    """The database the tests use (LAMAR_TEST_POSTGRES), reached through a proxy by some tests."""
    return url.split("?", 1)[0].rsplit("/", 1)[1]


def terminate(url: str, pids: list[int]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


# The log mode: the tests of this file pin its mechanics (seq order is commit order, the
# counter row, dense seqs per namespace); test_postgres_fold.py has the fold mode's.
LOG = {"lamar_fold": "off"}


@pytest.fixture
def ns_url(postgres_url: str) -> Iterator[str]:
    """A URL naming a fresh namespace in the log mode; its rows are deleted afterwards."""
    namespace = unique_namespace()
    yield namespace_url(postgres_url, namespace, **LOG)
    drop_namespaces(postgres_url, namespace)


class TestPostgresStore(StoreConformance, unittest.TestCase):
    """The log mode (lamar_fold=off): every engine folds the log itself; seq order is commit order.
    The fold mode runs the same suite in test_postgres_fold.py."""

    mode: ClassVar[dict[str, str]] = {"lamar_fold": "off"}

    def location(self, folder: Path) -> str:
        require_service("PostgreSQL", "127.0.0.1", 5432)
        namespace = unique_namespace("conf")
        self.addCleanup(drop_namespaces, POSTGRES_URL, namespace)
        return namespace_url(POSTGRES_URL, namespace, **self.mode)

    def stored_bytes(self, store: Any) -> bytes:
        """What the server's tables hold for this namespace: its events, lesson rows and saved state."""
        parts = []
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            for table, column in (("lamar_events", "data"), ("lamar_lessons", "state"), ("lamar_state", "body")):
                if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() == (None,):
                    continue
                parts += [row[0] for row in conn.execute(
                    f"SELECT {column} FROM {table} WHERE namespace = %s", (store.namespace,)).fetchall()]
        return "".join(parts).encode("utf-8")

    def worker(self, log: Path, seed: int, episodes: int) -> subprocess.Popen[bytes]:
        """Start a worker; for the SIGKILL test, return once it is writing, not still importing
        psycopg (on a loaded machine that takes longer than the suite's 0.4-1 s kill delay)."""
        size = log.stat().st_size if log.exists() else 0
        worker = super().worker(log, seed, episodes)
        deadline = time.monotonic() + 60
        while episodes > 10_000 and (log.stat().st_size if log.exists() else 0) == size:
            assert worker.poll() is None and time.monotonic() < deadline, "the worker never wrote"
            time.sleep(0.02)
        return worker


# -- opening ---------------------------------------------------------------------------------


def test_importing_lamar_does_not_import_psycopg() -> None:
    code = "import sys, lamar, lamar.store; print(sorted(m for m in sys.modules if 'psycopg' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_namespace_comes_from_the_url_or_the_keyword(postgres_url: str) -> None:
    namespace = unique_namespace()
    try:
        by_url = ExperienceStore(namespace_url(postgres_url, namespace))
        by_keyword = ExperienceStore(postgres_url, namespace=namespace, pool_size=2)
        assert isinstance(by_url, PostgresStore) and isinstance(by_url, ExperienceStore)
        assert by_url.namespace == by_keyword.namespace == namespace
        by_url.append([Event("status", {"id": "a", "status": "active"})])
        assert [e.data["id"] for e in by_keyword.read()] == ["a"]
        assert by_url.location == by_keyword.location
        reopened = ExperienceStore(by_url.location)  # the location reopens the same store
        assert [e.data["id"] for e in reopened.read()] == ["a"]
        for store in (by_url, by_keyword, reopened):
            store.close()
        with pytest.raises(StoreError, match="pick one"):
            ExperienceStore(namespace_url(postgres_url, namespace), namespace="other")
    finally:
        drop_namespaces(postgres_url, namespace)


def test_a_url_that_names_two_namespaces_is_refused(postgres_url: str) -> None:
    a, b = unique_namespace("twice"), unique_namespace("twice")
    url = f"{postgres_url}?lamar_namespace={a}&lamar_namespace={b}"
    with pytest.raises(StoreError, match="pick one"):
        Lamar(url)
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # nothing was written to either
        assert conn.execute("SELECT count(*) FROM lamar_events WHERE namespace = ANY(%s)", ([a, b],)).fetchone() == (0,)
    same = ExperienceStore(f"{postgres_url}?lamar_namespace={a}&lamar_namespace={a}")  # said twice alike: fine
    assert isinstance(same, PostgresStore) and same.namespace == a
    same.close()


@pytest.mark.parametrize("bad", ["", "-x", "a b", "a'; DROP TABLE lamar_events; --", "x" * 64, "é", "a/b"])
def test_an_invalid_namespace_is_refused(postgres_url: str, bad: str) -> None:
    with pytest.raises(StoreError, match="invalid namespace"):
        PostgresStore(postgres_url, namespace=bad)


def test_the_location_hides_the_password(postgres_url: str) -> None:
    secret_url = postgres_url.replace("postgres@", "postgres:s3cret-pw@")  # trust auth ignores it
    store = PostgresStore(secret_url, namespace="default")
    assert "s3cret" not in store.location and "s3cret" not in repr(store)
    assert store.location.endswith("lamar_namespace=default")
    store.close()


def test_an_unreachable_server_or_database_is_a_clear_error(postgres_url: str) -> None:
    started = time.monotonic()
    with pytest.raises(StoreError, match="cannot open the PostgreSQL store"):
        PostgresStore("postgresql://postgres@127.0.0.1:1/test", timeout=2)
    with pytest.raises(StoreError, match="no_such_db"):
        PostgresStore(postgres_url.rsplit("/", 1)[0] + "/no_such_db")
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(("where", "says"), [
    ("postgresql://postgres@127.0.0.1:1/test", "start the server, or correct the host and port in the URL"),
    ("postgresql://postgres@127.0.0.1:5432/no_such_db",
     "create the database (createdb no_such_db, or CREATE DATABASE), or correct its name in the URL"),
    ("postgresql://no_such_role@127.0.0.1:5432/test", "correct the user in the URL, or create the role"),
])
def test_a_store_that_cannot_be_opened_says_what_to_do(postgres_url: str, where: str, says: str) -> None:
    from lamar.store.postgres.store import namespace_missing

    for opening in (lambda: PostgresStore(where, timeout=2), lambda: namespace_missing(where, timeout=2)):
        with pytest.raises(StoreError, match="cannot open the PostgreSQL store") as raised:
            opening()
        assert says in str(raised.value), raised.value


@pytest.mark.parametrize("tail", ["/test?no_such_parameter=1", "/test?connect_timeout=soon", "[::1/test"],
                         ids=["unknown-parameter", "bad-value", "broken-host"])
def test_a_malformed_url_is_a_store_error_at_the_api_and_the_cli(postgres_url: str, tail: str) -> None:
    """libpq or the URL parser refusing the URL is a StoreError naming the URL, from `Lamar(url)`
    and from the command line (which checks the namespace on a connection of its own first)."""
    url = "postgresql://postgres@" + ("" if tail.startswith("[") else "127.0.0.1:5432") + tail
    with pytest.raises(StoreError, match="PostgreSQL"):
        Lamar(url)
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "--store", url, "stats"], capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "PostgreSQL" in done.stderr and "bug in Lamar" not in done.stderr


def test_a_closed_store_says_so(ns_url: str) -> None:
    store = PostgresStore(ns_url)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.read()


# -- the log ---------------------------------------------------------------------------------


def test_namespaces_share_nothing_but_the_tables(postgres_url: str) -> None:
    a_ns, b_ns = unique_namespace("a"), unique_namespace("b")
    try:
        a = PostgresStore(postgres_url + "?lamar_fold=off", namespace=a_ns)
        b = PostgresStore(postgres_url + "?lamar_fold=off", namespace=b_ns)
        a.append([Event("applied", {"proposal": "p"}, key="k"), Event("applied", {"proposal": "q"})])
        b.append([Event("applied", {"proposal": "other"}, key="k")])  # the same key, another namespace
        with pytest.raises(EventConflict):
            b.append([Event("applied", {"proposal": "again"}, key="k")])
        assert [(e.seq, e.data["proposal"]) for e in a.read()] == [(1, "p"), (2, "q")]
        assert [(e.seq, e.data["proposal"]) for e in b.read()] == [(1, "other")]
        a.close()
        b.close()
    finally:
        drop_namespaces(postgres_url, a_ns, b_ns)


@pytest.mark.parametrize("fold", ["off", "on"], ids=["log", "fold"])
def test_a_dropped_namespace_leaves_no_row_behind(postgres_url: str, fold: str) -> None:
    # The tests clean up with drop_namespaces: a run that left a row behind in one table (the saved
    # states) grew the test database by a row for every namespace it made.
    namespace = unique_namespace("drop")
    url = namespace_url(postgres_url, namespace, lamar_fold=fold)
    with Lamar(url, k=1, seed=1) as lam:
        lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
        for _ in range(3):
            lam.report(lam.recall({"task": "t"}).episode_id, Signal.ACCEPTED)
    store = PostgresStore(url)
    store.save_state(store.read()[-1].seq, "a state")  # what an engine saves beside a long log
    store.save_note("last-sleep", "{}")  # what a sleep keeps for `lamar stats`
    store.close()
    drop_namespaces(postgres_url, namespace)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'namespace' "
            "AND table_schema = current_schema() AND table_name LIKE 'lamar%%' ORDER BY table_name").fetchall()]
        left = {table: conn.execute(f"SELECT count(*) FROM {table} WHERE namespace = %s",
                                    (namespace,)).fetchone() for table in tables}
    assert sorted(tables) == sorted(NAMESPACE_TABLES)  # the clean-up knows every table
    assert left == dict.fromkeys(tables, (0,))


def test_the_stress_tool_leaves_no_row_behind(postgres_url: str) -> None:
    # tools/multiproc_stress.py deleted its namespace from a list of tables of its own, without lamar_state:
    # the state its engines saved beside the log stayed, a row a run.
    schema = f"pgrows_stress_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    base = f"{postgres_url}{'&' if '?' in postgres_url else '?'}options={quote(f'-c search_path={schema}')}"
    try:
        done = subprocess.run([sys.executable, "tools/multiproc_stress.py", "--backend", "postgres", "--url", base,
                               "--workers", "2", "--ops", "30", "--seed", "1"], cwd=Path(__file__).parents[2],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        with psycopg.connect(base, autocommit=True) as conn:
            left = {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone() for table in NAMESPACE_TABLES
                    if conn.execute("SELECT to_regclass(%s)", (table,)).fetchone() != (None,)}
        assert "lamar_state" in left  # the run saved a state, the row the old clean-up left
        assert left == dict.fromkeys(left, (0,))
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.parametrize("value", ['"nan"', "2", "1e300"])
def test_a_reward_edited_by_hand_is_refused_not_folded(ns_url: str, value: str) -> None:
    # Issue 38: what no API call stores is refused by every backend's fold, as SQLite's and JSON's are.
    from lamar import CorruptStore

    lam = Lamar(ns_url, k=1, seed=1)
    lam.add(Experience("the build fails", "clear the cache", scope=Scope(task="t")))
    for _ in range(4):
        lam.report(lam.recall({"task": "t"}).episode_id, Signal.ACCEPTED)
    lam.close()
    namespace = PostgresStore(ns_url).namespace
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute("UPDATE lamar_events SET data = jsonb_set(data::jsonb, '{reward}', %s::jsonb)::text "
                     "WHERE namespace = %s AND seq = (SELECT min(seq) FROM lamar_events "
                     "WHERE namespace = %s AND kind = 'outcome')", (value, namespace, namespace))
        conn.execute("DELETE FROM lamar_state WHERE namespace = %s", (namespace,))  # the whole log is folded
    with pytest.raises(CorruptStore, match=r"holds the reward .*not a number in \[-1, 1\].*backup"):
        Lamar(ns_url).stats()


def test_readers_never_see_a_gap_while_threads_write(ns_url: str) -> None:
    """Seq order is commit order: a reader that saw seq n never later finds a seq below n."""
    store = PostgresStore(ns_url, pool_size=6)
    stop = threading.Event()
    gaps: list[tuple[int, int]] = []

    def follow() -> None:
        last = 0
        while not stop.is_set():
            for event in store.read(last):
                if event.seq != last + 1:
                    gaps.append((last, event.seq))
                last = event.seq

    def write(worker: int) -> None:
        for i in range(40):
            store.append([Event("applied", {"proposal": f"{worker}-{i}"}, key=f"{worker}-{i}"),
                          Event("status", {"id": f"{worker}-{i}", "status": "active"})])

    reader = threading.Thread(target=follow)
    reader.start()
    writers = [threading.Thread(target=write, args=(w,)) for w in range(5)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    stop.set()
    reader.join()
    events = store.read()
    assert gaps == []
    assert [e.seq for e in events] == list(range(1, 401))
    assert len({e.key for e in events if e.key}) == 200
    store.close()


@pytest.mark.parametrize("others", [2, 700])  # 700: more than a write reads back with itself
def test_a_read_after_a_write_includes_what_others_wrote_before_it(ns_url: str, others: int) -> None:
    mine, theirs = PostgresStore(ns_url), PostgresStore(ns_url)
    mine.append([Event("status", {"id": "mine-1", "status": "active"})])
    assert [e.seq for e in mine.read()] == [1]
    theirs.append([Event("status", {"id": f"theirs-{i}", "status": "active"}) for i in range(others)])
    last = mine.append([Event("status", {"id": "mine-2", "status": "active"})])[0].seq
    assert last == others + 2
    assert [e.seq for e in mine.read(1)] == list(range(2, last + 1))
    assert [e.seq for e in mine.read(0)] == list(range(1, last + 1))
    assert mine.read(last) == []
    mine.close()
    theirs.close()


def test_the_read_right_after_a_write_sees_the_log_as_of_that_write_and_the_next_read_the_rest(ns_url: str) -> None:
    """The first read after a write is answered from what the write read back, without asking the
    server: the log as of that write's commit. An event another writer commits after it comes with
    the next read, never skipped (docs/postgres.md, "Two modes")."""
    mine, theirs = PostgresStore(ns_url), PostgresStore(ns_url)
    first = mine.append([Event("status", {"id": "mine", "status": "active"})])[0].seq
    theirs.append([Event("status", {"id": "theirs", "status": "active"})])
    assert [e.data["id"] for e in mine.read(0)] == ["mine"]
    assert [e.data["id"] for e in mine.read(first)] == ["theirs"]
    assert [e.data["id"] for e in mine.read(0)] == ["mine", "theirs"]
    mine.close()
    theirs.close()


def test_a_store_moves_from_json_to_postgres_and_on_to_sqlite(tmp_path: Path, ns_url: str) -> None:
    lam = Lamar(str(tmp_path / "start.json"), k=2, seed=5)
    ids = [lam.add(Experience(f"case {i}", f"do {i}", scope=Scope(task="t"))) for i in range(3)]
    rng = random.Random(1)
    for _ in range(40):
        lam.report(lam.recall({"task": "t"}).episode_id, rng.choice(list(Signal)))
    before = {i: lam.evidence(i) for i in ids}, lam.stats()["reports"]
    pg = PostgresStore(ns_url)
    assert transfer(lam.store, pg).copied == len(lam.store.read())
    sqlite = ExperienceStore(str(tmp_path / "end.db"))
    transfer(pg, sqlite)
    for store in (pg, sqlite):
        moved = Lamar(store, k=2, seed=5)
        assert ({i: moved.evidence(i) for i in ids}, moved.stats()["reports"]) == before
        moved.close()
    lam.close()


# -- lost connections ------------------------------------------------------------------------


def test_killed_idle_connections_are_replaced_by_the_next_call(postgres_url: str) -> None:
    namespace, app = unique_namespace(), unique_namespace("app")
    try:
        store = PostgresStore(namespace_url(postgres_url, namespace, application_name=app, **LOG), pool_size=3)
        store.append([Event("status", {"id": "a", "status": "active"})])
        terminate(postgres_url, backends(postgres_url, app))
        assert [e.data["id"] for e in store.read()] == ["a"]
        terminate(postgres_url, backends(postgres_url, app))
        assert [e.seq for e in store.append([Event("status", {"id": "b", "status": "active"})])] == [2]
        store.close()
    finally:
        drop_namespaces(postgres_url, namespace)


def _hold_counter_row(url: str, namespace: str) -> psycopg.Connection:
    """A connection that keeps the namespace's counter row locked: writers queue behind it."""
    holder = psycopg.connect(url)
    holder.execute("SELECT * FROM lamar_namespaces WHERE namespace = %s FOR UPDATE", (namespace,))
    return holder


def _kill_waiting_writer(url: str, app: str, killed: set[int] | None = None) -> None:
    """End the backend of a write queued for the lock; not one in `killed` (a terminated backend
    stays listed, still waiting, for a moment after it was told to end), which it extends."""
    killed = set() if killed is None else killed
    deadline = time.monotonic() + 10
    while not (pids := [pid for pid in backends(url, app, waiting=True) if pid not in killed]):
        assert time.monotonic() < deadline, "the write never queued for the lock"
        time.sleep(0.02)
    terminate(url, pids)
    killed.update(pids)


@pytest.mark.parametrize("kills", [1, 2])
def test_a_write_whose_connection_is_killed_is_retried_once_then_fails_clearly(
        postgres_url: str, kills: int) -> None:
    namespace, app = unique_namespace(), unique_namespace("app")
    url = namespace_url(postgres_url, namespace, application_name=app, **LOG)
    try:
        store = PostgresStore(url)
        store.append([Event("applied", {"proposal": "first"}, key="first")])
        holder = _hold_counter_row(postgres_url, namespace)
        outcome: dict[str, object] = {}

        def write() -> None:
            try:
                outcome["stored"] = store.append([Event("applied", {"proposal": "second"}, key="second")])
            except StoreError as exc:
                outcome["error"] = exc

        writer = threading.Thread(target=write)
        writer.start()
        killed: set[int] = set()
        for _ in range(kills):
            _kill_waiting_writer(postgres_url, app, killed)
        holder.rollback()
        writer.join(timeout=30)
        keys = [e.key for e in store.read()]
        if kills == 1:  # the retry on a fresh connection went through, once
            assert [e.seq for e in outcome["stored"]] == [2] and keys == ["first", "second"]  # type: ignore[attr-defined]
        else:
            assert "nothing of this write was kept" in str(outcome["error"])
            assert keys == ["first"]
            assert [e.seq for e in store.append([Event("applied", {"proposal": "x"}, key="second")])] == [2]
        holder.close()
        store.close()
    finally:
        drop_namespaces(postgres_url, namespace)


class _Commits:
    """Reads what a client sends as the protocol's messages, to find where a write commits: a
    simple query holding COMMIT, or a write sent alone (a call of lamar_write, lamar_log or
    lamar_append, bound by the server: its transaction commits at the Sync that follows its
    Bind), whether the statement is parsed in the same message or was prepared before under a
    name."""

    _WRITES = (b"lamar_write(", b"lamar_log(", b"lamar_append(")

    def __init__(self) -> None:
        self._buffer = b""
        self._started = False  # past the startup message: every message starts with its type
        self._writes: set[bytes] = set()  # names of the statements parsed from a write's text

    def __call__(self, data: bytes) -> bool:
        """Whether `data` (what the client sent next) holds a commit."""
        self._buffer += data
        found = False
        while True:
            typed = int(self._started)
            if len(self._buffer) < typed + 4:
                return found
            size = int.from_bytes(self._buffer[typed:typed + 4], "big")
            if len(self._buffer) < typed + size:
                return found
            kind, body = self._buffer[:typed], self._buffer[typed + 4:typed + size]
            self._buffer = self._buffer[typed + size:]
            if not self._started:  # an SSL or GSS request, then the startup message (protocol 3.0)
                self._started = body[:4] == (3 << 16).to_bytes(4, "big")
            elif kind == b"Q":
                found |= b"COMMIT" in body
            elif kind == b"P":
                name, text = body.split(b"\0", 1)
                if any(w in text for w in self._WRITES):
                    self._writes.add(name)
                else:
                    self._writes.discard(name)
            elif kind == b"B":
                found |= body.split(b"\0", 2)[1] in self._writes


class DroppingProxy(Relay):
    """A TCP relay to PostgreSQL that cuts a connection at a write's commit, as a network might.

    `cuts` holds what to do at each next commit (a COMMIT, or a write sent alone, which commits
    as it ends: `_Commits`): "before" drops it unsent and hangs up both sides; "stall" drops it
    and hangs up only on the client, so the server keeps waiting (a half-open link); "after"
    sends it, lets the server commit, and drops the answer. While `refusing`, new connections
    are hung up at once (the server unreachable).
    """

    def __init__(self, target: tuple[str, int] = ("127.0.0.1", 5432)) -> None:
        self.cuts: list[str] = []
        self.commits_sent = 0
        self._commits: dict[int, _Commits] = {}
        super().__init__(target)

    def forward(self, link: Link, data: bytes) -> bool:
        commit = self._commits.setdefault(id(link), _Commits())(data)
        if commit and self.cuts:
            cut = self.cuts.pop(0)
            if cut == "stall":
                link.hang_up_on_client()
                return False
            if cut == "before":
                return False
            link.cut_at_answer = True  # the server answers the COMMIT, the client never hears it
        if commit:
            self.commits_sent += 1
        return super().forward(link, data)


MODES = pytest.mark.parametrize("mode", ["off", "on"], ids=["log", "fold"])


@contextlib.contextmanager
def _proxied(postgres_url: str) -> Iterator[tuple[DroppingProxy, str]]:
    """A proxy to cut the server's link with, and a namespace of the test's own; both gone after the block."""
    namespace = unique_namespace()
    proxy = DroppingProxy()
    try:
        yield proxy, namespace
    finally:
        proxy.close()
        drop_namespaces(postgres_url, namespace)


def _through(proxy: DroppingProxy, postgres_url: str, namespace: str, mode: str) -> str:
    return namespace_url(f"postgresql://postgres@127.0.0.1:{proxy.port}/{_database(postgres_url)}", namespace,
                         sslmode="disable", lamar_fold=mode)


@MODES
def test_a_commit_whose_answer_is_lost_is_found_committed(postgres_url: str, mode: str) -> None:
    """Found by the transaction's id: the batch has an event without a key, so it is two messages."""
    with _proxied(postgres_url) as (proxy, namespace):
        store = PostgresStore(_through(proxy, postgres_url, namespace, mode))
        store.append([Event("applied", {"proposal": "first"}, key="first")])
        proxy.cuts = ["after"]
        sent_before = proxy.commits_sent
        stored = store.append([Event("applied", {"proposal": "second"}, key="second"),
                               Event("status", {"id": "x", "status": "active"})])
        assert proxy.commits_sent == sent_before + 1  # not written twice: it was found committed
        assert [e.seq for e in stored] == [e.seq for e in store.read()][1:] and len(stored) == 2
        assert [e.key for e in store.read()] == ["first", "second", None]
        store.close()


@MODES
def test_a_keyed_commit_whose_answer_is_lost_is_found_committed_by_its_keys(postgres_url: str, mode: str) -> None:
    """Events that all carry keys go in one message, which never learns its transaction's id: the
    write is found by its keys once the backend that ran it has ended."""
    with _proxied(postgres_url) as (proxy, namespace):
        store = PostgresStore(_through(proxy, postgres_url, namespace, mode))
        store.append([Event("applied", {"proposal": "first"}, key="first")])
        proxy.cuts = ["after"]
        sent_before = proxy.commits_sent
        stored = store.append([Event("applied", {"proposal": "second"}, key="second"),
                               Event("applied", {"proposal": "third"}, key="third")])
        assert proxy.commits_sent == sent_before + 1  # one message, not written twice
        assert [(e.seq, e.key) for e in stored] == [(e.seq, e.key) for e in store.read()][1:]
        assert [e.key for e in store.read()] == ["first", "second", "third"]
        store.close()


@MODES
def test_a_lost_write_under_a_key_another_writer_holds_is_not_taken_for_its_own(postgres_url: str, mode: str) -> None:
    """The server refused the write (the key is taken) and the refusal was lost: the key is there,
    but with another event's time, so the write is known not to have committed; it is retried
    and refused again, clearly."""
    with _proxied(postgres_url) as (proxy, namespace):
        other = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold=mode))
        other.append([Event("applied", {"proposal": "theirs"}, key="k", time=1000.0)])
        store = PostgresStore(_through(proxy, postgres_url, namespace, mode))
        proxy.cuts = ["after"]
        with pytest.raises(EventConflict, match="already in"):
            store.append([Event("applied", {"proposal": "mine"}, key="k", time=2000.0)])
        assert [(e.key, e.data["proposal"]) for e in other.read()] == [("k", "theirs")]
        store.close()
        other.close()


@MODES
def test_a_commit_lost_on_the_way_is_retried_once_then_fails_clearly(postgres_url: str, mode: str) -> None:
    with _proxied(postgres_url) as (proxy, namespace):
        store = PostgresStore(_through(proxy, postgres_url, namespace, mode))
        proxy.cuts = ["before"]
        first = store.append([Event("applied", {"proposal": "a"}, key="a")])
        proxy.cuts = ["before", "before"]
        with pytest.raises(StoreError, match="nothing of this write was kept"):
            store.append([Event("applied", {"proposal": "b"}, key="b")])
        assert [e.key for e in store.read()] == ["a"]
        assert store.append([Event("applied", {"proposal": "b"}, key="b")])[0].seq > first[0].seq
        assert [e.key for e in store.read()] == ["a", "b"]
        store.close()


@MODES
@pytest.mark.parametrize("key", ["a", None], ids=["one-message", "two-messages"])
def test_a_commit_stuck_on_a_half_open_link_is_settled_by_ending_that_backend(
        postgres_url: str, mode: str, key: str | None) -> None:
    with _proxied(postgres_url) as (proxy, namespace):
        store = PostgresStore(_through(proxy, postgres_url, namespace, mode))
        proxy.cuts = ["stall"]
        started = time.monotonic()
        (stored,) = store.append([Event("applied", {"proposal": "a"}, key=key)])
        assert 0.9 < time.monotonic() - started < 8  # waited for a second, then ended the stuck backend
        assert [(e.seq, e.key) for e in store.read()] == [(stored.seq, key)]
        store.close()


@MODES
@pytest.mark.parametrize("key", ["a", None], ids=["one-message", "two-messages"])
def test_a_lost_commit_that_cannot_be_settled_says_so_and_loses_nothing(
        postgres_url: str, mode: str, key: str | None) -> None:
    """The answer to a COMMIT is lost and the server stays unreachable past `settle_timeout`: the
    error says the outcome is unknown and to read the store first; the write is not repeated,
    and once the server is back the store holds it once."""
    with _proxied(postgres_url) as (proxy, namespace):
        store = PostgresStore(_through(proxy, postgres_url, namespace, mode), pool_size=1, timeout=1.0,
                              settle_timeout=1.5)
        assert store.read() == []  # its one pooled connection is open: the settle needs a new one
        proxy.cuts, proxy.refusing = ["after"], True
        with pytest.raises(StoreError, match="could not learn within 1.5 s whether the write was kept.*read the store"):
            store.append([Event("applied", {"proposal": "a"}, key=key)])
        proxy.refusing = False
        assert proxy.commits_sent == 1
        assert [(e.kind, e.key) for e in store.read()] == [("applied", key)]
        store.close()


@MODES
def test_a_call_that_gets_no_connection_waits_out_timeout_once_and_says_the_pool_was_busy(
        postgres_url: str, mode: str) -> None:
    """No connection within `timeout` (the pool's only one is busy): nothing was sent, so there
    is nothing to settle and nothing to run again. A read and a write each wait out `timeout`
    once, not twice, and the error says the pool was busy and how to size it."""
    namespace = unique_namespace()
    try:
        store = PostgresStore(namespace_url(postgres_url, namespace, lamar_fold=mode), pool_size=1, timeout=1.5,
                              settle_timeout=5.0)
        busy = r"no connection to .* within 1.5 s: all 1 connections of its pool \(pool_size=1\) stayed in use.*" \
               r"nothing of this call was kept. Give the store a pool_size of at least the number of threads"
        with store.connections.connection():  # held by another part of the program
            for call in (lambda: store.append([Event("applied", {"proposal": "a"}, key="a")]), store.read):
                started = time.monotonic()
                with pytest.raises(StoreError, match=busy):
                    call()
                assert 1.4 < time.monotonic() - started < 2.9  # one wait for a connection, no settling
        assert store.read() == []
        store.close()
    finally:
        drop_namespaces(postgres_url, namespace)


BATCH_WRITER = textwrap.dedent(
    """
    import os, sys
    sys.path[:0] = {paths!r}
    from lamar import StoreError
    from lamar.store import Event, ExperienceStore
    store = ExperienceStore({url!r})
    log = os.open({log!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for b in range(10**6):
        name = "{prefix}%d" % b
        batch = [Event("status", {{"id": name, "status": "active", "j": j}}) for j in range({size})]
        try:
            store.append(batch)
            os.write(log, ("ok %s\\n" % name).encode())
        except StoreError:
            os.write(log, ("lost %s\\n" % name).encode())
    """
)


def test_killed_clients_and_backends_leave_whole_batches_and_no_gaps(tmp_path: Path, postgres_url: str) -> None:
    namespace, app = unique_namespace(), unique_namespace("app")
    url = namespace_url(postgres_url, namespace, application_name=app, **LOG)
    log = tmp_path / "batches.log"
    size = 400
    rng = random.Random(11)
    try:
        for round_ in range(2):
            code = BATCH_WRITER.format(paths=[str(REPO)], url=url, log=str(log), prefix=f"r{round_}-", size=size)
            child = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE)
            deadline = time.monotonic() + 30
            while not (log.exists() and f"r{round_}-" in log.read_text()):
                assert child.poll() is None, child.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
                assert time.monotonic() < deadline
                time.sleep(0.05)
            for _ in range(3):  # cut the child's connection under its feet, mid-batch or not
                time.sleep(rng.uniform(0.05, 0.25))
                terminate(postgres_url, backends(postgres_url, app))
            time.sleep(rng.uniform(0.1, 0.4))
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
        store = PostgresStore(url)
        events = store.read()
        sizes = Counter(e.data["id"] for e in events)
        assert set(sizes.values()) == {size}  # every batch whole or absent
        assert [e.seq for e in events] == list(range(1, len(events) + 1))  # no gap: rollbacks undo the counter
        told = [line.split() for line in log.read_text().splitlines()]
        assert {name for verdict, name in told if verdict == "ok"} <= set(sizes)  # acknowledged: kept
        assert not {name for verdict, name in told if verdict == "lost"} & set(sizes)  # "nothing kept": true
        assert store.append([Event("status", {"id": "after", "status": "active"})])[0].seq == len(events) + 1
        store.close()
    finally:
        drop_namespaces(postgres_url, namespace)
