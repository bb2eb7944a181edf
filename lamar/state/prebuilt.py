"""A checkpoint's snapshot built before it takes the fold mode's lock on the log, and whether what was
written meanwhile leaves it true at its seq, so that the lock is held for the rewrite, not the build."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from lamar.state.snapshot import snapshot_of
from lamar.store.base import Event

if TYPE_CHECKING:
    from lamar.state.cache import FoldCache


@dataclasses.dataclass(frozen=True)
class Prebuilt:
    """The snapshot of a cache at its seq, its text encoded; the lessons' order, and the episodes it holds
    with those that had a reward (sealed in it)."""

    event: Event
    order: list[str]
    episodes: frozenset[str]
    rewarded: frozenset[str]


def prebuild(cache: FoldCache) -> Prebuilt:
    """The snapshot of `cache` as it stands (settled, whole, in the rows' order)."""
    event = Event("snapshot", snapshot_of(cache), seq=cache.seq)
    event.data_json()  # kept on the event: the rewrite sends this text, whatever the cache folds after it
    records = cache.episodes.values()
    return Prebuilt(event, list(cache.lessons), frozenset(cache.episodes),
                    frozenset(r.id for r in records if r.reward is not None))


def still_true(built: Prebuilt, cache: FoldCache, written: list[Event]) -> bool:
    """Whether `built` may replace the log up to its seq with `written` (folded since) left after it: only
    new episodes and first reports, which fold onto the snapshot as they folded onto the cache, and the
    lessons in the same order. A replacement is not: the snapshot seals the outcome it replaces."""
    return list(cache.lessons) == built.order and all(
        e.kind == "episode" or (e.kind == "outcome" and not e.data.get("replace")) for e in written)


def after_rewrite(built: Prebuilt, cache: FoldCache) -> None:
    """Set `cache`'s records as a process that folds the rewritten log sees them: the episodes the snapshot
    holds are known only from it (their keys went with their events), and those rewarded in it are sealed."""
    for record in cache.episodes.values():
        if record.id in built.episodes:
            record.sealed = record.id in built.rewarded
    cache.pinned |= built.episodes & set(cache.episodes)


__all__ = ["Prebuilt", "after_rewrite", "prebuild", "still_true"]
