"""When two lessons' actions conflict: one says not to do what the other says, or they name two choices
for one thing. Sleep asks it of lessons that share a standing context ("working on shop")."""

from __future__ import annotations

import dataclasses
import itertools
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
# Words that say how many of a thing, not which: "keep every commit" keeps commits.
_COUNT = content_words("every each all any")
# Verbs that undo what "keep every" keeps: "squash commits" / "keep every commit" ("keep commits small" and
# "keep all secrets out" keep none).
_UNDO = content_words("squash delete remove drop discard clear")
_KEEP, _OUT = content_words("keep"), content_words("out away off")
# Beside two rival words, a number says how many: "four spaces" are spaces (but "40 lines" is no "80 lines").
_NUMBER = content_words("one two three four five six seven eight")
# Verbs whose two objects are two things to do, not two choices: "run pytest" and "run mypy" before committing.
_DOING = content_words("run execute call install update read")
# Two choices for one thing that share no word to say so: "use tabs" / "indent with four spaces".
_RIVALS = (content_words("tab tabs"), content_words("space spaces"))
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
    ("use tabs" / "use spaces"; "write commit messages in the imperative" / "... in the past tense"), or one
    names tabs and the other spaces ("use tabs" / "indent with four spaces"), or one keeps every one of what
    the other undoes ("keep every commit" / "squash commits"). Two things run at one step are no two choices
    ("run pytest" / "run mypy" before committing).

    >>> actions_conflict("Use ruff for formatting, not black", "format with black")
    True
    >>> actions_conflict("Never edit migrations by hand", "run the migrations before the tests")
    False
    >>> actions_conflict("run pytest before committing", "run mypy before committing")
    False
    """
    return ActionWords.of(a).conflicts(ActionWords.of(b))


@dataclasses.dataclass(frozen=True)
class ActionWords:
    """An action's words, asked for and negated, read once to be compared with many actions."""

    asked: frozenset[str]
    denied: frozenset[str]
    done: frozenset[tuple[str, str]] = frozenset()  # (verb, its object's first word) of each clause

    @classmethod
    def of(cls, action: str) -> ActionWords:
        return cls(*_sides(action))

    def conflicts(self, other: ActionWords) -> bool:
        """`actions_conflict` of the two actions, without reading their words again."""
        if _denies(self.denied, other.asked) or _denies(other.denied, self.asked):
            return True
        if self.denied or other.denied:
            return False
        if _rivals(self.asked, other.asked) or _undoes(self.done, other.done) or _undoes(other.done, self.done):
            return True
        mine, theirs = self.asked - other.asked, other.asked - self.asked
        if self._two_tasks(other, mine, theirs):
            return False
        only_a, only_b = len(mine), len(theirs)
        return 1 <= only_a <= 2 and 1 <= only_b <= 2 and len(self.asked & other.asked) >= max(only_a, only_b)

    def _two_tasks(self, other: ActionWords, mine: frozenset[str], theirs: frozenset[str]) -> bool:
        """Whether the words only one action asks for are what one verb of doing does in each."""
        return any(verb == their_verb and verb in _DOING and what in mine and their_what in theirs
                   for verb, what in self.done for their_verb, their_what in other.done)


def _undoes(kept: frozenset[tuple[str, str]], undone: frozenset[tuple[str, str]]) -> bool:
    """Whether one action keeps what the other undoes: "keep every commit" / "squash commits"."""
    return any(verb in _KEEP and undo in _UNDO and what == undone_what
               for verb, what in kept for undo, undone_what in undone)


def _rivals(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two rival words (`_RIVALS`), one asked by each action, with at most one word each besides them that
    the other does not ask for: "use tabs in Makefiles" and "indent Python with spaces" are two rules."""
    for one, two in itertools.permutations(_RIVALS, 2):
        if a & one and b & two and not a & two and not b & one:
            return len(a - b - one - _NUMBER - _GENERIC) <= 1 and len(b - a - two - _NUMBER - _GENERIC) <= 1
    return False


def _denies(denied: frozenset[str], asked: frozenset[str]) -> bool:
    denied, asked = denied - _GENERIC, asked - _GENERIC
    return bool(denied) and 2 * len(denied & asked) > len(denied)


def _sides(action: str) -> tuple[frozenset[str], frozenset[str], frozenset[tuple[str, str]]]:
    """The words an action asks for, the words it negates, each clause read on its own, and what its verbs
    of doing do (`ActionWords.done`)."""
    asked: set[str] = set()
    denied: set[str] = set()
    done: set[tuple[str, str]] = set()
    for clause in _CLAUSE_END.split(action):
        found = _NEGATION.search(clause)
        said = clause if found is None else clause[:found.start()]
        words = _ordered(said)
        asked |= {_fold(w) for w in words}
        # An instruction's verb comes first ("the test run" is none); its object is the next word that says which.
        which = [w for w in words[1:] if w not in _COUNT]
        if which and (words[0] not in _KEEP or words[1] in _COUNT and not set(words) & _OUT):
            done.add((words[0], _fold(which[0])))
        if found is not None:
            denied |= {_fold(w) for w in _ordered(clause[found.end():])}
    return frozenset(asked - denied), frozenset(denied), frozenset(done)


def _ordered(text: str) -> list[str]:
    """The words `ActionWords` compares, in the order the text says them, before `_fold`."""
    words = (w for said in text.split() for w in sorted(content_words(said)))
    return [w for w in words if w not in _FILLER and w != "not"]


def _fold(word: str) -> str:
    # "formatting" stems to "formatt" and "dependencies" to "dependenci": fold them onto "format", "dependency".
    word = _DOUBLED.sub(r"\1", word)
    return word[:-1] + "i" if word.endswith("y") and len(word) > 3 else word


__all__ = ["ActionWords", "actions_conflict", "standing"]
