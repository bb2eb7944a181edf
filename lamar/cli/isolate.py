"""A lesson's rendering with each field isolated from the others and from the words around it, for a page
(`lamar ui` wraps each in `<bdi>`) or for text that holds no markup (a chart's label, a tooltip: FSI and PDI)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lamar.cli.render import lesson_line, shorten

if TYPE_CHECKING:
    from lamar.experience import Experience

# Unicode's first strong isolate and pop directional isolate: what they enclose takes its own direction and is
# laid out as one neutral character among the words around it, as <bdi> is on a page.
FSI, PDI = "\u2068", "\u2069"


def marked(text: str) -> str:
    """`text` between FSI and PDI: a right-to-left id or scope beside "(active)" keeps its parentheses.

    >>> marked("درس-1") == "\\u2068درس-1\\u2069"
    True
    """
    return f"{FSI}{text}{PDI}"


def lesson_marked(exp: Experience, width: int | None = None) -> str:
    """`exp.render()` (cut to `width`) with each field between FSI and PDI, for text that holds no markup (an SVG
    label, a tooltip): an Arabic precondition beside an Arabic action would otherwise run as one right-to-left
    stretch, the action shown first. A rendering not made of its fields as expected is marked whole."""
    whole = exp.render() if width is None else shorten(exp.render(), width)
    return isolated(exp, width, marked, str) or marked(whole)


def label_marked(exp: Experience, width: int) -> str:
    """`lamar.cli.render.lesson_line` (the condition kept to two thirds of `width`, so what to do shows) with each
    field between FSI and PDI, for a chart's label: the rules imported from one heading share their condition, and
    a label cut at its end would read the same for each of them."""
    text, short = exp.render(), lesson_line(exp, width)
    pieces = _pieces(exp, text)
    if short == shorten(text, width) or pieces is None or text != " ".join(text.split()):
        return lesson_marked(exp, width)
    condition = len("When " + " ".join(exp.precondition.split()).rstrip(".") + ", ")
    for at in range(len(short)):  # where lesson_line cut the condition: "...," then the start of the rest
        head, rest = short[:at], short[at + len("..., "):]
        kept = rest.removesuffix("...")
        if short.startswith("..., ", at) and text.startswith(head) and text.startswith(kept, condition):
            return (_span(pieces, 0, at) + "..., " + _span(pieces, condition, condition + len(kept))
                    + rest[len(kept):])
    return marked(short)


def _span(pieces: list[tuple[str, bool]], start: int, end: int) -> str:
    """The rendering's characters `start` to `end`, each field's share between FSI and PDI."""
    parts, at = [], 0
    for piece, theirs in pieces:
        part = piece[max(start - at, 0):max(end - at, 0)]
        at += len(piece)
        if part:
            parts.append(marked(part) if theirs else part)
    return "".join(parts)


def isolated(exp: Experience, width: int | None, field: Callable[[str], str],
             frame: Callable[[str], str]) -> str | None:
    """`exp.render()` cut to `width` as `shorten` cuts it, each field passed through `field` and the sentence's
    own words through `frame`; None when the rendering is not made of its fields as expected (a change to
    `render`), or a cut cannot be mapped onto them: the caller then isolates it whole."""
    text = exp.render()
    pieces = _pieces(exp, text)
    short = text if width is None else shorten(text, width)
    if pieces is None or (short != text and text != " ".join(text.split())):
        return None
    kept, cut = (short, "") if short == text else (short[:-len("...")], "...")
    if not text.startswith(kept):
        return None
    parts, left = [], len(kept)
    for piece, theirs in pieces:
        piece, left = piece[:left], left - len(piece)
        if piece:
            parts.append(field(piece) if theirs else frame(piece))
        if left <= 0:
            break
    return "".join(parts) + cut


def _pieces(exp: Experience, text: str) -> list[tuple[str, bool]] | None:
    """`text` (the rendering) as its frame's words and each field as rendered (True), read off renderings of
    the fields one at a time beside a stand-in, so a comma inside a field cannot mislead the split."""
    from lamar.experience import Experience

    said_why = bool(exp.rationale.strip())
    why = "x" if said_why else ""
    try:
        condition = Experience(exp.precondition, "x", why).render()
        action = Experience("x", exp.action, why).render()
        reason = Experience("x", "x", exp.rationale).render() if said_why else ""
    except Exception:  # noqa: BLE001 - a stand-in the checks refuse: the lesson is isolated whole
        return None
    tail = ", because x." if said_why else "."
    if not (condition.startswith("When ") and condition.endswith(", x" + tail) and action.startswith("When x, ")):
        return None
    pieces = [("When ", False), (condition[len("When "):-len(", x" + tail)], True), (", ", False)]
    if said_why:  # the action ends before the stand-in's reason; the reason runs to the end
        pieces += [(action[len("When x, "):-len(tail)], True), (", because ", False),
                   (reason[len("When x, x, because "):], True)]
    else:
        pieces.append((action[len("When x, "):], True))
    last = pieces[-1][0]
    if last.endswith("."):  # the rendering's own full stop, not the field's
        pieces[-1:] = [(last[:-1], True), (".", False)]
    if "".join(piece for piece, _ in pieces) != text:
        return None
    return pieces


__all__ = ["FSI", "PDI", "isolated", "label_marked", "lesson_marked", "marked"]
