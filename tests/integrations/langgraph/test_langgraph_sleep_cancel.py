"""The sleep graph under `ainvoke`: a cancelled run stops its sleep at the next model call, as
`lamar.cancel.in_thread` does, and an uncancelled one reviews and applies as `invoke` does."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest
from langgraph.types import Command

from lamar_langgraph import build_sleep_graph
from tests.twins import TRACE_ROWS, openai_model, twins

pytest.importorskip("openai", reason="the openai extra is not installed")

def reply(text: str) -> httpx2.Response:
    return httpx2.Response(200, json={"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-test",
                                      "choices": [{"index": 0, "finish_reason": "stop",
                                                   "message": {"role": "assistant", "content": text}}]})


def test_a_cancelled_ainvoke_stops_sleep_at_its_next_model_call(tmp_path: Path) -> None:
    asked, release = threading.Event(), threading.Event()
    requests: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        asked.set()
        release.wait(10)  # slow: the run is cancelled meanwhile
        return httpx2.Response(500, json={"error": {"message": "overloaded", "type": "server_error"}})

    lam = twins(tmp_path / "lessons.db")
    graph = build_sleep_graph(lam, model=openai_model(answer), max_prompt_tokens=1_500)
    config = {"configurable": {"thread_id": "night"}}

    async def caller() -> None:
        run = asyncio.ensure_future(graph.ainvoke({"traces": TRACE_ROWS}, config))
        await asyncio.to_thread(asked.wait, 10)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(caller())
    release.set()
    for thread in threading.enumerate():
        if thread.name == "lamar-model-call":
            thread.join(10)
    assert len(requests) == 1  # no retry of the first batch, no second batch
    assert "report" not in graph.get_state(config).values  # the sleep node never finished
    lam.close()


def test_ainvoke_reviews_and_applies_as_invoke_does(tmp_path: Path) -> None:
    lam = twins(tmp_path / "lessons.db")
    graph = build_sleep_graph(lam, model=openai_model(lambda request: reply(json.dumps([]))), max_prompt_tokens=1_500)
    config = {"configurable": {"thread_id": "night"}}

    async def night() -> dict[str, Any]:
        paused = await graph.ainvoke({"traces": TRACE_ROWS}, config)
        assert [p["kind"] for p in paused["__interrupt__"][0].value["proposals"]] == ["merge"]
        return await graph.ainvoke(Command(resume="all"), config)

    done = asyncio.run(night())
    assert len(done["applied"]) == 1 and len(lam.experiences(status="active")) == 1
    lam.close()
