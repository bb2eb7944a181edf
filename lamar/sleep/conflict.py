"""When two lessons' actions conflict: one says not to do what the other says, or they name two choices
for one thing. Sleep asks it of lessons that share a standing context ("working on shop")."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from lamar.sleep.similarity import content_words

_STANDING = re.compile(r"^\s*(?:when\s+|while\s+)?(?:you\s+are\s+|you're\s+)?work(?:ing)?\s+(?:on|in)\b",
                       re.IGNORECASE)
# A negation governs the words after it, up to the end of its clause: "use ruff, not black" negates "black".
_NEGATION = re.compile(r"\b(?:not|no|never|without|avoid|instead|nothing|none)\b|n['’]t\b", re.IGNORECASE)
# A stop that ends a clause is followed by a space: ".env" and "conftest.py" stay whole.
_CLAUSE_END = re.compile(r"[,;:.!?](?=\s|$)|[()]|\s[-–—]\s|\bbut\b|\bthen\b", re.IGNORECASE)
# Words that stress an instruction or join its parts without saying what it is about.
_FILLER = content_words("always must should please make sure with by from into as")
# Verbs that say how, not what: "don't use print" and "use the debugger" do not disagree about "use".
_GENERIC = content_words("use do get have keep prefer")
# Words that say where or when at large: "any Swift code", "in the shop repo".
_PLACE = content_words("work project repo repository codebase code any every all task anything everything always "
                       "everywhere general")
_DOUBLED = re.compile(r"([b-df-hj-np-tv-z])\1$")


def standing(precondition: str, scope: Mapping[str, str]) -> bool:
    """A precondition that names where the work is, not something that happened: "working on ..." (the form
    `import-rules` gives a rule that states no condition of its own, and the one `install` suggests for a
    lesson by hand), or words that only restate the lesson's scope ("in the shop repo" for project=shop)
    or name no place at all ("always").

    >>> standing("working on shop (Testing)", {}), standing("the deploy fails", {"project": "shop"})
    (True, False)
    """
    if _STANDING.match(precondition):
        return True
    # Words left that the scope does not hold name a situation; none left ("always") name none at all.
    return content_words(precondition) - _PLACE <= content_words(" ".join(scope.values()))


def actions_conflict(a: str, b: str) -> bool:
    """Whether two actions are opposite instructions about one thing, or two choices for one thing.

    Opposite: more than half of the words one negates are words the other asks for ("never squash
    merges" / "always squash merges"; "use ruff, not black" / "format with black"). Two choices: neither
    negates anything, each adds one or two words to what they share, and they share at least as many
    ("use tabs" / "use spaces"; "write commit messages in the imperative" / "... in the past tense").

    >>> actions_conflict("Use ruff for formatting, not black", "format with black")
    True
    >>> actions_conflict("Never edit migrations by hand", "run the migrations before the tests")
    False
    """
    return ActionWords.of(a).conflicts(ActionWords.of(b))


@dataclasses.dataclass(frozen=True)
class ActionWords:
    """An action's words, asked for and negated, read once to be compared with many actions."""

    asked: frozenset[str]
    denied: frozenset[str]

    @classmethod
    def of(cls, action: str) -> ActionWords:
        return cls(*_sides(action))

    def conflicts(self, other: ActionWords) -> bool:
        """`actions_conflict` of the two actions, without reading their words again."""
        if _denies(self.denied, other.asked) or _denies(other.denied, self.asked):
            return True
        if self.denied or other.denied:
            return False
        only_a, only_b = len(self.asked - other.asked), len(other.asked - self.asked)
        return 1 <= only_a <= 2 and 1 <= only_b <= 2 and len(self.asked & other.asked) >= max(only_a, only_b)


def _denies(denied: frozenset[str], asked: frozenset[str]) -> bool:
    denied, asked = denied - _GENERIC, asked - _GENERIC
    return bool(denied) and 2 * len(denied & asked) > len(denied)


def _sides(action: str) -> tuple[frozenset[str], frozenset[str]]:
    """The words an action asks for and the words it negates, each clause read on its own."""
    asked: set[str] = set()
    denied: set[str] = set()
    for clause in _CLAUSE_END.split(action):
        found = _NEGATION.search(clause)
        if found is None:
            asked |= _words(clause)
        else:
            asked |= _words(clause[:found.start()])
            denied |= _words(clause[found.end():])
    return frozenset(asked - denied), frozenset(denied)


def _words(text: str) -> set[str]:
    # "formatting" stems to "formatt" and "dependencies" to "dependenci": fold them onto "format", "dependency".
    return {_fold(w) for w in content_words(text) if w not in _FILLER and w != "not"}


def _fold(word: str) -> str:
    word = _DOUBLED.sub(r"\1", word)
    return word[:-1] + "i" if word.endswith("y") and len(word) > 3 else word


__all__ = ["ActionWords", "actions_conflict", "standing"]
