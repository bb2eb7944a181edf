"""Lamar's edit of a settings file as a splice: its top-level "hooks" member alone is written, every other byte
of the file is kept as it was (a list on one line, a key's own spacing, an escaped character)."""

from __future__ import annotations

import json
from typing import Any

from lamar_claude_code.layout import Layout

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def members(text: str) -> list[tuple[str, int, int, int]] | None:
    """The members of the JSON object `text` holds, as (key, key start, value start, value end); None when the
    text is not one object."""
    try:
        at = _skip(text, 0)
        if text[at:at + 1] != "{":
            return None
        at = _skip(text, at + 1)
        found: list[tuple[str, int, int, int]] = []
        if text[at:at + 1] == "}":
            return found
        while text[at:at + 1] == '"':
            key, end = _DECODER.raw_decode(text, at)
            colon = _skip(text, end)
            if text[colon:colon + 1] != ":":
                return None
            start = _skip(text, colon + 1)
            _, stop = _DECODER.raw_decode(text, start)
            found.append((key, at, start, stop))
            after = _skip(text, stop)
            if text[after:after + 1] == "}":
                return found
            if text[after:after + 1] != ",":
                return None
            at = _skip(text, after + 1)
    except ValueError:
        pass
    return None


def spliced(raw: bytes, data: dict[str, Any], layout: Layout) -> bytes | None:
    """`raw` with its top-level "hooks" member made `data["hooks"]` (added after the last member, rewritten, or
    taken out when `data` has none), every other byte as it was; None when no splice gives exactly `data` (an
    empty object, a key written twice), and the caller writes the whole file in its layout."""
    try:
        text = raw[len(layout.bom):].decode("utf-8")
    except UnicodeDecodeError:
        return None
    found = members(text)
    if not found or not data or len({key for key, *_ in found}) != len(found):
        return None
    hooks = next((m for m in found if m[0] == "hooks"), None)
    newline = "\r\n" if layout.crlf else "\n"
    if "hooks" not in data:
        if hooks is None:
            return None
        place = found.index(hooks)
        if place:  # from the end of the member before it: its comma goes with it
            text = text[:found[place - 1][3]] + text[hooks[3]:]
        elif len(found) > 1:  # the first: up to the next member's key
            text = text[:hooks[1]] + text[found[1][1]:]
        else:
            return None
    else:
        last = hooks or found[-1]
        line = text.rfind("\n", 0, last[1]) + 1
        indent = text[line:last[1]] if layout.indent is not None and not text[line:last[1]].strip() else ""
        value = json.dumps(data["hooks"], indent=layout.indent, separators=(layout.comma, layout.colon),
                           ensure_ascii=False).replace("\n", newline + indent)
        if hooks is not None:
            text = text[:hooks[2]] + value + text[hooks[3]:]
        elif layout.indent is None:
            text = text[:last[3]] + f'{layout.comma}"hooks"{layout.colon}{value}' + text[last[3]:]
        else:
            text = text[:last[3]] + f',{newline}{indent}"hooks"{layout.colon}{value}' + text[last[3]:]
    try:
        body = text.encode("utf-8")
        return layout.bom + body if json.loads(text) == data else None
    except (UnicodeEncodeError, ValueError):  # a lone surrogate UTF-8 cannot hold: written whole, escaped
        return None


__all__ = ["members", "spliced"]
