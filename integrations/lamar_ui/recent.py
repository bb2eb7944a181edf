"""What the pages read of a long log without reading all of it: the latest episodes from its end,
and answers kept while the store stays as it was."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from lamar import Lamar
from lamar.store.base import Event, Store, StoredText, TextStore

T = TypeVar("T")
_WINDOW = 1024  # events read first from the end of the log; each further window is 8 times larger
_KEPT = 16  # answers kept: a few filters and policies, each for the store as it is now


def latest_episodes(store: Store, last: int, count: int) -> tuple[list[Event], dict[str, dict[str, Any]]]:
    """The latest `count` episodes in the log, newest first, and the outcomes logged for them (a
    later outcome replaces an earlier one), read from the log's end backwards in growing windows
    through `last`, the seq of the log's end. An outcome always follows its episode in the log, so
    a window that holds an episode holds its outcomes too."""
    window = _WINDOW
    while True:
        after = max(0, last - window)
        # Only the episodes shown are decoded: each carries its propensities over every eligible
        # lesson, which on a store of thousands of lessons makes it many times an outcome's size.
        rows: list[StoredText] | list[Event] = store.read_texts(after) if isinstance(store, TextStore) \
            else store.read(after)
        episodes = [row for row in rows if row.kind == "episode"]
        if after == 0 or len(episodes) >= count:
            shown = [_decoded(store, row) for row in episodes[-count:][::-1]] if count else []
            ids = {e.data["id"] for e in shown}
            told = (_decoded(store, row).data for row in rows if row.kind == "outcome")  # small: all decoded
            return shown, {data["episode"]: data for data in told if data["episode"] in ids}
        window *= 8


def _decoded(store: Store, row: StoredText | Event) -> Event:
    if isinstance(row, Event):
        return row
    assert isinstance(store, TextStore), "only a TextStore hands over texts"
    return store.decoded(row)


class Kept:
    """Answers that are a pure function of the store's log, kept while it stays as it was: the
    log's last seq and the episodes compacted (a checkpoint rewrites the log without a new event)."""

    def __init__(self, lam: Lamar) -> None:
        self.lam = lam
        self._answers: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
        self._lock = threading.Lock()

    def version(self) -> tuple[int, int]:
        stats = self.lam.stats()
        return int(stats["events"]), int(stats["compacted"]["episodes"])

    def get(self, key: tuple[Hashable, ...], make: Callable[[], T]) -> T:
        """`make()`, or what it returned for `key` when the store was as it is now."""
        full = (*key, *self.version())
        with self._lock:
            if full in self._answers:
                self._answers.move_to_end(full)
                return self._answers[full]  # type: ignore[no-any-return]
        answer = make()  # outside the lock: two pages may make it at once, never one wait for another's
        with self._lock:
            self._answers[full] = answer
            while len(self._answers) > _KEPT:
                self._answers.popitem(last=False)
        return answer


__all__ = ["Kept", "latest_episodes"]
