"""Two MCP servers on one store, each proposing a near-copy of one lesson at the same moment: each
stores its own, reads the lessons again, and the one added later is retired as a copy of the
first, so one lesson of the two is left to gather evidence and its id answers both."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Barrier

from lamar import Lamar, Status
from tests.at_once import at_once

_ROUNDS = 5
WHEN = "the Go build fails on a fresh clone"
_ACTIONS = ("run go mod download first", "always run go mod download first")


def _propose(location: str, round_: str, action: str, barrier: Barrier, said: multiprocessing.Queue[str]) -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from lamar_mcp.tools import LamarTools

    tools = LamarTools(Lamar(location))
    tools.lamar.experiences()  # the log read before the race, as a server that has been running
    barrier.wait()
    try:
        said.put(tools.propose_lesson(WHEN, action, scope={"round": round_}).lesson_id)
    except ToolError as exc:
        said.put(f"refused: {exc}")
    tools.lamar.close()


def test_two_servers_proposing_near_copies_at_once_keep_one(store_location: str) -> None:
    Lamar(store_location).close()  # the store exists before the servers open it
    doubled = []
    for round_ in range(_ROUNDS):
        said = at_once([(_propose, (store_location, str(round_), action)) for action in _ACTIONS])
        with Lamar(store_location) as lam:  # a round's lessons are alone in its scope
            stored = lam.experiences(scope={"round": str(round_)})
            live = [e for e in stored if e.status is not Status.RETIRED]
            if len(live) != 1:
                doubled.append(round_)
                continue
            held = live[0].id
            refused = [s for s in said if s.startswith("refused: ")]
            assert said.count(held) + len(refused) == 2, said
            assert all(f"lamar already holds this lesson as {held}" in s for s in refused), said
            for copy in (e for e in stored if e.id != held):  # a copy stored and retired names the one held
                assert copy.status is Status.RETIRED, copy
                assert any(held in line for _, line in lam.history(copy.id).trail), lam.history(copy.id).trail
    assert not doubled, f"two lessons left to gather evidence in rounds {doubled} of {_ROUNDS}"
