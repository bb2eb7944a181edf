"""User text on `lamar ui`'s pages in `<bdi>`: right-to-left words in a lesson, a scope or a reason are laid out
on their own and cannot reorder the page's words around them, nor a lesson's fields among themselves."""

from __future__ import annotations

from html import escape

from lamar import Experience
from lamar.cli.isolate import isolated
from lamar.cli.render import shorten


def said(text: str) -> str:
    """`text`, escaped, isolated: its direction is its own (the element's dir is auto)."""
    return f"<bdi>{escape(text)}</bdi>"


def lesson(exp: Experience, width: int | None = None) -> str:
    """`exp.render()` (cut to `width` as `shorten` cuts it) with each field in its own `<bdi>`: an Arabic
    precondition beside an Arabic action would otherwise run as one right-to-left stretch, the action shown
    first; the sentence's own words stay in the page's direction. A rendering not made of its fields as
    expected (a change to `render`) is isolated whole."""
    shown = isolated(exp, width, said, escape)
    if shown is not None:
        return shown
    return said(exp.render() if width is None else shorten(exp.render(), width))


__all__ = ["lesson", "said"]
