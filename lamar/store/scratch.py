"""A log in memory whose events keep the seqs given them: a copy's check folds it numbered as the copy's target
will number it, so that its fold is the state saved beside the copy (`lamar.state.copied.save_copied`)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from lamar.store.base import Event
from lamar.store.memory import MemoryStore


class NumberedLog(MemoryStore):
    """`MemoryStore` holding `before` at their seqs and `added` after the last of them, read as it reads.

    Raises:
        EventConflict: a key is there twice (refused as the target would refuse it).
    """

    def __init__(self, before: Sequence[Event], added: Sequence[Event]) -> None:
        super().__init__()
        self.append([*before, *added])  # the keys and kinds checked as a write checks them
        last = before[-1].seq if before else 0
        events = [*before, *(Event(e.kind, e.data, e.key, last + n, e.time) for n, e in enumerate(added, 1))]
        self._events = events
        self._keys = {e.key: e for e in events if e.key is not None}

    def read(self, after: int = 0) -> list[Event]:
        self._check_open()
        events = self._events
        # The seqs given may leave gaps (a target's compacted or shared numbering): found by seq, not by place.
        return events[bisect_right(events, after, key=lambda e: e.seq):]
