"""`Slate`: what one episode logged about its lessons (each eligible lesson's inclusion
probability, the ones injected, the ones held out), the unit every alternative is defined on."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping


@dataclasses.dataclass(frozen=True)
class Slate:
    """What one episode logged about its lessons: `p` holds every eligible lesson's inclusion
    probability (a lesson not in `p` was not eligible), `held_out` the lessons wanted and left
    out by their coin."""

    p: Mapping[str, float]
    injected: frozenset[str]
    held_out: frozenset[str] = frozenset()

    @property
    def slots_used(self) -> int:
        """Slots the logged policy filled or left empty on purpose: its wanted lessons (an exposure
        round's candidate, at p = 0.5, takes a free slot or a vacated one, never one of its own)."""
        return len(self.held_out) + sum(1 for i in self.injected if self.p.get(i, 0.0) != 0.5)

    @property
    def key(self) -> tuple[object, ...]:
        return tuple(sorted(self.p.items())), self.injected, self.held_out
