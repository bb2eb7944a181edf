"""`terminal_safe`: stored text as a terminal may print it, with every control and bidi character shown as an escape."""

from __future__ import annotations

from typing import Any, TextIO

# C0 (but newline and tab), DEL and C1: a terminal acts on these rather than showing them.
# C0 is written \x1b (JSON output escapes C0 itself, so these only reach plain text); DEL
# and C1 are written \u009b, which is also a valid escape inside a JSON string.
_TABLE: dict[int, str] = {c: f"\\x{c:02x}" for c in range(0x20) if chr(c) not in "\n\t"}
_TABLE.update({c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)})
# Bidi embeddings, overrides, isolates and marks: they reorder the rest of a line on screen.
_TABLE.update({ord(c): f"\\u{ord(c):04x}" for c in
               "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029"})


def terminal_safe(text: str) -> str:
    """`text` with control characters (C0 but newline and tab, DEL, C1) and bidi controls written as escapes.

    Scope values, provenance (an MCP client's name), audit reasons and proposal ids keep what was
    sent; printed raw, ESC/CSI/OSC sequences could clear the screen or set the clipboard, and a
    bidi override could reverse what follows. The `lamar` command passes all its output through this.

    >>> terminal_safe("ok\\x1b]52;c;aGk=\\x07 \\x1b[2J \\u202eabc\\nnext")
    'ok\\\\x1b]52;c;aGk=\\\\x07 \\\\x1b[2J \\\\u202eabc\\nnext'
    """
    return text.translate(_TABLE)


def narrow_encoding(stream: Any) -> str | None:
    """The encoding of `stream` when it cannot write every character (ASCII, Latin-1, a Windows code
    page), else None (UTF-8, or a stream of str such as StringIO)."""
    import codecs

    try:
        name = codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name
    except (LookupError, TypeError):
        return None
    return None if name.startswith("utf") else name


def writable(text: str, encoding: str, errors: str = "strict") -> str:
    """`text` with each character `encoding` cannot write as a JSON escape (\\u00e9, a pair past U+FFFF):
    it still reads as that character, in a `--json` string too, where Python's own `\\xe9` would not.

    >>> writable("café — ok", "latin-1")
    'café \\\\u2014 ok'
    """
    try:
        text.encode(encoding, errors)
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for char in text:
        try:
            char.encode(encoding, errors)
            out.append(char)
        except UnicodeEncodeError:
            units = char.encode("utf-16-be", "surrogatepass")
            out.extend(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))
    return "".join(out)


class TerminalStream:
    """A text stream that writes through `terminal_safe`; everything else is the wrapped stream's.

    Its `buffer` is the wrapped stream's: a protocol that writes bytes (the MCP server over
    stdio) is not a terminal's text and passes unchanged. On a stream whose encoding lacks some
    characters, those are written as escapes (`writable`): a lesson holding one still prints.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._encoding = narrow_encoding(stream)
        self._errors = getattr(stream, "errors", None) or "strict"

    def write(self, text: str) -> int:
        safe = terminal_safe(text)
        if self._encoding is not None:
            safe = writable(safe, self._encoding, self._errors)
        self._stream.write(safe)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


__all__ = ["TerminalStream", "narrow_encoding", "terminal_safe", "writable"]
