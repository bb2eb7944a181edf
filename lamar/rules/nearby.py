"""The lessons and rules of one scope, indexed by their action's words, so that a rule is compared only with
those that could be near-copies of it (`lamar.rules.importing`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from lamar.sleep.similarity import LessonWords

T = TypeVar("T")
_Read = tuple["LessonWords", list[str], str, frozenset[str]]  # as `lamar.rules.importing` reads a lesson


class Nearby(Generic[T]):
    """Items with their read words, kept in the order added. A near-copy of a lesson shares `fewest_shared(n)` of
    the `n` words of its action, and so does the lesson of the copy's: with the words of both in one order (`rank`:
    the rarest first), the first `n - fewest_shared(n) + 1` of each hold a word in common. Only those words are
    indexed and looked up, so items sharing only common words are never compared."""

    def __init__(self, rank: Callable[[str], tuple[int, str]]) -> None:
        self.items: list[tuple[T, _Read]] = []
        self._rank = rank
        self._by_word: dict[str, list[int]] = {}
        self._wordless: list[int] = []  # a lesson with no content word is near only to another with none

    def _prefix(self, words: frozenset[str]) -> list[str]:
        from lamar.sleep.similarity import fewest_shared

        return sorted(words, key=self._rank)[:len(words) - fewest_shared(len(words), action=True) + 1]

    def add(self, item: T, read: _Read) -> None:
        n = len(self.items)
        self.items.append((item, read))
        for word in self._prefix(read[0].action_words):
            self._by_word.setdefault(word, []).append(n)
        if not read[0].action_words:
            self._wordless.append(n)

    def around(self, read: _Read) -> Iterator[tuple[T, _Read]]:
        """The items that may be near-copies of `read`, in the order they were added."""
        from lamar.sleep.similarity import NEAR_DUPLICATE

        words = read[0].action_words
        if not words:
            return (self.items[n] for n in self._wordless)
        found = sorted({n for word in self._prefix(words) for n in self._by_word.get(word, ())})
        # What `LessonWords.similarity` needs of two actions, in two set operations: most words shared, or all but
        # one (a plain word more on one side); the similarity itself is read only for the items that pass.
        return (self.items[n] for n in found
                if len(words ^ (other := self.items[n][1][0].action_words)) == 1
                or len(words & other) / len(words | other) >= NEAR_DUPLICATE)


__all__ = ["Nearby"]
