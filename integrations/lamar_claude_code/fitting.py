"""Lessons fitted to the room Claude Code gives a hook's context: every one shown, each cut evenly."""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lamar.experience import Experience

_SHORTEST = 8  # characters of a lesson's field that fit_prompt keeps, however little room there is


def fit_prompt(experiences: list[Experience], max_chars: int) -> str:
    """The fenced lessons, every one of them shown, shortened evenly if the whole exceeds `max_chars`;
    "" when even each field cut to its shortest does not fit."""
    from lamar.recall import render_prompt

    text = render_prompt(experiences)
    share = 1.0
    while len(text) > max_chars:
        share *= 0.8
        shorter = render_prompt([_shorten(e, share) for e in experiences])
        if shorter == text:
            break  # every field is at its shortest
        text = shorter
    return text if len(text) <= max_chars else ""


@functools.cache
def fitting(max_chars: int, k: int) -> int:
    """How many lessons (at most `k`) fit in `max_chars` when each is cut as short as `fit_prompt` cuts."""
    from lamar.experience import Experience
    from lamar.recall import render_prompt

    longest = Experience("p" * (_SHORTEST + 1), "a" * (_SHORTEST + 1), "r" * (_SHORTEST + 1))
    shortest = _shorten(longest, 0.0)
    count = 0
    while count < k and len(render_prompt([shortest] * (count + 1))) <= max_chars:
        count += 1
    return count


def _shorten(exp: Experience, share: float) -> Experience:
    def cut(value: str) -> str:
        keep = max(_SHORTEST, int(len(value) * share))
        return value if len(value) <= keep else value[:keep].rstrip() + "…"

    return dataclasses.replace(exp, precondition=cut(exp.precondition), action=cut(exp.action),
                               rationale=cut(exp.rationale) if exp.rationale else "")


__all__ = ["fit_prompt", "fitting"]
