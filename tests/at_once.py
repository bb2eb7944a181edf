"""Processes started together on one store, for the tests of what writers do at the same moment."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any

# Each worker is forked from a server process that holds only these imports: a fresh process with
# no thread, connection or engine of the test's, as a spawned one is, without an interpreter start-up
# and the imports per worker. A worker imports its test's module to find its target, so the server
# also holds what those modules import that takes long (pytest, psycopg, the MCP server's tools); a
# module that is not installed is left out of the preload.
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["lamar", "lamar.store.sqlite", "lamar.store.json_file", "lamar.store.postgres",
                                 "pytest", "psycopg", "lamar_mcp.tools"])


def at_once(jobs: Sequence[tuple[Callable[..., None], tuple[Any, ...]]]) -> list[Any]:
    """Run each (target, args) in a fresh process, its args followed by a barrier of all of them
    and a queue; each puts one value on the queue. Returns those values once every process exited
    cleanly (in the order they were put)."""
    barrier, said = _CONTEXT.Barrier(len(jobs)), _CONTEXT.Queue()
    workers = [_CONTEXT.Process(target=target, args=(*args, barrier, said)) for target, args in jobs]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    return [said.get(timeout=10) for _ in workers]
