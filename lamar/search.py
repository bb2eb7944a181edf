"""Lessons found by their words: every word, in any case, somewhere in a lesson's text, scope or id
(`lamar search`, the MCP `lessons` tool's `text`, the `lamar ui` lessons page)."""

from __future__ import annotations

from collections.abc import Iterable

from lamar._errors import InvalidArgument
from lamar.experience import Experience


def search(lessons: Iterable[Experience], text: str) -> list[Experience]:
    """The lessons holding every word of `text` (a substring, any case) in their text, scope or id,
    in the order given. Filter by scope and status first with `Lamar.experiences`.

    Raises:
        InvalidArgument: `text` is not a string or holds no word.

    >>> from lamar import Lamar, Experience, Scope
    >>> lam = Lamar(":memory:")
    >>> eid = lam.add(Experience("the build fails", "clear DerivedData", scope=Scope(language="swift")))
    >>> [e.id == eid for e in search(lam.experiences(scope={"language": "swift"}), "deriveddata BUILD")]
    [True]
    >>> search(lam.experiences(), "kubernetes")
    []
    """
    return matching(lessons, words_of(text))


def words_of(text: object) -> list[str]:
    """The words of a search, case-folded; InvalidArgument when `text` is not a string or holds none."""
    if not isinstance(text, str) or not text.split():
        raise InvalidArgument(f"search for some words, e.g. 'DerivedData' (every word must appear); got {text!r}")
    return text.casefold().split()


def matching(lessons: Iterable[Experience], words: list[str]) -> list[Experience]:
    """The lessons holding every one of `words` (already case-folded) in their text, scope or id.

    >>> from lamar.experience import Scope
    >>> lesson = Experience("the build fails", "clear DerivedData", scope=Scope(language="swift"))
    >>> [len(matching([lesson], w)) for w in (["deriveddata"], ["language=swift", "build"], ["python"])]
    [1, 1, 0]
    """
    return [exp for exp in lessons if holds(exp, words)]


def holds(lesson: Experience, words: list[str]) -> bool:
    """Whether `lesson` holds every one of `words` (already case-folded) in its text, scope or id."""
    scope = " ".join(f"{k}={v}" for k, v in lesson.scope.items())
    haystack = f"{lesson.id} {lesson.render()} {scope}".casefold()
    return all(word in haystack for word in words)


__all__ = ["holds", "matching", "search", "words_of"]
