"""Pending episodes: recalls still waiting for their outcome, and the policy that settles
the ones that waited too long (a default outcome, or expiry), recorded as outcome events."""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from lamar._errors import EventConflict, InvalidArgument
from lamar.signals import Signal, to_reward
from lamar.store.base import Event

if TYPE_CHECKING:
    from lamar.state.episode import EpisodeRecord
    from lamar.state.follower import Follower


@dataclasses.dataclass(frozen=True)
class PendingEpisode:
    """An episode no outcome has reached yet.

    Attributes:
        episode_id: the id recall returned.
        context: the context it was recalled for.
        injected: the lessons it injected, best first.
        time: when it was recalled (seconds since the epoch).
        age: seconds between `time` and the moment `pending()` looked.
        held_out: the lessons it wanted and held out (the randomized control).
    """

    episode_id: str
    context: Mapping[str, str]
    injected: tuple[str, ...]
    time: float
    age: float
    held_out: tuple[str, ...] = ()


def is_pending(record: EpisodeRecord) -> bool:
    """No outcome, no default and no expiry has been folded for it."""
    return record.reports == 0


def pending(log: Follower, older_than: float | None, now: float | None,
            only: list[str] | None = None) -> list[PendingEpisode]:
    """The pending episodes, oldest first, or those among `only` (the caller holds the engine's lock)."""
    if older_than is not None and not older_than >= 0.0:
        raise InvalidArgument(f"older_than is an age in seconds, >= 0; got {older_than!r}")
    clock = time.time() if now is None else now
    out = []
    for record in _unsettled(log) if only is None else _among(log, only):
        age = clock - record.time
        if older_than is not None and age < older_than:
            continue
        out.append(PendingEpisode(record.id, dict(record.context), tuple(record.injected), record.time, age,
                                   tuple(record.held_out)))
    out.sort(key=lambda item: item.time)
    return out


def settle(log: Follower, now: float | None) -> list[str]:
    """Record the policy's outcome for every episode pending longer than `pending_after`.

    With `pending_outcome` set, the episode gets that outcome as an outcome event marked
    `"default"`; without it, an outcome event marked `"expired"` that carries no reward (the
    episode stops waiting and teaches nothing). Both take the episode's first outcome key, so
    two processes settling at once, or a report racing the settlement, write one outcome.
    A late real report replaces either (see `Lamar.report`). Returns the settled episode ids.
    """
    limit = log.policy.pending_after
    if limit is None:
        return []
    clock = time.time() if now is None else now
    due = []
    for record in _unsettled(log):  # in recall order: stop at the first that may still wait
        if clock - record.time < limit:
            break
        due.append(record)
    if not due:
        return []
    outcome = log.policy.pending_outcome
    reward, signal = (None, None) if outcome is None else to_reward(outcome)
    done = []
    for record in sorted(due, key=lambda r: r.time):
        data: dict[str, object] = {"episode": record.id, "reward": reward,
                                   "signal": signal.value if isinstance(signal, Signal) else None,
                                   "replace": False, "reason": f"no report within {limit:g}s"}
        data["default" if outcome is not None else "expired"] = True
        try:
            log.append([Event("outcome", data, key=f"outcome:{record.id}")])
        except EventConflict:
            continue  # reported, or settled by another process, just now
        done.append(record.id)
    log.sync()
    return done


def expire(log: Follower, episode_id: str, reason: str) -> bool:
    """Record that an episode will get no outcome (its run failed, its thread was dropped).

    Returns False when it already has an outcome (nothing is written)."""
    record = log.cache.episodes.get(episode_id)
    if record is None or not is_pending(record):
        return False
    data = {"episode": episode_id, "reward": None, "signal": None, "replace": False,
            "expired": True, "reason": reason}
    try:
        log.append([Event("outcome", data, key=f"outcome:{episode_id}")])
    except EventConflict:
        return False  # reported by another writer just now
    log.sync()
    return True


def _among(log: Follower, ids: list[str]) -> Iterator[EpisodeRecord]:
    """The pending episodes among `ids`, each looked up in the fold: a pending episode is always
    there (a saved state keeps them all), so a few ids cost as little in a store full of them."""
    episodes = log.cache.episodes
    for episode_id in dict.fromkeys(ids):
        record = episodes.get(episode_id)
        if record is not None and is_pending(record):
            yield record


def _unsettled(log: Follower) -> Iterator[EpisodeRecord]:
    """Pending episodes in fold order, via a queue of ids that drops reported ones from its
    front as it goes (settling walks only the old end, not every episode)."""
    cache = log.cache
    queue = cache.unsettled
    if queue is None:
        queue = cache.unsettled = deque(r.id for r in cache.episodes.values() if is_pending(r))
    while queue:
        head = cache.episodes.get(queue[0])
        if head is not None and is_pending(head):
            break
        queue.popleft()
    for episode_id in queue:
        record = cache.episodes.get(episode_id)
        if record is not None and is_pending(record):
            yield record


__all__ = ["PendingEpisode", "expire", "is_pending", "pending", "settle"]
