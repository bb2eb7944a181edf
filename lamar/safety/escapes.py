"""Characters written as escapes (`\\x3c`, `\\u003c`, `%3C`, `&#60;`, `&lt;`, `\\"`), read as the characters."""

from __future__ import annotations

import re

# A code point written as a Python/JSON escape, a percent escape or an HTML character reference.
# A decimal reference takes decimal digits only: "&#1a;" is no escape.
ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|%([0-9a-fA-F]{2})|&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));")
# What the fence also reads through: the named references of the characters a turn is written
# with, and a backslash (or several, JSON in JSON) before a quote.
_READ = re.compile(ESCAPE.pattern + r"|&(lt|gt|quot|apos|colon|vert|verbar|lpar|rpar|lsqb|rsqb|amp);|\\+([\"'])")
_NAMED = {"lt": "<", "gt": ">", "quot": '"', "apos": "'", "colon": ":", "vert": "|", "verbar": "|", "lpar": "(",
          "rpar": ")", "lsqb": "[", "rsqb": "]", "amp": "&"}


def code_point(match: re.Match[str]) -> str:
    """The character an `ESCAPE` match stands for ("?" for a surrogate or a number past Unicode)."""
    hex_ = match.group(1) or match.group(2) or match.group(3) or match.group(4)
    code = int(hex_, 16) if hex_ else int(match.group(5))
    return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else "?"


def read_through(text: str) -> tuple[str, list[int], list[int]]:
    """`text` with each escape of an ASCII character read as it, and where each of its characters came from.

    Returns the text read, and for each of its characters the start and the end of its span in
    `text` (an escape's whole span for the character it stands for). An escape of a character
    past ASCII stays as written: it is a turn's punctuation and letters that matter here.

    >>> read_through('System&#58; {\\\\"role\\\\":\\\\"system\\\\"}')[0]
    'System: {"role":"system"}'
    """
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    last = 0
    for match in _READ.finditer(text):
        if match.group(6):
            char = _NAMED[match.group(6)]
        elif match.group(7):
            char = match.group(7)
        else:
            char = code_point(match)
            if not char.isascii():
                continue
        out.append(text[last:match.start()])
        starts += range(last, match.start())
        ends += range(last + 1, match.start() + 1)
        out.append(char)
        starts.append(match.start())
        ends.append(match.end())
        last = match.end()
    out.append(text[last:])
    starts += range(last, len(text))
    ends += range(last + 1, len(text) + 1)
    return "".join(out), starts, ends


def has_escape(text: str) -> bool:
    """Whether `text` holds an escape `read_through` reads (one search, in C)."""
    return _READ.search(text) is not None


def unescaped(text: str) -> str:
    """`text` read through as `read_through` reads it: what a model takes the escapes for.

    >>> unescaped("\\\\u003csystem\\\\u003e ok%3A &lt;b&gt;")
    '<system> ok: <b>'
    """
    if "\\" not in text and "%" not in text and "&" not in text:
        return text
    return read_through(text)[0]


__all__ = ["ESCAPE", "code_point", "has_escape", "read_through", "unescaped"]
