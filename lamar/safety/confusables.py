"""`skeleton`: fold look-alike letters and colons to ASCII, one character for one character.

A model reads "ꜱʏꜱᴛᴇᴍ꞉" (small capitals and a modifier colon), "ᏚᎩᏚᎢᎬᎷ:" (Cherokee) or
"Śystem∶" (an accented letter, a ratio sign) as "System:". Screening and fencing match on the
skeleton; because it keeps every position, what is found there can be quoted in the original.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Cyrillic and Greek look-alikes (the same table the injection screen has always used).
_CYRILLIC_GREEK = dict(zip(
    "аеорсхуіјѕԁһԛԝӏɡոսαειορτυνκѵɩıȷ" "АВЕКМНОРСТХЅІЈΑΒΕΗΙΚΜΝΟΡΤΥΧ",
    "aeopcxyijsdhqwlgnuaeioptuvkviij" "ABEKMHOPCTXSIJABEHIKMNOPTYX", strict=True,
))
# Cherokee capitals that read as Latin letters (after casefold, Cherokee small letters become these).
_CHEROKEE = dict(zip(
    "ᎠᎡᎢᎥᎩᎪᎫᎬᎳᎷᎻᏀᏂᏃᏏᏒᏔᏕᏚᏞᏟᏢᏦᏧᏴᏙᎤ",
    "DRTiYAJEWMHGhZbRWSSLCPKdBVU", strict=True,
))
# Every sign that reads as a colon.
_COLONS = "∶꞉ː˸׃։᛬⁚⦂︰﹕：܃܄፡჻꛴"
_LATIN_NAME = re.compile(r"^LATIN (?:CAPITAL |SMALL )?LETTER (?:SMALL CAPITAL |SMALL )?([A-Z])(?: WITH .*)?$")
_RANGES = ((0x00C0, 0x0530), (0x1D00, 0x1E00), (0x1E00, 0x1F00), (0x2C60, 0x2C80), (0xA720, 0xA800),
           (0xAB30, 0xAB70))


@functools.cache
def _table() -> dict[int, str]:
    """Built on first use (a few thousand name lookups), so importing lamar stays cheap."""
    table: dict[int, str] = {}
    for low, high in _RANGES:
        for code in range(low, high):
            found = _LATIN_NAME.match(unicodedata.name(chr(code), ""))
            if found:
                letter = found.group(1)
                small = "SMALL LETTER" in unicodedata.name(chr(code)) and "SMALL CAPITAL" not in \
                    unicodedata.name(chr(code))
                table[code] = letter.lower() if small else letter
    for code in range(0xAB70, 0xABC0):  # Cherokee small letters: their capital's look-alike
        upper = chr(code).upper()
        if len(upper) == 1 and upper in _CHEROKEE:
            table[code] = _CHEROKEE[upper].lower()
    table.update({ord(k): v for k, v in _CHEROKEE.items()})
    table.update({ord(k): v for k, v in _CYRILLIC_GREEK.items()})
    table.update({ord(c): ":" for c in _COLONS})
    return table


def skeleton(text: str) -> str:
    """`text` with look-alike letters and colons folded to ASCII; the same length as `text`.

    >>> skeleton("ꜱʏꜱᴛᴇᴍ꞉ ᏚᎩᏚᎢᎬᎷ∶ Ѕуstem")
    'SYSTEM: SYSTEM: System'
    """
    return text.translate(_table())


__all__ = ["skeleton"]
