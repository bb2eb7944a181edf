"""Credentials in disguise: split by a space or a line, reversed, base64, hex- or percent-escaped."""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Callable, Sequence

from lamar.safety.escapes import ESCAPE, code_point

Finder = Callable[[str], "list[tuple[int, int, str]]"]  # spans (start, end, kind) of secrets in a text
Scrubber = Callable[[str], "tuple[str, list[str]]"]

_K, _N = "[A-Za-z0-9_.~+/=-]", "[A-Za-z_.~+/=-]"  # a character of a chunk; one that is no digit
# A chunk that holds a digit or ends like a key prefix, a short gap, a chunk that holds a digit.
# Chunks start only where a chunk starts and are read possessively: no position is tried twice.
_CUT = re.compile(
    rf"(?<!{_K})(?={_N}*+\d|{_K}*+(?<=[_.-])){_K}++(?P<gap>[ \t]*+\r?\n[ \t]*+|[ \t]{{1,3}})(?={_N}*+\d)"
)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
# A run holding an escape. It starts only where a run starts and its word characters are taken
# possessively, so a long run without escapes is read once, not once per position.
_ESCAPED = re.compile(
    r"(?<![A-Za-z0-9_.-])(?:[A-Za-z0-9_.-]*+(?:\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|%[0-9a-fA-F]{2}"
    r"|&#(?:[xX][0-9a-fA-F]{1,6}|[0-9]{1,7});))++[A-Za-z0-9_.-]*+"
)
# One or two escapes count in a run as long as a key: "ghp&#95;" + 36 characters is a token
# whose underscore alone was escaped; a short run with one ("a%20b") is ordinary text.
_KEY_LONG = 20
_KEY_CHARS = re.compile(r"[A-Za-z0-9_.~+/=-]+")
_HEX = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){12,}(?![0-9a-fA-F])")


def _joined(text: str) -> tuple[str, list[tuple[int, int]], list[int]]:
    """`text` with short gaps between random-looking chunks removed, the segments that map it
    back (joined offset, original offset), and where in the joined text the gaps were.

    A gap is closed only when the chunk after it holds a digit and the chunk before holds one
    too or ends like a key prefix ("ghp_", "sk-"): words of prose stay apart. One regex finds
    those gaps, reading each chunk at most twice, so hostile text costs linear time.
    """
    cuts = [(m.start("gap"), m.end("gap")) for m in _CUT.finditer(text)]
    pieces: list[str] = []
    segments: list[tuple[int, int]] = []
    last = joined_at = 0
    for a, b in cuts:
        pieces.append(text[last:a])
        segments.append((joined_at, last))
        joined_at += a - last
        last = b
    pieces.append(text[last:])
    segments.append((joined_at, last))
    return "".join(pieces), segments, [offset for offset, _ in segments[1:]]


def _split_spans(text: str, find: Finder) -> list[tuple[int, int, str]]:
    joined, segments, gaps = _joined(text)
    if not gaps:
        return []
    marks = [offset for offset, _ in segments]

    def back(x: int) -> int:
        joined_at, original = segments[bisect.bisect_right(marks, x) - 1]
        return original + x - joined_at

    spans = []
    for start, end, kind in find(joined):
        cuts = gaps[bisect.bisect_right(gaps, start):bisect.bisect_left(gaps, end)]
        if not cuts:
            continue  # found without joining: the plain rules saw it already
        pieces = [joined[a:b] for a, b in zip([start, *cuts], [*cuts, end], strict=True)]
        # A key broken over a line has random pieces; prose broken over a line has words.
        if all(any(c.isdigit() for c in piece) for piece in pieces[1:]):
            spans.append((back(start), back(end - 1) + 1, kind))
    return spans


def _reversed_spans(text: str, find: Finder) -> list[tuple[int, int, str]]:
    n = len(text)
    return [(n - end, n - start, kind) for start, end, kind in find(text[::-1])]


def _decoded(blob: str) -> str | None:
    """`blob` decoded as base64 (standard or URL-safe) into printable text, or None."""
    padded = blob + "=" * (-len(blob) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return text if text.isprintable() or all(c.isprintable() or c in "\n\t\r" for c in text) else None


def _hex_decoded(run: str) -> str | None:
    try:
        text = bytes.fromhex(run).decode("utf-8")
    except ValueError:
        return None
    return text if text.isprintable() else None


def _encoded_spans(text: str, scrub: Scrubber, find: Finder) -> list[tuple[int, int, str]]:
    spans = []
    for pattern, decode, label in ((_BASE64, _decoded, "base64"), (_HEX, _hex_decoded, "hex")):
        for match in pattern.finditer(text):
            decoded = decode(match.group(0))
            if decoded is not None and decoded != match.group(0):
                kinds = scrub(decoded)[1]
                if kinds:
                    spans.append((match.start(), match.end(), f"{label}-{kinds[0]}"))
    for match in _ESCAPED.finditer(text):
        run = match.group(0)
        if len(run) < _KEY_LONG and run.count("%") + run.count("\\") + run.count("&") < 3:
            continue  # short, and too few escapes for a decoded credential (an upper bound, counted in C)
        decoded, count = ESCAPE.subn(code_point, run)  # the run's escapes, read and counted in one pass
        if count >= 3:
            kinds = scrub(decoded)[1]
        elif len(run) >= _KEY_LONG and count and _KEY_CHARS.fullmatch(decoded):
            # A run with an escape or two is often a URL's ("a%20b"): only a provider's shape
            # with a character of its own escaped counts there, and its rules alone are cheap.
            kinds = [kind for _, _, kind in find(decoded)]
        else:
            continue
        if kinds:
            spans.append((match.start(), match.end(), f"escaped-{kinds[0]}"))
    return spans


def disguised_spans(text: str, find: Finder, scrub: Scrubber) -> list[tuple[int, int, str]]:
    """Spans of `text` that hold a credential in disguise, earliest first, not overlapping.

    Each disguise is undone on a shadow of the text, the provider rules run there, and what they
    find is redacted in the text itself. Only provider formats count for splits and reversals (a
    prefix and a long random body do not arise by accident); decoded blobs get every rule, since
    text someone took the trouble to encode and that decodes to a credential is one.

    Args:
        text: the text, already scrubbed by the plain rules.
        find: the provider rules: spans of provider credentials in a text.
        scrub: the whole scrubber, for decoded blobs.
    """
    found = _split_spans(text, find) + _reversed_spans(text, find) + _encoded_spans(text, scrub, find)
    found.sort()
    out: list[tuple[int, int, str]] = []
    for span in found:
        if not out or span[0] >= out[-1][1]:
            out.append(span)
        elif span[1] > out[-1][1]:
            out[-1] = (out[-1][0], span[1], out[-1][2])
    return out


def redact_spans(text: str, spans: Sequence[tuple[int, int, str]], placeholder: str) -> str:
    """`text` with each span replaced by `placeholder.format(kind=...)`."""
    pieces, last = [], 0
    for start, end, kind in spans:
        pieces += [text[last:start], placeholder.format(kind=kind)]
        last = end
    return "".join(pieces) + text[last:]


__all__ = ["disguised_spans", "redact_spans"]
