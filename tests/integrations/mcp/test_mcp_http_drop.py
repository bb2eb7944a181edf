"""A client that drops its HTTP connection in the middle of a recall, with the SDK's client over real HTTP:
the recall's answer never arrives, so its episode is expired, and the server goes on serving."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import anyio

from lamar import Lamar
from lamar_mcp.launch import child_env, http_server, http_session

# The host: the SDK's client over HTTP, which dies as a killed host does (no DELETE of its session, its
# socket closed by the kernel) while its recall waits for the store.
HOST = """
import os, sys, anyio
from lamar_mcp.launch import http_session

async def main():
    async with http_session(sys.argv[1]) as session:
        async with anyio.create_task_group() as tg:
            tg.start_soon(session.call_tool, "recall", {"context": {"project": "trace"}})
            await anyio.sleep(1.0)
            os._exit(0)

anyio.run(main)
"""


def _settled(store: Path) -> list[str | None]:
    with Lamar(str(store)) as lam:
        return [lam.episode(e.data["id"]).settled for e in lam.store.read(0) if e.kind == "episode"]


async def _recall(url: str) -> str:
    async with http_session(url) as session:
        recalled = await session.call_tool("recall", {"context": {"project": "trace"}})
        assert not recalled.is_error
        return str(recalled.structured_content["episode_id"])


def test_a_recall_whose_client_dropped_the_connection_is_expired(store: Path) -> None:
    with http_server(store) as url:
        writer = sqlite3.connect(store, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
        try:
            host = subprocess.run([sys.executable, "-c", HOST, url], env=child_env(), timeout=120, check=False,
                                  capture_output=True, text=True)
            assert host.returncode == 0, host.stderr
        finally:
            writer.execute("COMMIT")  # the recall goes on in its thread and stores its episode
            writer.close()
        deadline = time.monotonic() + 60  # a bound on a hang, not a measured time
        while (found := _settled(store)) != ["expired"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert found == ["expired"]  # the lessons never reached the model: nothing counts them as injected
        served = anyio.run(_recall, url)  # the server still serves the next client
    with Lamar(str(store)) as lam:
        assert [p.episode_id for p in lam.pending()] == [served]
