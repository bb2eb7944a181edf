"""A client whose end of the pipe closes while the server sends a recall's answer, over real stdio with
the SDK's client: the answer never arrives, so its episode is expired, not left pending for good."""

from __future__ import annotations

import shlex
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio
from mcp import ClientSession
from mcp.shared.message import SessionMessage

from lamar import Lamar
from lamar_mcp import build_server
from lamar_mcp.delivery import WATCHING, Deliveries
from lamar_mcp.launch import child_env, lamar_command
from tests.integrations.mcp.test_mcp_disconnect import host

# The host: the SDK's client, whose recall is answered into a pipe its reader has closed; it leaves
# (as a killed host does, so that nothing cuts the server's own exit short) once told to.
HOST = host("while not os.path.exists(sys.argv[3]):\n    await anyio.sleep(0.05)")


def test_a_recall_whose_answer_meets_a_closed_pipe_is_expired(store: Path, tmp_path: Path) -> None:
    status, closed, leave, log = (tmp_path / name for name in ("status", "closed", "leave", "stderr.txt"))
    server = shlex.join([*lamar_command(), "mcp", "--store", str(store)])
    # The server's answers pass through a reader that forwards the handshake's answer, then closes its
    # end of the pipe (and says so), and waits for the server to end.
    relay = (f"head -n 1; exec 0<&-; touch {shlex.quote(str(closed))}; "
             f"while [ ! -e {shlex.quote(str(status))} ]; do sleep 0.05; done")
    command = f"{{ {server}; echo $? > {shlex.quote(str(status))}; }} | {{ {relay}; }}"
    writer = sqlite3.connect(store, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process writes: the recall waits for the store's lock
    host = subprocess.Popen([sys.executable, "-c", HOST, command, str(log), str(leave)], env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: closed.exists() or host.poll() is not None)
        assert closed.exists(), host.communicate()[1]
        writer.execute("COMMIT")  # the recall stores its episode; its answer meets the closed pipe
        # Settled while the client still holds the server's stdin open: not only once it leaves.
        _wait_for(lambda: bool(_episodes(store)) and _episodes(store)[0][1] is not None)
        assert [settled for _, settled in _episodes(store)] == ["expired"]
        leave.touch()
        assert host.wait(timeout=60) == 0, host.communicate()[1]
    finally:
        if writer.in_transaction:
            writer.execute("COMMIT")
        writer.close()
        if host.poll() is None:
            host.kill()
            host.wait()
    _wait_for(lambda: status.exists())
    time.sleep(0.2)  # the shell's write of the status
    assert status.read_text().strip() == "0", log.read_text()
    assert log.read_text() == ""  # the broken pipe ends the session quietly
    with Lamar(str(store)) as lam:
        assert lam.pending() == []


async def test_an_answer_the_session_can_no_longer_send_is_expired(store: Path) -> None:
    """The narrowest boundary: the SDK's own session objects over its memory streams, wired as `serve_stdio`
    wires its pipes. The reader of the server's answers goes away after the handshake, so the SDK's send of
    the recall's answer fails (the SDK drops it without a word): the episode is expired there and then."""
    with Lamar(str(store), seed=0) as lam:
        lowlevel = build_server(lam)._lowlevel_server
        deliveries = Deliveries()
        watching = WATCHING.set(deliveries)  # before the server's tasks start: its handlers run in their context
        to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        server_writes, answers = anyio.create_memory_object_stream[SessionMessage](0)
        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay_the_handshake_then_drop() -> None:
            await to_client.send(await answers.receive())
            await answers.aclose()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: lowlevel.run(server_reads, deliveries.watch(server_writes),
                                                   lowlevel.create_initialization_options()))
                tg.start_soon(relay_the_handshake_then_drop)
                async with ClientSession(client_reads, to_server) as session:
                    await session.initialize()
                    tg.start_soon(session.call_tool, "recall", {"context": {"project": "trace"}})
                    with anyio.fail_after(60):  # a bound on a hang, not a measured time
                        while not _episodes(store) or _episodes(store)[0][1] is None:
                            await anyio.sleep(0.05)
                    tg.cancel_scope.cancel()
        finally:
            WATCHING.reset(watching)
        assert [settled for _, settled in _episodes(store)] == ["expired"] and lam.pending() == []


def _wait_for(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60  # a bound on a hang, not a measured time
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert done()


def _episodes(store: Path) -> list[tuple[str, str | None]]:
    with Lamar(str(store)) as lam:
        return [(e.data["id"], lam.episode(e.data["id"]).settled) for e in lam.store.read(0) if e.kind == "episode"]
