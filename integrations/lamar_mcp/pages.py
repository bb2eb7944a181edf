"""Pages of the `lessons` tool and the lamar://lessons resource: at most `limit` lessons and `PAGE_CHARS`
characters a page, and an opaque cursor that names the place in the store's order where the next page starts."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from lamar import Experience, InvalidArgument, Lamar
from lamar_mcp.loose import whole
from lamar_mcp.refusals import shown
from lamar_mcp.results import Lesson, LessonList, LessonsPage

PAGE_SIZE = 20
"""Lessons a page holds when the call gives no `limit`: of lessons of a sentence each, half of `PAGE_CHARS`."""
MAX_PAGE_SIZE = 100
"""The largest `limit` taken."""
PAGE_CHARS = 30_000
"""A page ends before the lesson that would take its lessons' JSON past this many characters (a page holds
one lesson at least), under the sizes at which Claude Code warns about a tool's answer and moves it out of
the model's context into a file: lessons whose fields are long are a dozen times the usual size."""
LESSONS_URI = "lamar://lessons"
"""The resource of the lessons' first page; `LESSONS_URI?cursor=NEXT_CURSOR` is the page from a cursor on."""
_PREFIX = "lessons@"


class BadCursor(ToolError):
    """A cursor that no page of this store gave: another store's, cut short, or made up."""


def page_size(value: Any) -> int:
    """The `limit` a call gave, checked: a whole number from 1 to `MAX_PAGE_SIZE`, `PAGE_SIZE` when left out."""
    if value is None:
        return PAGE_SIZE
    read = whole(value)
    if isinstance(read, bool) or not isinstance(read, int) or not 1 <= read <= MAX_PAGE_SIZE:
        raise ToolError(f"limit must be a whole number from 1 to {MAX_PAGE_SIZE} (lessons a page), or left out for "
                        f"{PAGE_SIZE}; got {shown(value)}")
    return read


def page_of(lamar: Lamar, cursor: Any, size: int, view: Callable[[Experience], Lesson], **filters: Any) -> LessonList:
    """The page of the lessons that match `filters` (`Lamar.page`'s) that starts at `cursor`.

    A cursor is a place in the store's lessons in the order they were added, which only grows at
    its end: a lesson added, edited or retired between two pages neither shifts nor repeats the others.
    Only the page's lessons are copied and go through `view` (their evidence is computed), one more
    when the budget of characters ends the page.
    """
    try:
        found = lamar.page(_start(cursor), size, **filters)
    except InvalidArgument:
        if cursor is None:
            raise
        raise _bad_cursor(cursor) from None  # a place past this store's lessons: another store's cursor
    page = _filled(found.lessons, view)
    after = found.places[len(page)] if len(page) < len(found.lessons) else found.next
    return LessonList(count=found.count, lessons=page, next_cursor=None if after is None else _cursor(after))


def resource_page(found: LessonList) -> LessonsPage:
    """`found` as a resource holds it: with the URI that reads the next page."""
    after = found.next_cursor
    return LessonsPage(count=found.count, lessons=found.lessons, next_cursor=after,
                       next_uri=None if after is None else f"{LESSONS_URI}?cursor={after}")


def _filled(ahead: Sequence[Experience], view: Callable[[Experience], Lesson]) -> list[Lesson]:
    """The lessons of `ahead`, fewer when their JSON would pass `PAGE_CHARS`; one at least."""
    page: list[Lesson] = []
    used = 0
    for exp in ahead:
        lesson = view(exp)
        chars = len(lesson.model_dump_json(indent=2))
        if page and used + chars > PAGE_CHARS:
            break
        page.append(lesson)
        used += chars
    return page


def _cursor(at: int) -> str:
    return base64.urlsafe_b64encode(f"{_PREFIX}{at}".encode()).decode().rstrip("=")


def _start(cursor: Any) -> int:
    """Where the page starts: 0 without a cursor, else the place a `next_cursor` names."""
    if cursor is None:
        return 0
    said = ""
    if isinstance(cursor, str) and cursor.isascii() and len(cursor) <= 64:
        try:
            said = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            said = ""
    at = said.removeprefix(_PREFIX)
    if not said.startswith(_PREFIX) or not at.isdigit():
        raise _bad_cursor(cursor)
    return int(at)


def _bad_cursor(cursor: Any) -> BadCursor:
    return BadCursor("cursor must be the next_cursor that the previous lessons() call returned, passed as it is; "
                     f"leave it out for the first page; got {shown(cursor)}")


__all__ = ["LESSONS_URI", "MAX_PAGE_SIZE", "PAGE_CHARS", "PAGE_SIZE", "BadCursor", "page_of", "page_size",
           "resource_page"]
