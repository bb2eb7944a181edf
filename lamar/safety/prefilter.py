"""`may_hold_secret`: a quick test that `scrub` would leave a text as it is, read from the rules' own needles
and shortest matches, so it cannot drift from them."""

from __future__ import annotations

import bisect
import functools
import importlib
import itertools
import re

from lamar.safety.disguised import may_be_disguised
from lamar.safety.entropy import BODY, RUN
from lamar.safety.needles import LONG_RUN, holds_key_run

# What sends `scrub` down its slower paths whatever the rules say: text that is not plain ASCII (it is read
# again normalised), a redaction already there (a key cut over a line behind it), a Markdown table.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def may_hold_secret(text: str) -> bool:
    """False only where `scrub(text)` is `(text, [])`: most labels, words and paths, in a few microseconds.

    Every stage of `scrub` is skipped by a condition it checks itself (a rule's needles, its shortest
    match, a run of key characters); this asks each of them at once, without running the rules.

    >>> may_hold_secret("build_fails"), may_hold_secret("src/lamar/engine.py")
    (False, False)
    >>> may_hold_secret("the password is hunter2"), may_hold_secret("ghp_" + "a1B2c3D4e5" * 4)
    (True, True)
    """
    if not text.isascii() or (not text.isprintable() and _CONTROL.search(text)) or "[REDACTED:" in text:
        return True
    if "|" in text and "-" in text:  # a Markdown table's delimiter row
        return True
    # Provider tokens, random strings and key blocks are runs of 16 or more key characters.
    if LONG_RUN.search(text) and (holds_key_run(text) or RUN.search(text) or BODY.search(text)):
        return True
    if may_be_disguised(text):
        return True
    widths = _widths()
    plain, folded, bare = _by_width(widths[bisect.bisect_right(widths, len(text)) - 1])
    if plain.search(text) or folded.search(text.lower()):
        return True
    for pattern in bare:  # a loop, not any(): most texts reach it with no pattern to try
        if pattern.search(text):
            return True
    return False


@functools.lru_cache(maxsize=1)
def _widths() -> list[int]:
    """The shortest match of every rule, and 0: a text is judged by the longest of them it reaches."""
    from lamar.safety.secrets import RULES

    return sorted({0, *(_shortest(rule.pattern) for rule in RULES)})


@functools.cache
def _by_width(length: int) -> tuple[re.Pattern[str], re.Pattern[str], tuple[re.Pattern[str], ...]]:
    """For a text of `length` characters, of every rule that can match in so few: a pattern of the needles
    matched as written, one of those matched ignoring case (searched in the text lowercased: it is ASCII, where
    that is exact), and the rules without needles, searched whole. Provider tokens are left out: without a key
    run `scrub` skips them too."""
    from lamar.safety.secrets import RULES

    plain: set[str] = set()
    folded: set[str] = set()
    bare: list[re.Pattern[str]] = []
    for rule in RULES:
        if rule.token or _shortest(rule.pattern) > length:
            continue
        if rule.needles is None:
            bare.append(rule.pattern)
            continue
        for needle, icase in rule.needles.found:
            (folded if icase else plain).add(needle)
    return _any_of(plain), _any_of(folded), tuple(bare)


def _any_of(needles: set[str]) -> re.Pattern[str]:
    """A pattern that finds one of `needles` wherever one is: a needle holding a shorter one is left out (the
    shorter is found there), and the rest share their prefixes, so the engine tries few branches at a place."""
    kept = {n for n in needles if not any(other != n and other in n for other in needles)}
    return re.compile(_trie(sorted(kept)) or "(?!)")  # "(?!)" matches nothing


def _trie(words: list[str]) -> str:
    branches = []
    for first, group in itertools.groupby(words, key=lambda w: w[:1]):
        rest = [w[1:] for w in group]
        # A word that ends here is enough: what continues it need not be looked for.
        branches.append(re.escape(first) + ("" if "" in rest else _group(_trie(rest))))
    return "|".join(branches)


def _group(pattern: str) -> str:
    return f"(?:{pattern})" if "|" in pattern else pattern


def _shortest(pattern: re.Pattern[str]) -> int:
    parser = importlib.import_module("re._parser")  # the engine's own parse, as the needles are read
    return int(parser.parse(pattern.pattern, pattern.flags).getwidth()[0])


__all__ = ["may_hold_secret"]
