"""`plain_text`: text as a person sees it and a model reads it, with nothing invisible left in it."""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata

# Line breaks of every kind become "\n", so that a later split on whitespace makes them spaces.
_BREAKS = str.maketrans({c: "\n" for c in "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})
_ASCII_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]+")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt): shown as nothing, so a
# word can hide behind them. Many are format characters (Cf), dropped anyway; these are not:
# the combining grapheme joiner, Hangul fillers, Khmer inherent vowels, Mongolian free
# variation selectors, variation selectors (both blocks), and unassigned ignorables.
_IGNORABLE = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
              (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF))
_UNSEEN = frozenset({"Cc", "Cf", "Cn", "Co", "Cs"})
# Latin letters that carry an accent, and combining marks: what `unaccented` can change.
_ACCENTED = re.compile("[\u00c0-\u024f\u1e00-\u1eff\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_MARKS = frozenset({"Mn", "Me", "Mc"})
# ZWNJ, ZWJ and VS16: invisible, yet spelling in some places (`_spelling`), so judged one by one.
_JOINERS = "\u200c\u200d\ufe0f"
_JOINER = re.compile("[\u200c\u200d\ufe0f]")
_JOINERS_AFTER_ASCII = re.compile("(?<=[\x00-\x7f])[\u200c\u200d\ufe0f]+")  # never spelling: dropped in C
_VIRAMA = 9  # the canonical combining class of a virama (halant, al-lakuna, chandrakkala)


@functools.lru_cache(maxsize=65536)  # bounded: a hostile text may hold every code point
def _unseen(ch: str) -> bool:
    """Whether `ch` is shown as nothing; asked once per distinct character."""
    code = ord(ch)
    return unicodedata.category(ch) in _UNSEEN or any(low <= code <= high for low, high in _IGNORABLE)


@functools.lru_cache(maxsize=65536)
def _mark(ch: str) -> bool:
    return unicodedata.category(ch) in _MARKS


def _marks_on_ascii(run: re.Match[str]) -> str:
    """A run of non-ASCII characters, less the marks it starts with when it follows ASCII.

    After NFKC every ordinary accent on a Latin letter has composed ("e" + acute is "é"), so a
    mark still sitting on an ASCII character is decoration that can hide a word ("S̵ystem").
    """
    text = run.group(0)
    if run.start() and not run.string[run.start() - 1].isascii():
        return text
    keep = 0
    while keep < len(text) and _mark(text[keep]):
        keep += 1
    return text[keep:]


def plain_text(text: str) -> str:
    """`text` in NFKC form without invisible characters, and with every line break a newline.

    Every lesson is stored in this form (via `lamar.safety.boundary.prompt_form`), and the secret
    and injection screens read it: what is checked is what the model will be shown.

    Removed: controls (but tab and newline), format characters (zero-width, bidi overrides),
    variation selectors and other default-ignorable characters, unassigned code points, and
    combining marks left on an ASCII character. Kept: ZWNJ, ZWJ and VS16 where they are spelling
    (`_spelling`: an emoji ZWJ sequence, after a virama), never beside ASCII. What a reader sees
    and what a model reads then agree: "ＳＹＳＴＥＭ" becomes "SYSTEM", "sys\\u200btem" and
    "Sys\\u034ftem" become "system".

    >>> plain_text("ＳＹＳ\\u200bTEM\\u202e:"), plain_text("S\\u0335ys\\ufe0ftem"), plain_text("café\\u2028ok")
    ('SYSTEM:', 'System', 'café\\nok')
    """
    if text.isascii():  # most text: no normalisation to do, only controls to drop
        return _ASCII_CONTROLS.sub("", text.translate(_BREAKS))
    text = _ASCII_CONTROLS.sub("", unicodedata.normalize("NFKC", text).translate(_BREAKS))
    # Each distinct character is judged once, and the text is rewritten in C.
    seen = set(text)
    hidden = {ord(c): None for c in seen if not c.isascii() and _unseen(c) and c not in _JOINERS}
    kept = text.translate(hidden) if hidden else text
    kept = kept if seen.isdisjoint(_JOINERS) else _joiners_kept(kept)
    if kept is not text:
        # NFKC again: a dropped joiner may have kept an accent from composing with its letter.
        text = unicodedata.normalize("NFKC", kept)
    if any(_mark(c) for c in set(text) if not c.isascii()):
        text = _NON_ASCII.sub(_marks_on_ascii, text)
    return text


def _joiners_kept(text: str) -> str:
    """`text` without the ZWNJ, ZWJ and VS16 that are not spelling there (`text` itself when all are)."""
    text = _JOINERS_AFTER_ASCII.sub("", text)
    pieces: list[str] = []
    last = 0
    for match in _JOINER.finditer(text):
        if not _spelling(text, match.start()):
            pieces.append(text[last:match.start()])
            last = match.end()
    return "".join(pieces) + text[last:] if pieces else text


@functools.cache
def _tables() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Loaded on first use, so importing lamar stays cheap."""
    from lamar.safety.joiner_table import JOINS_NEXT, JOINS_PREVIOUS, PICTOGRAPHIC

    return JOINS_NEXT, JOINS_PREVIOUS, PICTOGRAPHIC


def _spelling(text: str, at: int) -> bool:
    """Whether the joiner at `at` is part of how a word or an emoji is written.

    RFC 5892 Appendix A.1 and A.2 (a ZWNJ or ZWJ after a virama, a ZWNJ between letters that
    join) and UTS #51 (a ZWJ between pictographs, each with its modifier or VS16; a VS16 after a
    pictograph). Never next to an ASCII letter or digit, where it could only split a word.
    """
    joins_next, joins_previous, pictographic = _tables()
    joiner, before = text[at], text[at - 1] if at else "a"
    after = text[at + 1] if at + 1 < len(text) else " "
    if before.isascii() or (joiner != "\ufe0f" and after.isascii() and after.isalnum()):
        return False
    if joiner == "\ufe0f":
        return _among(before, pictographic)
    if unicodedata.combining(before) == _VIRAMA:
        # Its letter must not be ASCII: `_marks_on_ascii` would take the virama off and leave the joiner.
        base = _skip_marks(text, at - 1, -1)
        return base >= 0 and not text[base].isascii() and text[base] not in _JOINERS
    if joiner == "\u200d":
        emoji = at - 2 if before == "\ufe0f" or "\U0001f3fb" <= before <= "\U0001f3ff" else at - 1
        return emoji >= 0 and _among(text[emoji], pictographic) and _among(after, pictographic)
    first, second = _skip_marks(text, at - 1, -1), _skip_marks(text, at + 1, 1)
    return (first >= 0 and second < len(text) and _among(text[first], joins_next)
            and _among(text[second], joins_previous))


def _skip_marks(text: str, at: int, step: int) -> int:
    """The index of the first character from `at` on (going by `step`) that is not a combining mark."""
    while 0 <= at < len(text) and _mark(text[at]) and text[at] not in _JOINERS:
        at += step
    return at


def _among(ch: str, bounds: tuple[int, ...]) -> bool:
    return bisect.bisect_right(bounds, ord(ch)) % 2 == 1


def unaccented(text: str) -> str:
    """`text` with every mark on an ASCII letter taken off, composed accents too ("Á" is "A").

    Not a form anything is stored in: secret scrubbing also reads this, because a key whose last
    letter carries an accent ("…Mk5Á") reads as the key to a model.

    >>> unaccented("café Ṕ\u0301 й")
    'cafe P й'
    """
    if text.isascii() or not _ACCENTED.search(text):
        return text
    return unicodedata.normalize("NFC", _NON_ASCII.sub(_marks_on_ascii, unicodedata.normalize("NFD", text)))


__all__ = ["plain_text", "unaccented"]
