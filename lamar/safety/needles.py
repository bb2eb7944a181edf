"""What a text must hold for a rule to match: needles, literals one of which every match of a pattern
holds (read from the pattern itself), and for a provider token a long run of key characters. A rule
is skipped on text without them, and otherwise tried only just before where its needles stand."""

from __future__ import annotations

import bisect
import importlib
import os
import re
from dataclasses import dataclass
from typing import Any

# Non-ASCII characters that the regex engine's IGNORECASE matches to an ASCII letter (a test checks
# every code point): folded to that letter, they cannot hide a case-insensitive needle. The first
# is also the one character whose lowercase is longer than itself, so folding keeps every offset.
_TWINS = "\u0130\u0131\u017f\u212a"
_ASCII_TWINS = str.maketrans(dict(zip(_TWINS, "iisk", strict=True)))
# "." or "-" is in nearly every text, and a dozen needles cost more to look for than one scan.
_MOST = 12
# Farthest a needle may stand from a match's start for the search to go by needles: past it, trying
# every start before each needle costs more than the engine's own scan.
_REACH = 64
# Starts tried one by one in a text before the engine scans instead: a few, then one for every _SPARSE
# characters of the text (a try costs about as much as the engine's scan of that many characters).
_TRIES, _SPARSE = 64, 16

# Every credential of its own shape (a provider prefix) is a run of 16+ key characters holding a digit
# or both cases: text without one (most prose) skips those rules, and so do the joined and reversed shadows.
LONG_RUN = re.compile(r"[A-Za-z0-9_.~+/=:-]{16,}")
_DIGIT, _LOWER, _UPPER = re.compile(r"\d"), re.compile(r"[a-z]"), re.compile(r"[A-Z]")

Needle = tuple[str, bool]  # the literal, and whether it is matched ignoring case (then lowercase)


@dataclass(frozen=True)
class Needles:
    """Every match of a pattern holds one of `found`, starting at most `reach` characters before it
    (None: farther, or no bound)."""

    found: tuple[Needle, ...]
    reach: int | None


def holds_key_run(text: str) -> bool:
    """Whether `text` holds a `LONG_RUN` with a digit or both cases in it."""
    for run in LONG_RUN.finditer(text):
        chunk = run.group(0)
        if _DIGIT.search(chunk) or (_LOWER.search(chunk) and _UPPER.search(chunk)):
            return True
    return False


def fold(text: str) -> str:
    """`text` lowercased, offsets kept, so that a case-insensitive needle is found in it wherever
    the regex engine's IGNORECASE would match it in `text`."""
    if not text.isascii() and any(twin in text for twin in _TWINS):
        text = text.translate(_ASCII_TWINS)
    return text.lower()


