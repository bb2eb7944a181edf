"""Processes started together on one store, for the tests of what writers do at the same moment."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any


def at_once(jobs: Sequence[tuple[Callable[..., None], tuple[Any, ...]]]) -> list[Any]:
    """Run each (target, args) in a spawned process, its args followed by a barrier of all of them
    and a queue; each puts one value on the queue. Returns those values once every process exited
    cleanly (in the order they were put)."""
    context = multiprocessing.get_context("spawn")
    barrier, said = context.Barrier(len(jobs)), context.Queue()
    workers = [context.Process(target=target, args=(*args, barrier, said)) for target, args in jobs]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    return [said.get(timeout=10) for _ in workers]
