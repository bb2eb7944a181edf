"""How a settings file is laid out (byte-order mark, indentation, line ends), so Lamar's edits write it back so."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

BOM = b"\xef\xbb\xbf"
# The first key of the object, with what stands around its colon (a file on one line keeps its own spacing).
_FIRST_KEY = re.compile(r'\A\s*\{\s*"(?:[^"\\]|\\.)*"([ \t]*):([ \t]*)')
_INDENT = re.compile(r"\A\s*\{[ \t]*\r?\n([ \t]*)\S")


@dataclass(frozen=True)
class Layout:
    """A new file gets two spaces and a final newline, as Claude Code writes its own settings."""

    bom: bytes = b""
    indent: str | None = "  "  # None: all on one line
    colon: str = ": "
    comma: str = ","  # on one line, what follows each comma
    crlf: bool = False
    final_newline: bool = True


def layout_of(raw: bytes) -> Layout:
    """The layout of a file's bytes; a team's settings.json indented with four spaces or tabs, or saved with
    Windows line ends, stays so after `install` and `uninstall` (a whole-file change in git otherwise)."""
    bom = BOM if raw.startswith(BOM) else b""
    text = raw[len(bom):].decode("utf-8", errors="replace")
    if not text.strip():
        return Layout(bom=bom)
    nested, key = _INDENT.match(text), _FIRST_KEY.match(text)
    # On one line only when it holds a key there: `{}` (what `uninstall` leaves of a file it made) is no layout.
    indent = nested.group(1) if nested else None if key and "\n" not in text.strip() else "  "
    after = key.group(2) if key else " "
    return Layout(bom=bom, indent=indent, colon=f"{key.group(1)}:{after}" if key else ": ",
                  comma="," if indent is not None else "," + after,
                  crlf="\r\n" in text, final_newline=text.endswith("\n"))


def dump(data: dict[str, Any], layout: Layout) -> bytes:
    """`data` as JSON in `layout`, its byte-order mark first."""
    separators = (layout.comma, layout.colon)
    try:
        text = json.dumps(data, indent=layout.indent, separators=separators, ensure_ascii=False)
        body = text.encode("utf-8")
    except UnicodeEncodeError:
        # The file held an escaped lone surrogate ("\ud800"), which UTF-8 cannot hold: every
        # character written as an escape keeps it, and everything else, exactly as it was.
        body = json.dumps(data, indent=layout.indent, separators=separators).encode("ascii")
    if layout.final_newline:
        body += b"\n"
    if layout.crlf:  # JSON holds no raw line end inside a string, so every one is the layout's
        body = body.replace(b"\n", b"\r\n")
    return layout.bom + body
