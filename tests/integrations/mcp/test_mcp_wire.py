"""What a client writes on the stdio pipe, over a real `lamar mcp` process with the SDK's client session:
a request holding half of an emoji is answered, not left waiting for ever."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from lamar import Lamar
from lamar_mcp.launch import child_env, lamar_command

HALF = "\ud83d"  # the first half of 😀 (U+1F600), as a client that cuts a string in UTF-16 units leaves it


@contextlib.asynccontextmanager
async def escaping_session(store: Path) -> AsyncIterator[ClientSession]:
    """The SDK's client over `lamar mcp`'s stdio, writing each message as a JavaScript client does:
    JSON with every character outside ASCII escaped, a lone surrogate as `\\ud83d`."""
    process = await anyio.open_process([*lamar_command(), "mcp", "--store", str(store)], env=child_env(),
                                       stderr=subprocess.DEVNULL)
    send_in: MemoryObjectSendStream[SessionMessage | Exception]
    read_in: MemoryObjectReceiveStream[SessionMessage | Exception]
    send_in, read_in = anyio.create_memory_object_stream(0)
    send_out: MemoryObjectSendStream[SessionMessage]
    read_out: MemoryObjectReceiveStream[SessionMessage]
    send_out, read_out = anyio.create_memory_object_stream(0)

    async def from_server() -> None:
        assert process.stdout is not None
        buffered = b""
        async with send_in:
            async for chunk in process.stdout:
                *lines, buffered = (buffered + chunk).split(b"\n")
                for line in lines:
                    await send_in.send(SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False)))

    async def to_server() -> None:
        assert process.stdin is not None
        async with read_out:
            async for message in read_out:
                data = message.message.model_dump(by_alias=True, exclude_unset=True, mode="python")
                await process.stdin.send((json.dumps(data) + "\n").encode())

    async with process, anyio.create_task_group() as tasks:
        tasks.start_soon(from_server)
        tasks.start_soon(to_server)
        async with ClientSession(read_in, send_out) as session:
            await session.initialize()
            yield session
        tasks.cancel_scope.cancel()


async def test_a_lone_surrogate_is_read_as_a_replacement_character_and_answered(store: Path) -> None:
    async with escaping_session(store) as session:
        with anyio.fail_after(60):  # a bound on a hang: the old server never answered
            recalled = await session.call_tool("recall", {"context": {"project": "trace"},
                                                          "text": f"the build fails {HALF}"})
            proposed = await session.call_tool("propose_lesson", {"precondition": f"a commit message ends in {HALF}",
                                                                  "action": "write the emoji whole"})
            await session.call_tool("report", {"episode_id": recalled.structured_content["episode_id"],
                                               "signal": "shipped"})
    assert not recalled.is_error and recalled.structured_content["episode_id"], recalled.content
    assert not proposed.is_error, proposed.content
    assert proposed.structured_content["text"] == "When a commit message ends in \ufffd, write the emoji whole."
    with Lamar(str(store)) as lam:
        assert lam.get(proposed.structured_content["lesson_id"]).precondition == "a commit message ends in \ufffd"
        assert lam.stats()["reports"] == 1
