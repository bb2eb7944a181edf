"""One lesson's past: its evidence over time and audit trail (`Lamar.history`, which the fold keeps as it
goes, so nothing is replayed), and its episodes, read from the log."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from lamar.policy.history import EvidencePoint
from lamar.store.base import Event, StoredText, TextStore

if TYPE_CHECKING:
    from lamar.engine import Lamar

T = TypeVar("T")
_WINDOW = 1024  # events read first from the end of the log; each further window is 8 times larger
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')  # a JSON string's text between its quotes, escapes left in


@dataclasses.dataclass(frozen=True)
class Appearance:
    """An episode in which the lesson was injected, and its outcome (None until reported)."""

    episode_id: str
    time: float
    signal: str | None
    reward: float | None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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


def logged_counts(lam: Lamar, exp_id: str) -> str:
    """How many logged episodes injected the lesson and held it out, each with how many of them
    still await their outcome: the counts of `Evidence` (and of `lamar ls`) leave those out.

    >>> from lamar import Experience, Lamar
    >>> lam = Lamar(seed=0)
    >>> exp_id = lam.add(Experience("the build fails", "clear the cache", status="active"))
    >>> rec = lam.recall({})
    >>> logged_counts(lam, exp_id)
    'injected in 1 episode (1 awaiting its outcome), held out in 0'
    """
    past = lam.history(exp_id)
    injected = held = 0
    for episode in lam.pending():
        injected += exp_id in episode.injected
        held += exp_id in episode.held_out
    return (f"injected in {_waiting(past.injected_in, 'episode', injected)}, "
            f"held out in {_waiting(past.held_out_in, '', held)}")


def _waiting(count: int, noun: str, waiting: int) -> str:
    text = f"{count} {noun}{'' if count == 1 or not noun else 's'}".rstrip()
    return f"{text} ({waiting} awaiting {'its' if waiting == 1 else 'their'} outcome)" if waiting else text


def latest_appearances(lam: Lamar, exp_id: str, count: int | None) -> list[Appearance]:
    """The latest `count` episodes in the log that injected the lesson (every one when None),
    oldest first.

    The log is read from its end backwards, in growing windows, until enough are found (the whole
    log when `count` is None). An outcome always follows its episode in the log, so a window that
    holds an episode holds its outcome (if any) too. A store that hands over its texts has only
    the events that name the lesson, or one of its episodes, decoded, each once.
    """
    store = lam.store
    last = int(lam.stats()["events"])
    decoded: dict[int, Event] = {}
    window = _WINDOW
    while True:
        after = 0 if count is None else max(0, last - window)
        if isinstance(store, TextStore):
            events = _naming(store, store.read_texts(after), exp_id, decoded)
        else:
            events = store.read(after)
        found, _ = appearances(events, exp_id)
        if after == 0 or len(found) >= count:  # type: ignore[operator]
            return found if count is None else found[-count:]
        window *= 8


def _naming(store: TextStore, rows: list[StoredText], exp_id: str, decoded: dict[int, Event]) -> list[Event]:
    """What `appearances` needs of `rows` for the lesson, in log order: the episodes that injected
    it and the outcomes of those episodes. Decoding every event of a long log is what a lesson's
    page would cost otherwise; a text that lacks an id as a whole JSON string cannot hold it."""
    def event(row: StoredText) -> Event:
        found = decoded.get(row.seq)
        if found is None:
            found = decoded[row.seq] = store.decoded(row)
        return found

    plain = exp_id.isascii() and exp_id.isprintable() and '"' not in exp_id and "\\" not in exp_id
    picked: list[Event] = []
    episodes: set[str] = set()
    for row in rows:
        if row.kind == "episode" and (exp_id in row.data if plain else _names(row.data, {exp_id})):
            episode = event(row)
            if exp_id in episode.data.get("injected", ()):
                picked.append(episode)
                episodes.add(episode.data["id"])
    for row in rows:  # outcomes in a second pass: one logged before its episode still counts
        if row.kind == "outcome" and episodes and _names(row.data, episodes):
            picked.append(event(row))
    picked.sort(key=lambda e: e.seq)
    return picked


def _names(text: str, ids: Collection[str]) -> bool:
    """Whether the JSON `text` may hold one of `ids` as a string: one of its strings is one of them
    as written, or has an escape (which only a decode can compare)."""
    return any(s in ids or "\\" in s for s in _STRING.findall(text))


__all__ = ["Appearance", "EvidencePoint", "appearances", "latest_appearances", "logged_counts", "thin"]
