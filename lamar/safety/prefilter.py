"""`may_hold_secret`: a quick test that `scrub` would leave a text as it is, from the rules' own needles and
shortest matches (`needle_table`), without loading the rules."""

from __future__ import annotations

import itertools
import re

from lamar.safety.disguised import may_be_disguised
from lamar.safety.entropy import BODY, RUN
from lamar.safety.needle_table import FOLDED, PLAIN
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
    return _holds_needle(text) or any(len(text) >= width and gate.search(text) for width, gate in BARE)


# The rules without needles (`tools/needle_table.py` lists them; a test checks there are no others), each with
# its shortest match and a pattern that every match of it holds, in the order of the rules.
BARE: tuple[tuple[int, re.Pattern[str]], ...] = (
    (26, re.compile(r"[sbr]\.[A-Za-z0-9_-]{24}")),  # a Vault token of the format before 1.10
    (8, re.compile(r":(?:\d{1,5}|\*):")),  # a .pgpass line, host:port:database:user:password
    (129, re.compile(r"\[[\d \t,]{126}")),  # a key written as a list of its 64 bytes
)


def _holds_needle(text: str) -> bool:
    """Whether `text` holds a rule's needle and is as long as that rule's shortest match."""
    length = len(text)
    for pattern, table, within in ((_PLAIN, PLAIN, text), (_FOLDED, FOLDED, text.lower())):
        # One needle starts at a place at most (none holds another), but needles may overlap: search on from
        # the next character, not from the end of the last match.
        match = pattern.search(within)
        while match is not None:
            if table[match.group()] <= length:
                return True
            match = pattern.search(within, match.start() + 1)
    return False


def _trie(words: list[str]) -> str:
    """A pattern matching any of `words` (none a prefix of another) that shares their prefixes, so the engine
    tries few branches at a place."""
    branches = []
    for first, group in itertools.groupby(words, key=lambda w: w[:1]):
        rest = [w[1:] for w in group]
        inner = _trie(rest) if rest != [""] else ""
        branches.append(re.escape(first) + (f"(?:{inner})" if "|" in inner else inner))
    return "|".join(branches)


_PLAIN, _FOLDED = re.compile(_trie(sorted(PLAIN))), re.compile(_trie(sorted(FOLDED)))

__all__ = ["may_hold_secret"]
