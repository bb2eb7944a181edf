"""The one lesson list a reply writes inline amid prose ("Here they are: {"lessons": [...]} Hope
this helps"), found by the JSON decoder itself, as a list or inside an object."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_TRIES = 64  # opening brackets read from: prose holds few, and each try may read on to the reply's end


def inline_list(text: str, unwrap: Callable[[dict[str, Any]], object]) -> list[Any] | None:
    """The one lesson list among the JSON values `text` holds, or None when it holds no such list
    or several (which one is the answer would be a guess).

    A lesson list is a list of objects (or an empty one), bare or the one list `unwrap` finds in an
    object; other values (a "[1]" citing a source, a bare lesson) are prose, not an answer.

    >>> inline_list('Here are the lessons: {"lessons": [{"action": "a"}]} Hope this helps.', lambda d: d["lessons"])
    [{'action': 'a'}]
    >>> inline_list('See [1] and [{"a": 1}], then [{"b": 2}].', lambda d: d) is None
    True
    """
    decoder = json.JSONDecoder()
    found: list[list[Any]] = []
    at = 0
    for _ in range(_TRIES):
        starts = [i for i in (text.find("[", at), text.find("{", at)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, at = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # prose in brackets, or an opening the reply never closes
            at = start + 1
            continue
        value = unwrap(value) if isinstance(value, dict) else value
        if isinstance(value, list) and all(isinstance(item, dict) for item in value):
            found.append(value)
    return found[0] if len(found) == 1 else None


__all__ = ["inline_list"]
