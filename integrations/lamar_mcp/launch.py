"""Start `lamar mcp` as a real subprocess and connect the SDK's client to it (used by the benchmark and tests).

`stdio_session(store)` spawns the server; `http_server(store)` listens on a free port for `http_session(url)`."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

_ROOT = Path(__file__).resolve().parents[2]
_SERVING = "lamar mcp: serving "


def lamar_command() -> list[str]:
    """The `lamar` console script next to this interpreter, else `python -m lamar.cli`."""
    script = Path(sys.executable).with_name("lamar")
    return [str(script)] if script.exists() else [sys.executable, "-m", "lamar.cli"]


def child_env() -> dict[str, str]:
    """This process's environment, with this source tree first on the child's import path."""
    paths = [str(_ROOT), str(_ROOT / "integrations")]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


@contextlib.asynccontextmanager
async def stdio_session(store: str | os.PathLike[str], *options: str,
                        cwd: str | os.PathLike[str] | None = None) -> AsyncIterator[ClientSession]:
    """Spawn `lamar mcp --store STORE [options]` over stdio (in `cwd`); yield an initialized `ClientSession`."""
    command = lamar_command()
    params = StdioServerParameters(command=command[0], args=[*command[1:], "mcp", "--store", str(store), *options],
                                   env=child_env(), cwd=None if cwd is None else str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextlib.contextmanager
def http_server(store: str | os.PathLike[str], *options: str, timeout: float = 60.0,
                env: dict[str, str] | None = None, prefix: Sequence[str] = ()) -> Iterator[str]:
    """Run `lamar mcp --transport http --port 0` until the block ends; yield its URL (`env`: more variables,
    `prefix`: a command that runs it, such as `setpriv` for another user)."""
    argv: Sequence[str] = [*prefix, *lamar_command(), "mcp", "--transport", "http", "--port", "0",
                           "--store", str(store), *options]
    process = subprocess.Popen(argv, env={**child_env(), **(env or {})}, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = threading.Event()
    lines: list[str] = []
    url: list[str] = []

    def read_stderr() -> None:  # keeps draining, so the server never blocks on a full pipe
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if line.startswith(_SERVING) and not url:
                url.append(line[len(_SERVING):].strip())
                found.set()
        found.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        if not found.wait(timeout) or not url:
            raise RuntimeError(f"lamar mcp did not start (exit {process.poll()}): {''.join(lines)[-2000:]}")
        yield url[0]
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(timeout=5)


@contextlib.asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialized `ClientSession` over streamable HTTP (sending `token` as a bearer token)."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as client, \
            streamable_http_client(url, http_client=client) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


__all__ = ["child_env", "http_server", "http_session", "lamar_command", "stdio_session"]
