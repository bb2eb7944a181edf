"""Tool calls of one server handled at once: the SDK runs each in a worker thread, so two proposals
of one lesson (or a near-copy) must not both pass the check for a held lesson and both be stored."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

import pytest
from mcp.client.client import Client

from lamar import Experience, Lamar
from lamar_mcp.server import build_server

WHEN = "the Go build fails on a fresh clone"


def _meeting(lam: Lamar) -> None:
    """Hold each add at a barrier for two: two proposals checked at once both get there, a
    proposal checked after the other's add waits alone and goes on."""
    add, both = lam.add, threading.Barrier(2)

    def meeting(exp: Experience) -> str:
        with contextlib.suppress(threading.BrokenBarrierError):
            both.wait(timeout=0.5)
        return add(exp)

    lam.add = meeting  # type: ignore[method-assign]


@pytest.mark.parametrize("second", ["run go mod download first", "always run go mod download first"])
async def test_two_proposals_of_one_lesson_at_once_store_one(second: str) -> None:
    lam = Lamar(":memory:")
    _meeting(lam)
    async with Client(build_server(lam)) as client:
        results = await asyncio.gather(*(
            client.call_tool("propose_lesson", {"precondition": WHEN, "action": action})
            for action in ("run go mod download first", second)))
    assert len(lam.experiences()) == 1
    stored = lam.experiences()[0].id
    refused: Any = next(r for r in results if r.is_error)  # as when the calls come one after the other
    assert f"lamar already holds this lesson as {stored}" in refused.content[0].text


async def test_two_lists_of_one_lesson_at_once_store_it_once() -> None:
    lam = Lamar(":memory:")
    _meeting(lam)
    async with Client(build_server(lam)) as client:
        results = await asyncio.gather(*(
            client.call_tool("propose_lessons", {"lessons": f"- When {WHEN}, {action}.\n"})
            for action in ("run go mod download first", "always run go mod download first")))
    assert len(lam.experiences()) == 1
    assert sum(r.is_error for r in results) == 1
