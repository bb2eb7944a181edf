"""One lesson's past, read from the store's events: its evidence over time, its episodes, its audit trail.

The evidence trajectory is a replay: the events are folded, in order, into a fresh engine
over an in-memory copy, and the lesson's evidence is read after every outcome that could
move it. Each point is what the engine (default tuning) would have said at that moment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, TypeVar

from lamar.engine import Lamar
from lamar.store.base import Event
from lamar.store.memory import MemoryStore

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class EvidencePoint:
    """The lesson's evidence right after event `seq`."""

    seq: int
    time: float
    verdict: str
    lift: float
    lower: float
    upper: float
    randomized: int
    eligible: int
    restarts: int = 0  # how often the evidence had restarted by then (the world changed)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Appearance:
    """An episode in which the lesson was injected, and its outcome (None until reported)."""

    episode_id: str
    time: float
    signal: str | None
    reward: float | None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def replay(events: Sequence[Event], exp_id: str) -> tuple[Lamar, list[EvidencePoint]]:
    """Fold `events` into a fresh in-memory engine, recording `exp_id`'s evidence after each
    outcome or merge that touches it. Returns the engine (now in the store's final state) too."""
    engine = Lamar(MemoryStore())
    involved: set[str] = set()  # episodes where the lesson was eligible
    known = False
    points: list[EvidencePoint] = []
    for event in events:
        engine.store.append([Event(event.kind, event.data, key=event.key, time=event.time)])
        data = event.data
        moved = False
        if event.kind == "experience" and data.get("id") == exp_id:
            known = True
        elif event.kind == "snapshot":  # a checkpoint: the lesson and its open episodes as they were
            known = known or any(lesson["experience"]["id"] == exp_id for lesson in data["lessons"])
            involved = {row[0] for row in data["episodes"] if exp_id in row[2]}
            moved = known
        elif event.kind == "episode" and exp_id in data.get("eligible", ()):
            involved.add(data["id"])
        elif event.kind == "outcome":
            moved = data.get("episode") in involved
        elif event.kind == "merge" and data.get("into") == exp_id:
            moved = True  # it absorbs the evidence of its duplicates
        if known and moved:
            ev = engine.evidence(exp_id)
            points.append(EvidencePoint(
                seq=event.seq, time=event.time, verdict=ev.verdict.value, lift=ev.lift, lower=ev.lower,
                upper=ev.upper, randomized=ev.randomized, eligible=ev.eligible,
                restarts=ev.restarts))
    return engine, points


def thin(points: Sequence[T], rows: int) -> list[T]:
    """At most `rows` points, evenly spread, keeping the first and the last.

    >>> thin(list(range(10)), 4)
    [0, 3, 6, 9]
    """
    if len(points) <= rows:
        return list(points)
    step = (len(points) - 1) / (rows - 1)
    return [points[round(i * step)] for i in range(rows)]


def appearances(events: Sequence[Event], exp_id: str) -> tuple[list[Appearance], int]:
    """Episodes that injected the lesson (in order), and how many held it out."""
    outcomes: dict[str, tuple[str | None, float | None]] = {}
    for event in events:
        if event.kind == "outcome":  # a later (replacing) outcome wins
            reward = event.data.get("reward")  # None: the pending policy expired the episode
            signal = "expired" if event.data.get("expired") else event.data.get("signal")
            outcomes[event.data["episode"]] = (signal, None if reward is None else float(reward))
    injected: list[Appearance] = []
    held_out = 0
    for event in events:
        if event.kind != "episode":
            continue
        if exp_id in event.data.get("injected", ()):
            signal, reward = outcomes.get(event.data["id"], (None, None))
            injected.append(Appearance(event.data["id"], event.time, signal, reward))
        elif exp_id in event.data.get("held_out", ()):
            held_out += 1
    return injected, held_out


def audit_trail(events: Sequence[Event], exp_id: str) -> list[tuple[float, str]]:
    """(time, what happened) for the lesson: added, status changes with reasons, merges, sleep."""
    trail: list[tuple[float, str]] = []
    for event in events:
        data = event.data
        if event.kind == "experience" and data.get("id") == exp_id:
            trail.append((event.time, f"added as {data.get('status', 'active')}"))
        elif event.kind == "snapshot" and any(lesson["experience"]["id"] == exp_id for lesson in data["lessons"]):
            trail.append((event.time, "earlier history compacted into a checkpoint"))
        elif event.kind == "status" and data.get("id") == exp_id:
            reason = f": {data['reason']}" if data.get("reason") else ""
            trail.append((event.time, f"set {data['status']}{reason}"))
        elif event.kind == "merge" and data.get("into") == exp_id:
            trail.append((event.time, f"absorbed {', '.join(data.get('from', []))}"))
        elif event.kind == "merge" and exp_id in data.get("from", ()):
            trail.append((event.time, f"merged into {data.get('into')}"))
    return trail
