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
    """Jaccard overlap of the words that say what a text is about; 0 when one side has a negation the
    other lacks, or when each names a number, a version, a quoted command or a tool the other does not.

    >>> overlap("clear the DerivedData folder", "Clear DerivedData folder.")
    1.0
    >>> overlap("run the tests", "do not run the tests"), overlap("format with black", "format with ruff")
    (0.0, 0.0)
    """
    return _Said.of(a).overlap(_Said.of(b))


def lesson_similarity(precondition_a: str, action_a: str, precondition_b: str, action_b: str) -> float:
    """How alike two lessons are: the smaller of their precondition and action overlaps.

    No model and no embedding: two lessons are near-duplicates when both their preconditions
    and their actions share most of their content words (Jaccard overlap at or above
    `NEAR_DUPLICATE`), and neither part differs by a negation ("run the tests" is never a
    near-duplicate of "do not run the tests"). An action's reason (", because ...") is not compared.

    >>> lesson_similarity("the Xcode build fails after a dependency bump", "clear the DerivedData folder",
    ...                   "Xcode build failing after bumping a dependency", "clear DerivedData folder")
    1.0
    """
    return LessonWords.of(precondition_a, action_a).similarity(LessonWords.of(precondition_b, action_b))


# Words that join or stress an instruction without saying what it is about: "freeze time with
# freezegun" and "freeze time using freezegun" are one lesson. Words of place, time and amount
# ("before", "after", "under", "only") are not among them: they change what a lesson says.
_FUNCTION = frozenset(_stem(w) for w in re.findall(r"\S+", """
    with using use uses via by as so than must should always please can will would could may might shall
    has have had am being just also them they their my me us he she his her him sure
"""))
# An action's reason: what follows "because", ", since" or "so that" says why, not what to do, and a
# rule imported as written keeps it in its action.
# Each branch starts only where white space starts (a later start finds nothing an earlier one misses), and no
# two quantifiers share a run of spaces: a mined action of many spaces would otherwise take minutes.
_REASON = re.compile(r"(?<!\s)(?:(?:\s*[,;(]\s*|\s+)because\b|\s*[,;(]\s*since\b|(?:\s*,)?\s+so\s+that\b)",
                     re.IGNORECASE)
# Words two lessons must not differ in: a number or version, a quoted command, and the tool an
# instruction names after "with", "using" or "via" ("format with black" / "format with ruff").
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_CODE = re.compile(r"`([^`]+)`")
_TOOL = re.compile(r"\b(?:with|using|via)\s+(?:the\s+|an?\s+)?([\w.+-]+)", re.IGNORECASE)
# Words of order, repetition, amount and place: an action that says one of them and another that does not
# are two lessons ("run the migration tests first", "run only the tests", "restart the production server").
_QUALIFIERS = frozenset(_stem(w) for w in re.findall(r"\S+", """
    only first last again once twice before after until unless except under over above below
    local remote global production prod staging dev
"""))
_EXTRA_WORD = 0.5
"""What one plain word more in an action weighs: "run the tests" / "run the unit tests" share 2 of 2.5 words (0.8)."""


def fewest_shared(n: int, threshold: float = NEAR_DUPLICATE, *, action: bool = False) -> int:
    """The fewest of a text's `n` content words a near-copy of it (at `threshold`) holds: what an index of
    lessons by word may narrow by. An action's near-copy may be one plain word shorter.

    >>> fewest_shared(3), fewest_shared(3, action=True), fewest_shared(1, action=True)
    (3, 2, 1)
    """
    need = next((i for i in range(1, n + 1) if i / n >= threshold), n + 1)
    if action and n >= 2 and (n - 1) / (n - 1 + _EXTRA_WORD) >= threshold:
        return min(need, n - 1)
    return need


def what_to_do(action: str) -> str:
    """An action without its reason, as near-copies are compared.

    >>> what_to_do("Run it in batches, because long locks block writers")
    'Run it in batches'
    >>> what_to_do("Because locks block writers, run it in batches")
    'Because locks block writers, run it in batches'
    """
    found = _REASON.search(action)
    head = action[:found.start()] if found else action
    return head if head.strip() else action


@dataclasses.dataclass(frozen=True)
class _Said:
    """A text as it is compared: its words, and the exact words (numbers, commands, tools) it names."""

    text: str
    words: frozenset[str]
    exact: frozenset[str]
    named: frozenset[str]  # the words of those numbers, commands and tools

    @classmethod
    def of(cls, text: str) -> _Said:
        words = content_words(text) - _FUNCTION
        exact = {*_NUMBER.findall(text), *(" ".join(c.split()) for c in _CODE.findall(text))}
        exact |= {_stem(tool.lower()) for tool in _TOOL.findall(text) if tool.lower() not in _STOPWORDS}
        named = {_stem(word) for name in exact for word in normalize(name).split()}
        return cls(text, words, frozenset(exact), frozenset(named | exact))

    def _names_apart(self, other: _Said) -> bool:
        return any(e not in other.exact and e not in other.words for e in self.exact)

    def overlap(self, other: _Said, apart: frozenset[str] | None = None) -> float:
        wa, wb = self.words, other.words
        apart = wa ^ wb if apart is None else apart  # the words one side says and the other does not
        if apart & _NEGATIONS or (self._names_apart(other) and other._names_apart(self)):
            return 0.0  # one more word on one side only ("retry with exponential backoff") is no swap
        if not wa and not wb:
            return 1.0 if normalize(self.text) == normalize(other.text) else 0.0
        return len(wa & wb) / len(wa | wb)

    def action_overlap(self, other: _Said) -> float:
        """`overlap` of two actions, where one plain word more on one side weighs `_EXTRA_WORD`: a short action
        that says one word more ("run the unit tests") is the same lesson, unless that word is one of order,
        repetition or amount, or names a tool, a number or a command the shorter one does not."""
        apart = self.words ^ other.words
        if apart & _QUALIFIERS:
            return 0.0
        score = self.overlap(other, apart)
        if not score or len(apart) != 1:
            return score
        short, long = (self, other) if apart <= other.words else (other, self)
        # "with exponential backoff" / "with backoff": the extra word qualifies the tool both name.
        if apart <= long.named and not (short.exact and short.exact <= long.words):
            return score
        return max(score, len(short.words) / (len(short.words) + _EXTRA_WORD))


@dataclasses.dataclass(frozen=True)
class LessonWords:
    """A lesson's text and content words, read once to be compared with many lessons (its action without
    its reason)."""

    precondition: str
    action: str
    precondition_words: frozenset[str]
    action_words: frozenset[str]
    said: tuple[_Said, _Said] = dataclasses.field(compare=False, repr=False)

    @classmethod
    def of(cls, precondition: str, action: str) -> LessonWords:
        said = (_Said.of(precondition), _Said.of(what_to_do(action)))
        return cls(precondition, action, said[0].words, said[1].words, said)

    def similarity(self, other: LessonWords) -> float:
        """`lesson_similarity` of the two lessons, without reading their words again."""
        return min(self.said[0].overlap(other.said[0]), self.said[1].action_overlap(other.said[1]))


__all__ = ["NEAR_DUPLICATE", "LessonWords", "content_words", "fewest_shared", "lesson_similarity", "normalize",
           "overlap", "what_to_do"]
