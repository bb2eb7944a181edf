"""`lamar mcp --transport http` on 127.0.0.1, driven by the SDK's streamable HTTP client."""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio

from lamar import Lamar
from lamar_mcp.launch import http_server, http_session
from tests.integrations.mcp.conftest import events

CONTEXT = {"project": "trace", "language": "swift"}
CLIENTS = 8
EPISODES = 50  # each; the clients' calls interleave from the first, so more only adds time


async def test_http_round_trip_and_resources(store: Path) -> None:
    with http_server(store, "--seed", "3") as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with http_session(url) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(tools) == {"recall", "report", "evidence", "lessons", "propose_lesson", "propose_lessons",
                                  "import_rules", "whatif", "erase", "edit"}
            assert all(tool.output_schema for tool in tools.values())
            recalled = (await session.call_tool("recall", {"context": CONTEXT})).structured_content
            assert recalled["lesson_ids"]
            reported = await session.call_tool("report", {"episode_id": recalled["episode_id"], "signal": "corrected"})
            assert reported.structured_content["reward"] == -0.6
            ev = (await session.call_tool("evidence", {"lesson_id": recalled["lesson_ids"][0]})).structured_content
            assert ev["injected"] == 1
            before = events(store)
            again = await session.call_tool("report", {"episode_id": recalled["episode_id"], "signal": "shipped"})
            assert again.is_error and "reported once" in again.content[0].text
            assert events(store) == before
            listed = json.loads((await session.read_resource("lamar://lessons")).contents[0].text)
            assert listed["count"] == 3
    with Lamar(str(store)) as lam:
        assert lam.episode(recalled["episode_id"]).signal == "corrected"
        assert (lam.stats()["episodes"], lam.stats()["reports"]) == (1, 1)


async def test_eight_clients_at_once_count_every_episode_and_report_once(store: Path) -> None:
    episodes: list[str] = []

    async def client(number: int, url: str) -> None:
        async with http_session(url) as session:
            for i in range(EPISODES):
                context = {**CONTEXT, "client": str(number)}
                recalled = await session.call_tool("recall", {"context": context})
                assert not recalled.is_error, recalled.content
                episode = recalled.structured_content["episode_id"]
                signal = ("shipped", "accepted", "corrected")[(number + i) % 3]
                reported = await session.call_tool("report", {"episode_id": episode, "signal": signal})
                assert not reported.is_error, reported.content
                episodes.append(episode)

    with http_server(store, "--seed", "5") as url:
        started = time.perf_counter()
        async with anyio.create_task_group() as clients:
            for number in range(CLIENTS):
                clients.start_soon(client, number, url)
        elapsed = time.perf_counter() - started
    print(f"\n{CLIENTS} clients x {EPISODES} episodes over HTTP: {elapsed:.1f} s "
          f"({CLIENTS * EPISODES / elapsed:.0f} episodes/s, each a recall and a report)")

    assert len(episodes) == len(set(episodes)) == CLIENTS * EPISODES
    logged = [data for _, kind, data in events(store) if kind == "episode"]
    outcomes = [data for _, kind, data in events(store) if kind == "outcome"]
    assert sorted(e["id"] for e in logged) == sorted(episodes)
    assert sorted(o["episode"] for o in outcomes) == sorted(episodes)
    with Lamar(str(store)) as lam:
        stats = lam.stats()
        assert (stats["episodes"], stats["reports"], stats["unreported"]) == (len(episodes), len(episodes), 0)
        for lesson in lam.experiences():
            ev = lam.evidence(lesson.id)
            # Every episode saw both trace lessons, never the shop one: counts add up per lesson.
            assert ev.eligible == (len(episodes) if lesson.scope.matches(CONTEXT) else 0)
            assert ev.injected + ev.held_out <= ev.eligible
