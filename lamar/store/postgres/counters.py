"""What the fold mode's writes did since a store opened, for benchmarks and tests to read."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class WriteCounters:
    """Counts of one store object's fold-mode writes (all zero in the log mode).

    Attributes:
        conflicts: optimistic attempts that found their rows moved, and started over.
        locked: writes that locked their rows before reading them (after conflicts, or with
            `writes="locking"`).
        unread: first reports folded from their recall's read, sent with no read of their own.
        reread: first reports read first though their recall's read was at hand.
        queued: first reports queued in the inbox (their rows were contended).
        combined: queued outcomes (anyone's) this store's writes folded.
        waited: waits for a turn to fold the inbox that ran out (the folder ahead was slow).
    """

    conflicts: int = 0
    locked: int = 0
    unread: int = 0
    reread: int = 0
    queued: int = 0
    combined: int = 0
    waited: int = 0


__all__ = ["WriteCounters"]
