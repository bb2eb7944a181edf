"""Numbers read from text as a person typed them: ASCII digits, so that no spelling Python's
`float()` and `int()` also take (`1_0`, other scripts' digits) is read as another number."""

from __future__ import annotations

import re

# float() also reads `1_0` as 10 and Arabic-Indic digits as ours; a number on a command line or in
# a form is read as typed, or refused. nan and inf are numbers the callers refuse as out of range.
_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|(?i:nan|inf|infinity))")
_WHOLE = re.compile(r"[0-9]+")
_MOST_DIGITS = 4_000  # below int()'s own limit on digits read from text


def typed_number(text: str) -> float | None:
    """The number `text` spells in ASCII (a sign, digits, a point, an exponent; nan and inf
    included), or None.

    >>> typed_number(" -0.5 "), typed_number("1e3"), typed_number("1_0"), typed_number("\\u0661")
    (-0.5, 1000.0, None, None)
    """
    stripped = text.strip()
    return float(stripped) if _NUMBER.fullmatch(stripped) else None


def typed_whole(text: str) -> int | None:
    """The whole number >= 0 that `text` spells in ASCII digits alone, or None.

    >>> typed_whole(" 12 "), typed_whole("1_0"), typed_whole("3.0"), typed_whole("+2"), typed_whole("\\u0663")
    (12, None, None, None, None)
    """
    stripped = text.strip()
    if not _WHOLE.fullmatch(stripped) or len(stripped) > _MOST_DIGITS:
        return None
    return int(stripped)


__all__ = ["typed_number", "typed_whole"]