class Haystack:
    """A text, its `fold` made when first asked for, and the needles already looked for in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._folded: str | None = None
        self._seen: dict[Needle, bool] = {}
        self._places_of: dict[Needles, list[int]] = {}
        self._tries: dict[re.Pattern[str], int] = {}  # starts tried one by one so far, by pattern
        self._dense: set[re.Pattern[str]] = set()  # patterns whose needles stand too close to try one by one

    def _in(self, needle: Needle) -> str:
        if not needle[1]:
            return self.text
        if self._folded is None:
            self._folded = fold(self.text)
        return self._folded

    def holds(self, needles: Needles | None) -> bool:
        """Whether the text holds one of the needles (always True for None: nothing rules it out)."""
        if needles is None:
            return True
        for needle in needles.found:
            hit = self._seen.get(needle)
            if hit is None:
                hit = self._seen[needle] = needle[0] in self._in(needle)
            if hit:
                return True
        return False

    def _places(self, needles: Needles) -> list[int]:
        """Where in the text any of `needles` starts, in order; found once per text."""
        places = self._places_of.get(needles)
        if places is None:
            places = []
            for needle, icase in needles.found:
                within, at = self._in((needle, icase)), -1
                while (at := within.find(needle, at + 1)) >= 0:
                    places.append(at)
            places = self._places_of[needles] = sorted(set(places))
        return places

    def search(self, pattern: re.Pattern[str], needles: Needles | None, pos: int) -> re.Match[str] | None:
        """`pattern.search(self.text, pos)`, trying only starts up to `reach` before a needle.

        The starts are tried in order, each once, so the first match is the one the engine finds.
        Where needles stand close together the engine's own scan is cheaper than one try per start:
        from there on, and for the rest of this text, it searches, which is exact because no match
        starts between `pos` and that point.
        """
        if needles is None or needles.reach is None or pattern in self._dense:
            return pattern.search(self.text, pos)
        if not self.holds(needles):
            return None
        places, tried = self._places(needles), pos
        # By index: islice would step over every place before `pos` again on each search, and a rule
        # whose matches are all harmless searches once per match.
        for index in range(bisect.bisect_left(places, pos), len(places)):
            at = places[index]
            first = max(tried, at - needles.reach)
            tries = self._tries[pattern] = self._tries.get(pattern, 0) + at + 1 - first
            if tries > _TRIES + at // _SPARSE:
                self._dense.add(pattern)
                return pattern.search(self.text, first)
            for start in range(first, at + 1):
                if (match := pattern.match(self.text, start)) is not None:
                    return match
            tried = at + 1
        return None


def needles(pattern: re.Pattern[str]) -> Needles | None:
    """The needles of `pattern`, or None when it has none worth looking for.

    >>> needles(re.compile(r"(?i)\\bbearer\\s+(?P<secret>\\w+)"))
    Needles(found=(('bearer', True),), reach=0)
    >>> needles(re.compile(r"[A-Z]{4}_(?:AKIA|xoxb-)\\w+")).found
    (('xoxb-', False), ('AKIA', False))
    """
    parser: Any = importlib.import_module("re._parser")  # the engine's own parse: no second grammar
    tree = parser.parse(pattern.pattern, pattern.flags)
    options = [Needles(tuple(sorted(found, key=lambda n: (-len(n[0]), n))), reach)
               for found, reach in _candidates(tree, bool(tree.state.flags & re.IGNORECASE)) if _usable(found)]
    return max(options, key=_rank, default=None)


def _rank(option: Needles) -> tuple[bool, int, int]:
    return option.reach is not None, min(len(n) for n, _ in option.found), -len(option.found)


def _best(sequence: Any, icase: bool) -> tuple[frozenset[Needle], int | None] | None:
    options = [(found, reach) for found, reach in _candidates(sequence, icase) if _usable(found)]
    return max(options, key=lambda o: _rank(Needles(tuple(o[0]), o[1])), default=None)


def _candidates(sequence: Any, icase: bool) -> list[tuple[frozenset[Needle], int | None]]:
    """Each needle set a parsed sequence offers (a run of literals, or an item's own set) with the
    farthest from the sequence's start its needle can begin (None: farther than `_REACH`)."""
    candidates: list[tuple[frozenset[Needle], int | None]] = []
    run: list[str] = []

    def offset(index: int, inner: int | None = 0) -> int | None:
        widest = sequence[:index].getwidth()[1] + inner if inner is not None else _REACH + 1
        return widest if widest <= _REACH else None

    def close(end: int) -> None:
        if run:
            candidates.append((frozenset({("".join(run), icase)}), offset(end - len(run))))
            run.clear()

    for index, (op, av) in enumerate(sequence):
        name = str(op)
        # Past ASCII a letter has look-alikes under IGNORECASE, so only a case-sensitive one is a needle.
        if name == "LITERAL" and (av < 128 or not icase):
            run.append(chr(av).lower() if icase else chr(av))
            continue
        close(index)
        inner: tuple[frozenset[Needle], int | None] | None = None
        if name == "SUBPATTERN":
            _, add, remove, body = av
            inner = _best(body, (icase or bool(add & re.IGNORECASE)) and not remove & re.IGNORECASE)
        elif name == "ATOMIC_GROUP":
            inner = _best(av, icase)
        elif name in {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"} and av[0] >= 1:
            inner = _best(av[2], icase)  # the first time round holds a needle
        elif name == "BRANCH":
            options = [option for option in (_best(branch, icase) for branch in av[1]) if option]
            if len(options) == len(av[1]):
                reaches = [reach for _, reach in options if reach is not None]
                inner = (_merged(frozenset().union(*(found for found, _ in options))),
                         max(reaches) if len(reaches) == len(options) else None)
        # Anything else (a class, an anchor, a lookaround, an optional part) holds no needle.
        if inner:
            candidates.append((inner[0], offset(index, inner[1])))
    close(len(sequence))
    return candidates


def _merged(found: frozenset[Needle]) -> frozenset[Needle]:
    """`found` with needles that start alike cut to what they share (passphrase and passcode to pass):
    fewer to look for, and a match that holds a needle holds its start too."""
    groups: dict[tuple[str, bool], list[str]] = {}
    for text, icase in found:
        groups.setdefault((text[:4], icase), []).append(text)
    return frozenset((os.path.commonprefix(texts), icase) for (_, icase), texts in groups.items())


def _usable(found: frozenset[Needle]) -> bool:
    return len(found) <= _MOST and min(len(n) for n, _ in found) >= 2


__all__ = ["LONG_RUN", "Haystack", "Needle", "Needles", "fold", "holds_key_run", "needles"]
