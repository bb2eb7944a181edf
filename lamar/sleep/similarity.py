"""When two lessons say the same thing: token overlap of their words, blind to negation flips."""

from __future__ import annotations

import dataclasses
import re

NEAR_DUPLICATE = 0.7
"""Default threshold: the smaller of the precondition and action overlaps must reach it.

At 0.7, "the Xcode build fails after a dependency bump" / "clear the DerivedData folder"
matches "Xcode build failing after bumping a dependency" / "clear DerivedData folder",
while two actions that share one verb and differ in their object ("clear the cache" vs
"clear the logs") stay apart.
"""

_STOPWORDS = frozenset({
    "a", "an", "the", "to", "of", "in", "on", "at", "for", "and", "or", "is", "are", "was", "were", "be",
    "been", "it", "its", "this", "that", "these", "those", "then", "when", "whenever", "if", "do", "does",
    "you", "your", "we", "our", "i",
})
_NEGATIONS = frozenset({"not", "no", "never", "without", "avoid", "instead", "nothing", "none"})
_CONTRACTED_NOT = re.compile(r"n['’]t\b", re.IGNORECASE)
_PUNCT = re.compile(r"[^\w\s]")


def normalize(text: str) -> str:
    """Lower case, punctuation dropped, white space folded: what counts as the same words.

    >>> normalize("  Clear the  DerivedData folder! ")
    'clear the deriveddata folder'
    """
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def content_words(text: str) -> frozenset[str]:
    """Normalized, lightly stemmed words, stop words dropped; negations kept.

    >>> sorted(content_words("Don't clear the caches!"))
    ['cach', 'clear', 'not']
    """
    words = normalize(_CONTRACTED_NOT.sub(" not", text)).split()
    out = set()
    for word in words:
        if word in _STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.add(_stem(word))
    return frozenset(out)


def _stem(word: str) -> str:
    """Crude suffix folding, enough for "bump / bumping / bumped" and "cache / caches / cached"."""
    if word in _NEGATIONS:
        return word
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def overlap(a: str, b: str) -> float:
    """Jaccard overlap of content words; 0 when one side has a negation the other lacks.

    >>> overlap("clear the DerivedData folder", "Clear DerivedData folder.")
    1.0
    >>> overlap("run the tests", "do not run the tests")
    0.0
    """
    return _overlap(content_words(a), content_words(b), a, b)


def _overlap(wa: frozenset[str], wb: frozenset[str], a: str, b: str) -> float:
    if (wa ^ wb) & _NEGATIONS:
        return 0.0
    if not wa and not wb:
        return 1.0 if normalize(a) == normalize(b) else 0.0
    return len(wa & wb) / len(wa | wb)


def lesson_similarity(precondition_a: str, action_a: str, precondition_b: str, action_b: str) -> float:
    """How alike two lessons are: the smaller of their precondition and action overlaps.

    No model and no embedding: two lessons are near-duplicates when both their preconditions
    and their actions share most of their content words (Jaccard overlap at or above
    `NEAR_DUPLICATE`), and neither part differs by a negation ("run the tests" is never a
    near-duplicate of "do not run the tests").

    >>> lesson_similarity("the Xcode build fails after a dependency bump", "clear the DerivedData folder",
    ...                   "Xcode build failing after bumping a dependency", "clear DerivedData folder")
    1.0
    """
    return min(overlap(precondition_a, precondition_b), overlap(action_a, action_b))


@dataclasses.dataclass(frozen=True)
class LessonWords:
    """A lesson's text and content words, read once to be compared with many lessons."""

    precondition: str
    action: str
    precondition_words: frozenset[str]
    action_words: frozenset[str]

    @classmethod
    def of(cls, precondition: str, action: str) -> LessonWords:
        return cls(precondition, action, content_words(precondition), content_words(action))

    def similarity(self, other: LessonWords) -> float:
        """`lesson_similarity` of the two lessons, without reading their words again."""
        return min(_overlap(self.precondition_words, other.precondition_words, self.precondition, other.precondition),
                   _overlap(self.action_words, other.action_words, self.action, other.action))


__all__ = ["NEAR_DUPLICATE", "LessonWords", "content_words", "lesson_similarity", "normalize", "overlap"]
