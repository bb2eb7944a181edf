"""Whether a proposed lesson is already held: the same lesson or a near-copy of it in the same scope,
and the refusals that name the lesson to look at instead."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from lamar import Experience
from lamar.sleep.similarity import NEAR_DUPLICATE, LessonWords


@functools.lru_cache(maxsize=8192)
def _words(precondition: str, action: str) -> LessonWords:
    """A lesson's content words, read once: a call of many lessons compares each of them with every
    other line and every lesson of its scope, and looks at each again once it is stored."""
    return LessonWords.of(precondition, action)


_P = ParamSpec("_P")
_R = TypeVar("_R")


def forgetting(tool: Callable[_P, _R]) -> Callable[_P, _R]:
    """`tool`, dropping the words it read when it returns: they are kept for one call's many
    comparisons, not for the server's life (a lesson erased later must not stay in its memory)."""
    @functools.wraps(tool)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return tool(*args, **kwargs)
        finally:
            _words.cache_clear()

    return call


def same_arm(other: Experience, exp: Experience) -> bool:
    """The same lesson or a near-copy of it, in the same scope."""
    return other.scope.items_key == exp.scope.items_key and (other.id == exp.id or near(
        _words(other.precondition, other.action), exp))


def near(words: LessonWords, exp: Experience) -> bool:
    """Whether the lesson whose words these are is a near-copy of `exp` (scopes aside)."""
    return words.similarity(lesson_words(exp)) >= NEAR_DUPLICATE


def lesson_words(exp: Experience) -> LessonWords:
    """`exp`'s words, read once in a call (`forgetting`): a lesson just proposed is looked at again once stored."""
    return _words(exp.precondition, exp.action)


def refuse_held(other: Experience) -> None:
    if other.provenance.get("erased"):  # its id follows from these words; evidence() would show "[erased]"
        raise ToolError(f"these words were the lesson {other.id}, whose text was erased from the store: an erased "
                        "lesson is not proposed again by an agent; tell the user, who can add it back with "
                        "`lamar add` if they want it")
    raise ToolError(f"lamar already holds this lesson as {other.id} ({other.status.value}): "
                    f"{other.render()!r}; call evidence({other.id!r}) to see what is known about it "
                    "instead of proposing it again")


def refuse_repeat(exp: Experience, earlier: list[Experience]) -> None:
    """A lesson given twice in one call is refused even when it is held: a call is checked as a whole."""
    for other in earlier:
        if same_arm(other, exp):
            # not stored (nothing is until every line passes): evidence() would not know its id
            raise ToolError(f"it repeats line {other.provenance.get('line')} of the text "
                            f"({other.render()!r}): propose each lesson once")


__all__ = ["forgetting", "lesson_words", "near", "refuse_held", "refuse_repeat", "same_arm"]
