"""`reading`: text as a model reads it, folded to lower-case ASCII with the Unicode confusables data (UTS #39)."""

from __future__ import annotations

import functools
import unicodedata

_MARKS = frozenset({"Mn", "Me", "Mc"})
_UNSEEN = frozenset({"Cc", "Cf", "Cn", "Co", "Cs"})


@functools.cache
def _table() -> dict[str, str]:
    """Loaded on first use, so importing lamar stays cheap."""
    from lamar.safety.confusable_table import READS_AS

    return {char: ascii_ for ascii_, chars in READS_AS.items() for char in chars}


@functools.lru_cache(maxsize=65536)
def _fold(ch: str) -> str:
    """What `ch` reads as: its look-alike ASCII, else its lower case; "" for a mark or an unseen character."""
    table = _table()
    if ch in table:
        return table[ch]
    out = []
    # Decomposed, "Ś" is "S" + an acute accent and "İ" casefolds to "i" + a dot: marks are read through.
    for c in unicodedata.normalize("NFD", ch.casefold()):
        if c in table:
            out.append(table[c])
        elif unicodedata.category(c) not in _MARKS and unicodedata.category(c) not in _UNSEEN:
            out.append(c)
    return "".join(out)


def reading(text: str) -> str:
    """`text` as it reads: look-alikes folded to ASCII, lower case, combining marks read through.

    "ꜱʏꜱᴛᴇᴍ꞉" (small capitals, a modifier colon), "ꓢꓬꓢꓔꓰꓟ:" (Lisu) and "Ⲋⲩⲋⲧⲉⲙ∶" (Coptic, a ratio
    sign) all read as "system:". The fence and the screen look for role words in the reading;
    `reading_map` also says which character of the text each folded character came from.

    >>> reading("ꜱʏꜱᴛᴇᴍ꞉ ꓢꓬꓢꓔꓰꓟ: S\\u0335ys\\u034ftem\\u1804")
    'system: system: system:'
    """
    return "".join(_fold(ch) if not ch.isascii() else ch.lower() for ch in text)


def reading_map(text: str) -> tuple[str, list[int]]:
    """`reading(text)`, and for each of its characters the index in `text` it came from."""
    folded: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        part = ch.lower() if ch.isascii() else _fold(ch)
        folded.append(part)
        origin += [i] * len(part)
    return "".join(folded), origin


def reads_as(target: str) -> str:
    """Every character that reads as `target` (one ASCII character), `target` included.

    >>> "\\u2039" in reads_as("<") and "\\ua4fd" in reads_as(":")
    True
    """
    from lamar.safety.confusable_table import READS_AS

    return target + READS_AS.get(target, "") + READS_AS.get(target.lower(), "")


def spelt_loosely(word: str) -> str:
    """A regex for `word` in a reading where ASCII look-alikes of each other stand in: I l 1 |, o 0.

    >>> spelt_loosely("tool")
    't[o0][o0][il1|]'
    """
    return "".join("[il1|]" if c in "il" else "[o0]" if c == "o" else c for c in word)


def spelt_nearly(*words: str) -> str:
    """A regex for any of `words` in a reading with one of its letters a letter that reads as no ASCII at all.

    No table knows every letter a model takes for a Latin one ("Systəm" is read as "System"), but
    a word of the Latin alphabet with one such letter in it is a look-alike whatever that letter.
    The words whose first letter is the odd one share one branch, so that the engine asks once at
    each position of a text in another script, not once per word.

    >>> import re
    >>> [bool(re.fullmatch(spelt_nearly("user", "tool"), w)) for w in ("usər", "ʈool", "usxr", "uəər")]
    [True, True, False, False]
    """
    other = r"[^\W\d_a-z]"
    first = other + "(?:" + "|".join(spelt_loosely(w[1:]) for w in words) + ")"
    rest = [spelt_loosely(w[:i]) + other + spelt_loosely(w[i + 1:]) for w in words for i in range(1, len(w))]
    return "|".join([first, *rest])


__all__ = ["reading", "reading_map", "reads_as", "spelt_loosely", "spelt_nearly"]
