"""User text on `lamar ui`'s pages in `<bdi>`: right-to-left words in a lesson, a scope or a reason are laid out
on their own and cannot reorder the page's words around them, nor a lesson's fields among themselves."""

from __future__ import annotations

from html import escape

from lamar import Experience
from lamar.cli.render import shorten


def said(text: str) -> str:
    """`text`, escaped, isolated: its direction is its own (the element's dir is auto)."""
    return f"<bdi>{escape(text)}</bdi>"


def lesson(exp: Experience, width: int | None = None) -> str:
    """`exp.render()` (cut to `width` as `shorten` cuts it) with each field in its own `<bdi>`: an Arabic
    precondition beside an Arabic action would otherwise run as one right-to-left stretch, the action shown
    first; the sentence's own words stay in the page's direction. A rendering not made of its fields as
    expected (a change to `render`) is isolated whole."""
    text = exp.render()
    pieces = _pieces(exp, text)
    short = text if width is None else shorten(text, width)
    if pieces is None or (short != text and text != " ".join(text.split())):
        return said(short)
    kept, cut = (short, "") if short == text else (short[:-len("...")], "...")
    if not text.startswith(kept):
        return said(short)
    parts, left = [], len(kept)
    for piece, theirs in pieces:
        piece, left = piece[:left], left - len(piece)
        if piece:
            parts.append(said(piece) if theirs else escape(piece))
        if left <= 0:
            break
    return "".join(parts) + cut


def _pieces(exp: Experience, text: str) -> list[tuple[str, bool]] | None:
    """`text` (the rendering) as its frame's words and each field as rendered (True), read off renderings of
    the fields one at a time beside a stand-in, so a comma inside a field cannot mislead the split."""
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


__all__ = ["lesson", "said"]
