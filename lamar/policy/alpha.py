"""How the error budget is shared: once per lesson by its creation rank, over its segments, over
its slices (docs/decisions.md, "Verdicts, and the alpha they spend"). Every share is fixed when
the lesson, segment or slice begins, and the shares of any family sum to at most its whole."""

from __future__ import annotations

import math

LESSON_SERIES = 31  # R: the telescoping series' offset for lessons (the first gets alpha / (R + 2))
SLICE_SERIES = 3  # S: the same for a lesson's slices
FIRST_SEGMENT = 0.75  # a lesson's first segment's share; restarts share the rest


def series(rank: int, offset: int) -> float:
    """(offset + 1) / ((rank + offset)(rank + offset + 1)): sums to 1 over rank = 1, 2, ...

    It telescopes ((offset + 1) (1 / (rank + offset) - 1 / (rank + offset + 1))), so however many
    members a family ever has, and whichever of them retire, their shares never exceed the whole.

    >>> round(sum(series(r, 31) for r in range(1, 100_000)), 4)
    0.9997
    >>> round(1 / series(1, 31)), round(1 / series(24, 31)), round(1 / series(100, 31))
    (33, 96, 540)
    """
    if rank < 1:
        raise ValueError(f"a rank starts at 1; got {rank}")
    return (offset + 1) / ((rank + offset) * (rank + offset + 1))


def segment_share(segment: int) -> float:
    """The share of a lesson's alpha its `segment`-th segment (1, 2, ...) may spend.

    >>> segment_share(1), round(segment_share(2), 4), round(sum(segment_share(j) for j in range(1, 10**5)), 4)
    (0.75, 0.152, 1.0)
    """
    if segment == 1:
        return FIRST_SEGMENT
    return (1.0 - FIRST_SEGMENT) * 6.0 / (math.pi**2 * (segment - 1) ** 2)


def lesson_alpha(alpha: float, rank: int, segment: int) -> float:
    """The level of one segment of the lesson created `rank`-th in its store."""
    return alpha * series(rank, LESSON_SERIES) * segment_share(segment)


def slice_alpha(alpha: float, rank: int, segment: int, slice_rank: int) -> float:
    """The level of one slice (the `slice_rank`-th seen) in one segment of a lesson: the slices are
    a family of their own beside the lesson-wide verdict, sharing the lesson's alpha."""
    return lesson_alpha(alpha, rank, segment) * series(slice_rank, SLICE_SERIES)


__all__ = ["FIRST_SEGMENT", "LESSON_SERIES", "SLICE_SERIES", "lesson_alpha", "segment_share", "series", "slice_alpha"]
