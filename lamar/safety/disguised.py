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
_CONTINUED = re.compile(rf"(?<={_K})\\\r?\n[ \t]*+(?={_K})")
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


def _joined(text: str, cuts: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]], list[int]]:
    """`text` with the cuts (start, end) removed, the segments that map it back (joined offset,
    original offset), and where in the joined text the cuts were.

    For a split key a cut is closed only when the chunk after it holds a digit and the chunk before
    holds one too or ends like a key prefix ("ghp_", "sk-"): words of prose stay apart. One regex
    finds those gaps, reading each chunk at most twice, so hostile text costs linear time.
    """
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
    cuts = [(m.start("gap"), m.end("gap")) for m in _CUT.finditer(text)]
    # A backslash ending a line inside a word is a join that shell, Makefiles, C and Python strings
    # make themselves: the pieces need not look random to be one key.
    continued = (
        [(m.start(), m.end()) for m in _CONTINUED.finditer(text)] if "\\\n" in text or "\\\r" in text else []
    )
    # A key broken over a line has random pieces; prose broken over a line has words.
    found = _rejoined_spans(text, cuts, find, _random_pieces) if cuts else []
    return found + (_rejoined_spans(text, continued, find, lambda pieces: True) if continued else [])


# A redaction that ends a line, and the next line going on with key characters.
_REDACTED_AT_CUT = re.compile(r"\[REDACTED:[^\]\n]{1,40}\][ \t]*+\\?\r?\n[ \t]*+[A-Za-z0-9_.~+/=-]")


def split_behind(before: str, after: str, find: Finder) -> list[tuple[int, int, str]]:
    """Spans in `before` of keys cut over lines whose first piece the plain rules, giving `after`, redacted
    alone (`GH_TOKEN=ghp_…` and the rest on the next line): the rest would stay. Cheap unless one ends a line."""
    if "[REDACTED:" not in after or not _REDACTED_AT_CUT.search(after):
        return []
    return _merged(_split_spans(before, find))


def _random_pieces(pieces: list[str]) -> bool:
    return all(any(c.isdigit() for c in piece) for piece in pieces[1:])


def _rejoined_spans(
    text: str, cuts: list[tuple[int, int]], find: Finder, plausible: Callable[[list[str]], bool]
) -> list[tuple[int, int, str]]:
    """What `find` finds across the cuts once they are taken out of `text`, mapped back to `text`."""
    joined, segments, gaps = _joined(text, cuts)
    marks = [offset for offset, _ in segments]

    def back(x: int) -> int:
        joined_at, original = segments[bisect.bisect_right(marks, x) - 1]
        return original + x - joined_at

    spans = []
    for start, end, kind in find(joined):
        inside = gaps[bisect.bisect_right(gaps, start) : bisect.bisect_left(gaps, end)]
        if not inside:
            continue  # found without joining: the plain rules saw it already
        if plausible([joined[a:b] for a, b in zip([start, *inside], [*inside, end], strict=True)]):
            spans.append((back(start), back(end - 1) + 1, kind))
    return spans


# Where string literals meet: `" + "` (or side by side, as Python joins them) between key characters.
_KEY_SET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.~+/=-")
_TOKEN_LONG = 400  # farthest from a cut that a provider token cut there is read
# The quote comes first so that the engine scans for it, not for what precedes it.
_CONCAT = re.compile(
    r"""["'](?<=[A-Za-z0-9_.~+/=-]{3}["'])(?:\s*+\+\s*+|\s++)["'](?=[A-Za-z0-9_.~+/=-]{3})"""
)


def concatenated_spans(text: str, find: Finder) -> list[tuple[int, int, str]]:
    """Spans of provider credentials cut into string literals joined again in code
    (`"sk-ant-api03-…" + "…"`), from the first piece's start to the last piece's end.

    Run before the plain rules: a first piece long enough to be redacted alone would leave the rest.
    """
    cuts = [(m.start(), m.end()) for m in _CONCAT.finditer(text)]
    if not cuts:
        return []

    def near_cuts(joined: str) -> list[tuple[int, int, str]]:
        # Only the run of key characters each cut joined is read: the provider rules over all of
        # a long text would cost more than the rest of scrub does.
        found: list[tuple[int, int, str]] = []
        shift = done = 0
        for a, b in cuts:
            at, shift = a - shift, shift + b - a
            if at < done:
                continue
            start, end = at, at
            while start > max(0, at - _TOKEN_LONG) and joined[start - 1] in _KEY_SET:
                start -= 1
            while end < min(len(joined), at + _TOKEN_LONG) and joined[end] in _KEY_SET:
                end += 1
            start, done = max(0, start - 1), end
            found += [(start + x, start + y, kind) for x, y, kind in find(joined[start:end])]
        return found

    return _merged(_rejoined_spans(text, cuts, near_cuts, lambda pieces: True))


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
    return _merged(_split_spans(text, find) + _reversed_spans(text, find) + _encoded_spans(text, scrub, find))


_DIGIT = re.compile(r"\d")


def may_be_disguised(text: str) -> bool:
    """False only where `disguised_spans`, `concatenated_spans` and the splits `split_behind` rejoins find
    nothing in `text` whatever the rules: none of the patterns each of them starts from is in it."""
    # Each pattern is searched only where the characters it needs are there: a cut needs a gap and a
    # digit after it, an escape a backslash, "%" or "&#".
    if "\\\n" in text or "\\\r" in text or (_has_gap(text) and _DIGIT.search(text) and _CUT.search(text)):
        return True
    if ("\\" in text or "%" in text or "&#" in text) and _ESCAPED.search(text):
        return True
    if ("'" in text or '"' in text) and _CONCAT.search(text):
        return True
    return _BASE64.search(text) is not None or _HEX.search(text) is not None


def _has_gap(text: str) -> bool:
    return " " in text or "\t" in text or "\n" in text


def _merged(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """`found` in order, overlapping spans made one (named by the first)."""
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


__all__ = ["concatenated_spans", "disguised_spans", "may_be_disguised", "redact_spans"]
