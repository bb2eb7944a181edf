"""`lamar mcp` over stdio stopped by a signal while its client still holds the pipe: it must exit,
not linger as an orphan on the store."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from lamar_mcp.launch import child_env, lamar_command, stdio_session

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the server's pid in /proc")


def _children() -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        found |= {int(pid) for pid in (task / "children").read_text().split()}
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def test_an_interrupted_stdio_server_exits_while_the_client_keeps_its_pipe_open(store: Path,
                                                                                        tmp_path: Path) -> None:
    command = lamar_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "--store", str(store)],
                                   env=child_env())
    log = tmp_path / "stderr.txt"
    before = _children()
    with log.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            (server,) = _children() - before
            assert not (await session.call_tool("recall", {"context": {"project": "trace"}})).is_error
            os.kill(server, signal.SIGINT)  # Ctrl-C, or a host that stops its servers so
            waited = time.monotonic()
            while _running(server) and time.monotonic() - waited < 15:
                await anyio.sleep(0.1)
            lingered = _running(server)
            if lingered:
                os.kill(server, signal.SIGKILL)
    assert not lingered, "the server was still running 15 s after SIGINT, its client's pipe open"
    assert "interrupted" in log.read_text()
    async with stdio_session(store) as again:  # the store opens at once, with the episode logged
        assert (await again.call_tool("lessons", {})).structured_content["count"] == 3
