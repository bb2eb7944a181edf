"""Characters written as escapes (`\\x3c`, `\\u003c`, `%3C`, `&#60;`, `&lt;`, `\\"`), read as the characters."""

from __future__ import annotations

import re

# A code point written as a Python/JSON escape, a percent escape or an HTML character reference.
# A decimal reference takes decimal digits only: "&#1a;" is no escape.
ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})|\\u([0-9a-fA-F]{4})|%([0-9a-fA-F]{2})"
                    r"|&#(?:[xX]([0-9a-fA-F]{1,6})|([0-9]{1,7}));")
# What the fence also reads through: the named references of the characters a turn is written
# with, and a backslash (or several, JSON in JSON) before a quote.
# A run of backslashes is tried from its start only: from each of its backslashes, a run with no quote
# after it was read to its end again. No other escape ends in a backslash, so no match ends inside a run.
_READ = re.compile(ESCAPE.pattern + r"|&(lt|gt|quot|apos|colon|vert|verbar|lpar|rpar|lsqb|rsqb|amp);"
                   r"|(?<!\\)\\++([\"'])")
_NAMED = {"lt": "<", "gt": ">", "quot": '"', "apos": "'", "colon": ":", "vert": "|", "verbar": "|", "lpar": "(",
          "rpar": ")", "lsqb": "[", "rsqb": "]", "amp": "&"}


def code_point(match: re.Match[str]) -> str:
    """The character an `ESCAPE` match stands for ("?" for a surrogate or a number past Unicode)."""
    hex_ = match.group(1) or match.group(2) or match.group(3) or match.group(4)
    code = int(hex_, 16) if hex_ else int(match.group(5))
    return chr(code) if code < 0x110000 and not 0xD800 <= code < 0xE000 else "?"


def _read(match: re.Match[str]) -> str:
    """What a `_READ` match reads as: the ASCII character it stands for, or itself."""
    if match.group(6):
        return _NAMED[match.group(6)]
    if match.group(7):
        return match.group(7)
    char = code_point(match)
    return char if char.isascii() else match.group(0)


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
        char = _read(match)
        if len(char) > 1:
            continue
        out += [text[last:match.start()], char]
        starts += [*range(last, match.start()), match.start()]
        ends += [*range(last + 1, match.start() + 1), match.end()]
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
    return _READ.sub(_read, text)


__all__ = ["ESCAPE", "code_point", "has_escape", "read_through", "unescaped"]
