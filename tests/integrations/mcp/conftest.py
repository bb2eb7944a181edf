"""Fixtures for the MCP tests: a SQLite store holding a few lessons, its events for before/after checks, and one
server a module's tests that write nothing share (`shared_store`, `shared_session`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from mcp import ClientSession

from lamar import Experience, Lamar, Scope
from lamar.store import open_store
from lamar_mcp.launch import stdio_session

LESSONS = [
    Experience("the Xcode build fails after a dependency bump", "clear DerivedData before rebuilding",
               "stale module maps survive a clean build", scope=Scope(project="trace", language="swift")),
    Experience("a test fails only in CI", "compare the CI locale with yours", "date formats differ",
               scope=Scope(project="trace")),
    Experience("a migration times out", "run it in batches", "long locks block writers", scope=Scope(project="shop")),
]


def _filled(path: Path) -> Path:
    with Lamar(str(path), seed=0) as lam:
        for lesson in LESSONS:
            lam.add(lesson)
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A SQLite store with three lessons, two of them eligible for {project: trace, language: swift}."""
    return _filled(tmp_path / "experience.db")


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`store`, once for a module whose tests share `shared_session`: they only read it or are refused."""
    return _filled(tmp_path_factory.mktemp("shared") / "experience.db")


# loop_scope "module": the session lives across the module's tests, which then run in its loop
# (`pytestmark = pytest.mark.asyncio(loop_scope="module")` or the same mark on each test).
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_session(shared_store: Path) -> AsyncIterator[ClientSession]:
    """One `lamar mcp --store shared_store` for a module's tests that write nothing to the store, so that each
    reads it as `store` is and none depends on another's order. Spawning the server is most of a test's time
    (the SDK's import); tests of start-up, flags, writes and failures keep their own server."""
    opened: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def serve() -> None:  # one task enters and leaves the SDK's task groups, as anyio needs
        async with stdio_session(shared_store) as session:
            opened.set_result(session)
            await done.wait()

    server = asyncio.create_task(serve())
    await asyncio.wait([opened, server], return_when=asyncio.FIRST_COMPLETED)
    if not opened.done():
        server.result()  # the server failed to start: its error, not a hang
    try:
        yield opened.result()
    finally:
        done.set()
        await server


def events(path: Path) -> list[tuple[int, str, Any]]:
    """Every event in the store, to compare before and after a call that must change nothing."""
    raw = open_store(str(path))
    try:
        return [(e.seq, e.kind, e.data) for e in raw.read(0)]
    finally:
        raw.close()
