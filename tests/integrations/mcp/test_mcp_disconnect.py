"""A client that dies in the middle of a call, over real stdio: the server ends quietly, status 0,
and keeps what it did (a recall whose answer never arrived is expired)."""

from __future__ import annotations

import shlex
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from lamar import Lamar
from lamar_mcp.launch import child_env, lamar_command


def host(wait: str) -> str:
    """A host: the SDK's client, which starts a recall, runs `wait` (Python lines), then dies as a
    killed host does (no shutdown, its pipe ends closed by the kernel)."""
    waiting = "".join(f"                {line}\n" for line in wait.splitlines())
    return f"""
import os, sys, anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

async def main():
    params = StdioServerParameters(command="sh", args=["-c", sys.argv[1]], env=dict(os.environ))
    with open(sys.argv[2], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call_tool, "recall", {{"context": {{"project": "trace"}}}})
{waiting}                os._exit(0)

anyio.run(main)
"""


HOST = host("await anyio.sleep(1.0)")  # dies while its recall waits for the store


def test_a_client_that_dies_mid_call_leaves_a_server_that_exits_quietly(store: Path, tmp_path: Path) -> None:
    status, log = tmp_path / "status", tmp_path / "stderr.txt"
    # The shell outlives the host and writes the server's exit status.
    server = f"{shlex.join([*lamar_command(), 'mcp', '--store', str(store)])}; echo $? > {shlex.quote(str(status))}"
    writer = sqlite3.connect(store, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
    try:
        host = subprocess.run([sys.executable, "-c", HOST, server, str(log)], env=child_env(), timeout=120, check=False,
                              capture_output=True, text=True)
        assert host.returncode == 0, host.stderr
    finally:
        writer.execute("COMMIT")
        writer.close()
    deadline = time.monotonic() + 60  # a bound on a hang, not a measured time
    while not status.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # the shell's write of the status
    assert status.read_text().strip() == "0", log.read_text()
    assert log.read_text() == ""
    with Lamar(str(store)) as lam:
        (episode,) = [e.data["id"] for e in lam.store.read(0) if e.kind == "episode"]
        assert lam.episode(episode).settled == "expired" and lam.pending() == []
