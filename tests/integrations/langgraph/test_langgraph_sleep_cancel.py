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

from lamar import Experience, Lamar, Scope
from lamar_langgraph import build_sleep_graph

pytest.importorskip("openai", reason="the openai extra is not installed")
from lamar.models.openai import OpenAIModel

TRACES = [{"id": f"t{i}", "time": float(i), "context": {"project": "demo"}, "input": "the build broke " + "x" * 1_400,
           "tool_errors": ["module map is stale"], "outcome": "reverted"} for i in range(6)]


def twins(path: Path) -> Lamar:
    lam = Lamar(str(path))
    lam.add(Experience("tests are flaky", "rerun the failing test once", scope=Scope(project="demo")))
    lam.add(Experience("Tests are flaky.", "Rerun the failing test once!", scope=Scope(project="demo")))
    return lam


def openai(answer: Any) -> OpenAIModel:
    client = httpx2.Client(transport=httpx2.MockTransport(answer))
    return OpenAIModel("gpt-test", api="chat", api_key="sk-test", http_client=client, max_retries=2)


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
    graph = build_sleep_graph(lam, model=openai(answer), max_prompt_tokens=1_500)
    config = {"configurable": {"thread_id": "night"}}

    async def caller() -> None:
        run = asyncio.ensure_future(graph.ainvoke({"traces": TRACES}, config))
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
    graph = build_sleep_graph(lam, model=openai(lambda request: reply(json.dumps([]))), max_prompt_tokens=1_500)
    config = {"configurable": {"thread_id": "night"}}

    async def night() -> dict[str, Any]:
        paused = await graph.ainvoke({"traces": TRACES}, config)
        assert [p["kind"] for p in paused["__interrupt__"][0].value["proposals"]] == ["merge"]
        return await graph.ainvoke(Command(resume="all"), config)

    done = asyncio.run(night())
    assert len(done["applied"]) == 1 and len(lam.experiences(status="active")) == 1
    lam.close()
