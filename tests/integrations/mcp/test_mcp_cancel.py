"""A recall the client gives up on, over real stdio with the SDK's client: its episode is expired."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from lamar import Lamar
from lamar_mcp.launch import stdio_session


def _settled(store: Path) -> list[tuple[str | None, float | None]]:
    with Lamar(str(store)) as lam:
        return [(lam.episode(p).settled, lam.episode(p).reward) for p in _episodes(lam)]


def _episodes(lam: Lamar) -> list[str]:
    return [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]


async def test_a_recall_cancelled_by_the_clients_timeout_leaves_no_pending_episode(store: Path) -> None:
    async with stdio_session(store) as session:
        writer = sqlite3.connect(store, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
        with pytest.raises(MCPError):  # the client stops waiting and sends notifications/cancelled
            await session.call_tool("recall", {"context": {"project": "trace"}}, read_timeout_seconds=0.5)
        await session.list_tools()  # answered once the server has read the cancellation
        writer.execute("COMMIT")  # the recall goes on in its thread and stores its episode
        writer.close()
        deadline = time.monotonic() + 60  # a bound on a hang, not a measured time
        while (found := _settled(store)) != [("expired", None)] and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert found == [("expired", None)]  # the lessons never reached the model: nothing counts them
    with Lamar(str(store)) as lam:
        assert lam.pending() == []
