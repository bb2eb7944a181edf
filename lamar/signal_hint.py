"""The signal a refused outcome word most likely meant: a word of its own that names one, or a typo of
one's name; never a real word that merely looks like one ("completed" is no "corrected")."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping

# The root of each signal's name and the endings its forms take ("ships", "shipping", "reverting").
# "correct" needs an ending: alone it is as much "it was correct" (accepted) as "corrected".
_STEMS = {"shipped": ("ship", ("", "s", "ped", "ping")), "accepted": ("accept", ("", "s", "ed", "ing")),
          "reasked": ("reask", ("", "s", "ed", "ing")), "corrected": ("correct", ("s", "ed", "ing")),
          "reverted": ("revert", ("", "s", "ed", "ing"))}
# A negated outcome names none: "not shipped" is no shipment.
_NEGATIONS = frozenset({"not", "no", "never", "nor", "neither", "without", "didnt", "didn't", "hasnt", "hasn't",
                        "wasnt", "wasn't", "dont", "don't", "wont", "won't", "havent", "haven't", "isnt", "isn't"})


def meant(text: str, words: Mapping[str, Iterable[str]] | None = None) -> str | None:
    """The signal name `text` most likely meant, or None: the one signal whose name, form or one of
    `words` (phrases per name, as a tool's description glosses them) is a word of its own in `text`; else,
    for one word, the name it is a typo of (a letter left out, added or swapped, or the name cut short).

    >>> meant("the user corrected it"), meant("completed"), meant("Shiped"), meant("not shipped")
    ('corrected', None, 'shipped', None)
    """
    tokens = re.findall(r"[a-z']+", text.lower())
    if not tokens or any(token in _NEGATIONS for token in tokens):
        return None
    # "re-asking" and "re asked" are one word split: each pair is read joined too.
    joined = tokens + [a + b for a, b in itertools.pairwise(tokens)]
    named = {name for name, (stem, endings) in _STEMS.items()
             if any(token == stem + ending for token in joined for ending in endings)}
    for name, phrases in (words or {}).items():
        if any(_glossed(tokens, re.findall(r"[a-z]+", phrase.lower())) for phrase in phrases):
            named.add(name)
    if named:
        return named.pop() if len(named) == 1 else None
    if len(tokens) != 1:
        return None
    typos = [name for name, (stem, _) in _STEMS.items() if _typo(tokens[0], name, stem)]
    return typos[0] if len(typos) == 1 else None


def _glossed(tokens: list[str], phrase: list[str]) -> bool:
    """Whether `phrase` stands in `tokens` as words of its own, not followed by a verb in "-ing": there it is
    the verb that goes on ("kept asking" is a re-ask, not "kept" for accepted)."""
    n = len(phrase)
    return bool(phrase) and any(tokens[i:i + n] == phrase and not "".join(tokens[i + n:i + n + 1]).endswith("ing")
                                for i in range(len(tokens) - n + 1))


def _typo(said: str, name: str, stem: str) -> bool:
    """Whether `said` is `name` with one letter left out, one added or two neighbours swapped, or `name` cut
    short past its stem ("shipp", not "correct"): the slips of a hand. A letter changed for another is not
    one, as it makes other words ("skipped", "rejected")."""
    if len(said) > len(stem) and name.startswith(said):
        return True
    if abs(len(said) - len(name)) == 1:
        short, long = sorted((said, name), key=len)
        return any(long[:i] + long[i + 1:] == short for i in range(len(long)))
    if len(said) == len(name) and said != name:
        diff = [i for i in range(len(name)) if said[i] != name[i]]
        return len(diff) == 2 and diff[1] == diff[0] + 1 and said[diff[0]] == name[diff[1]] \
            and said[diff[1]] == name[diff[0]]
    return False


__all__ = ["meant"]
