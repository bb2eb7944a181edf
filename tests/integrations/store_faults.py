"""Faults put at a store's seam while an integration runs (a read-only file, a full disk, a lock held by another
process, a killed PostgreSQL connection, a damaged JSON line) and the check every integration passes under them:
its call answers as it did, a warning says what happened and what to do, and the store keeps every earlier event."""

from __future__ import annotations

import errno
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from lamar import ExperienceStore, Lamar
from tests.conftest import IN_CI
from tests.locks import held
from tests.mounts import tmpfs

# Seconds a store waits for another process's lock: the faults hold theirs for far longer.
TIMEOUT = 1.0
# What each fault's warning must say, besides the store's name: what to do.
ADVICE = {
    "read_only": "open a writable copy",
    "full_disk": "free some space",
    "locked": "try again once that writer is done",
    "slow": "try again once that writer is done",
    "corrupt": "from a backup",
    "killed": "the next call reconnects",
}


def events(location: str) -> list[tuple[object, ...]]:
    """Every event of the store at `location`, as a new process reads it."""
    lam = Lamar(ExperienceStore(location, timeout=TIMEOUT))
    try:
        return [(e.seq, e.kind, e.key, e.data) for e in lam.store.read(0)]
    finally:
        lam.close()


def warned(caplog: pytest.LogCaptureFixture) -> Callable[[], str]:
    """The warnings logged so far, read anew at each call: where `survives` looks for a fault's advice."""
    return lambda: "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


@contextmanager
def member_store(postgres_url: str, name: str) -> Iterator[tuple[str, str]]:
    """A namespace of its own, reached as a member role of the test's own whose connections `killed` ends: the
    store's URL and the role; both dropped when the block ends."""
    from tests.pg_role import member_role
    from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

    namespace = unique_namespace(name.replace("_", "-"))
    try:
        with member_role(postgres_url, name) as role:
            yield namespace_url(postgres_url, namespace, user=role), role
    finally:
        drop_namespaces(postgres_url, namespace)


def tiny_disk(folder: Path) -> AbstractContextManager[Path]:
    """A real tmpfs of 4 MiB in `folder`: a store there meets ENOSPC once `full_disk` fills it."""
    return tmpfs(folder / "disk", "4M")


@contextmanager
def read_only(location: str) -> Iterator[None]:
    """The store file made immutable (`chattr +i`), which binds root too, until the block ends."""
    if subprocess.run(["chattr", "+i", location], capture_output=True, check=False).returncode != 0:
        if IN_CI:
            pytest.fail("chattr +i is needed to make a store read-only for root")
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", location], check=True)


@contextmanager
def full_disk(location: str) -> Iterator[None]:
    """ENOSPC on the store's writes until the block ends. A store on `tiny_disk` gets a disk filled up (SQLite's
    own writes meet it; a JSON store's appends may still fit in its last page). A JSON store elsewhere gets the
    OSError(ENOSPC) a full disk gives at the one call that writes its appends (the file module's `os.write`)."""
    if location.endswith(".json") and not os.path.ismount(os.path.dirname(location)):
        from lamar.store import json_file

        real = json_file.os

        class _Full:
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            @staticmethod
            def write(fd: int, data: bytes) -> int:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        json_file.os = _Full()  # type: ignore[assignment]
        try:
            yield
        finally:
            json_file.os = real
        return
    filler = os.path.join(os.path.dirname(location), "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 65536):
            pass
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)
    try:
        yield
    finally:
        os.unlink(filler)


_WRITER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
"""


@contextmanager
def locked(location: str) -> Iterator[None]:
    """Another process holding an open write transaction on the SQLite store until the block ends."""
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, location], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "held\n"
        yield
    finally:
        writer.kill()
        writer.wait()


@contextmanager
def slow(location: str) -> Iterator[None]:
    """A JSON store's writer lock held by another process for longer than the store waits."""
    with held(f"{location}.lock"):
        yield


@contextmanager
def corrupt(location: str) -> Iterator[None]:
    """A JSON store's first event changed behind Lamar's back (its checksum fails); put back when the block ends,
    with whatever was appended meanwhile (a process that reads the log's tail from its saved state never reads
    that line, and may write)."""
    path = Path(location)
    header, event, rest = path.read_bytes().split(b"\n", 2)
    at = event.index(b'"action": "') + len(b'"action": "')
    changed = event[:at] + b"X" + event[at + 1:]  # one letter: the lines after it stay where the index has them
    path.write_bytes(b"\n".join([header, changed, rest]))
    try:
        yield
    finally:
        header, now, rest = path.read_bytes().split(b"\n", 2)
        assert now == changed
        path.write_bytes(b"\n".join([header, event, rest]))


def killed(postgres_url: str, role: str = "", *, app: str = "") -> Callable[[str], Any]:
    """A fault ending every server connection of `role`, or named `app` (pg_terminate_backend), as the block
    starts."""

    @contextmanager
    def fault(location: str) -> Iterator[None]:
        import psycopg

        column, value = ("usename", role) if role else ("application_name", app)
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            ended = conn.execute(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE {column} = %s",
                                 (value,)).fetchall()
        assert ended, f"no connection of {value} to end"
        yield

    return fault


def survives(location: str, call: Callable[[], Any], fault: Callable[[str], Any], said: Callable[[], str], *,
             advice: str | None, read: Callable[[], list[Any]] | None = None, whole: bool = True) -> None:
    """`call()` (the framework's call, which uses the store) answers the same with `fault` in place as without;
    `said()` (the warnings so far) gives `advice` when a write was refused (None: the fault may let the writes
    through; with `whole` False, some may even so); after the fault, the store (read by `read`, else as `events`
    reads it) holds every event written before it, and takes more."""
    read = read or (lambda: events(location))
    answer = call()
    before = read()
    with fault(location):
        assert call() == answer
    between = read()
    assert between[:len(before)] == before, "an event written before the fault was lost"
    if advice is not None:
        text = said()
        assert len(between) == len(before) or not whole, "the write went through the fault"
        assert advice in text, text
    assert call() == answer
    assert len(read()) > len(between), "the store takes no writes once the fault is gone"


# Each file store's faults (a SQLite store gets the lock and the JSON store the slow lock, since SQLite waits
# for a lock only as long as its writer's transaction is open), and what makes each.
CASES = [("db", "read_only"), ("db", "full_disk"), ("db", "locked"), ("json", "read_only"), ("json", "full_disk"),
         ("json", "slow"), ("json", "corrupt")]
IDS = [f"{kind}-{fault}" for kind, fault in CASES]
FAULTS = {"read_only": read_only, "full_disk": full_disk, "locked": locked, "slow": slow, "corrupt": corrupt}


def refused(kind: str, fault: str) -> str | None:
    """The advice the warning of `fault` on a `kind` store gives; None where the writes may go through (an open
    SQLite connection keeps writing its -wal whatever the file's own mode)."""
    return None if (kind, fault) == ("db", "read_only") else ADVICE[fault]


@contextmanager
def stores(folder: Path, *, all_on_disk: bool = False) -> Iterator[Callable[[str], str]]:
    """The location of a store of each kind in `folder`: a SQLite one (and with `all_on_disk` a JSON one too) on
    a `tiny_disk` that `full_disk` fills."""
    with tiny_disk(folder) as disk:
        yield lambda kind: str(disk / "lessons.db") if kind == "db" else str(
            (disk if all_on_disk else folder) / "lessons.json")
