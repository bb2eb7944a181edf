"""The lessons in the order they were added: all of them (`Lamar.experiences`), or a page at a time from a
place in that order, copying only the page's lessons (`Lamar.page`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from lamar import arguments
from lamar._errors import InvalidArgument, echoed
from lamar.experience import Experience, Status, check_context
from lamar.policy.config import Policy
from lamar.policy.verdicts import Verdict
from lamar.search import holds, words_of
from lamar.storable import whole_number
from lamar.store.base import RowsView


@dataclasses.dataclass(frozen=True)
class LessonPage:
    """One page of the lessons that match a `Lamar.page` call's filters.

    A place is a lesson's rank in the order every lesson was added, retired ones included: that
    order only grows at its end, so a place names the same lesson however the store changes.

    Attributes:
        lessons: the page's lessons (copies), at most `limit`, in the order they were added.
        places: each of those lessons' place (0: the first lesson added).
        count: how many lessons match the filters in all, before the page and after it.
        next: the place to pass as `start` for the next page (None: this page is the last).
    """

    lessons: list[Experience]
    places: list[int]
    count: int
    next: int | None


def listed(read: Callable[[], RowsView], policy: Policy, status: Any, verdict: Any,
           scope: Any) -> list[Experience]:
    """`Lamar.experiences`: the lessons, in the order they were added, that have this status, this verdict
    and every field of this scope (None: any); the arguments are checked before the lessons are read."""
    want_status = arguments.choice(Status, status, "status")
    want_verdict = arguments.choice(Verdict, verdict, "verdict")
    want_scope = check_context(scope) if scope is not None else None
    view = read()
    out = []
    for state in view.states:
        exp = state.experience
        if want_status is not None and exp.status is not want_status:
            continue
        if want_verdict is not None and state.judge(policy, view.active)[0] is not want_verdict:
            continue
        if want_scope is not None and any(exp.scope.get(k) != v for k, v in want_scope.items()):
            continue
        out.append(exp.copy())  # the caller's to change: the fold keeps its own
    return out


def page(read: Callable[[], RowsView], start: Any, limit: Any, status: Any, context: Any,
         text: Any) -> LessonPage:
    """`Lamar.page`: the lessons that match, from place `start` on, at most `limit` of them; only they are
    copied. Called as `lam.page(start=0, limit=20, *, status=None, context=None, text=None)`.

    Args:
        read: the folded lessons, in the order they were added (the engine passes its own, under its lock).
        start: the place the page starts at (a `LessonPage`'s `next`, or one of its `places`):
            a lesson added, edited or retired since neither moves nor repeats another.
        limit: most lessons on the page, a whole number >= 1.
        status: keep one status ("candidate", "active", "retired"; any case), as `experiences` does.
        context: keep the lessons eligible in this context: every field of their scope has its value
            there, as recall matches them (retired ones too, unless `status` leaves them out).
        text: keep the lessons holding every word of it in their text, scope or id, as
            `lamar.search.search` finds them.

    Raises:
        InvalidArgument: `start` is not a place of this store (0 to the number of lessons), a bad
            `limit`, `status` or `text`.
        InvalidContext: `context` is not a mapping of strings.
    """
    if not whole_number(limit, low=1):
        raise InvalidArgument(f"limit is the most lessons a page holds, a whole number >= 1; got {echoed(limit)}")
    if not whole_number(start, low=0):
        raise InvalidArgument(f"start is a place in the order the lessons were added, a whole number >= 0 "
                              f"(0, or a LessonPage's next); got {echoed(start)}")
    want: Status | None = arguments.choice(Status, status, "status")
    where: Mapping[str, str] | None = None if context is None else check_context(context)
    words = None if text is None else words_of(text)
    states = read().states
    if start > len(states):
        raise InvalidArgument(f"start is a place in the order the lessons were added, from 0 to {len(states)} "
                              f"here (0, or a LessonPage's next from this store); got {start}")
    lessons: list[Experience] = []
    places: list[int] = []
    count, after = 0, None
    for at, state in enumerate(states):
        exp: Experience = state.experience
        if (want is not None and exp.status is not want) or (where is not None and not exp.scope.matches(where)) \
                or (words is not None and not holds(exp, words)):
            continue
        count += 1
        if at < start:
            continue
        if len(lessons) < limit:
            lessons.append(exp.copy())  # the caller's to change: the fold keeps its own
            places.append(at)
        elif after is None:
            after = at
    return LessonPage(lessons, places, count, after)



# The command line's advice on a lesson id it does not hold (`lamar show`, `whatif`'s `without:ID`).
LS_ADVICE = "; `lamar ls` lists the ids"


def named(ids: Iterable[str], text: str, what: str = "lesson") -> str | None:
    """The lesson id `text` names among `ids`: the id itself, or the one id it is the start of (None when no id
    starts with it). Every front takes a lesson id so: the command line, the MCP tools, `whatif`'s `without:ID`.

    Raises:
        InvalidArgument: several ids start with `text`; the message names up to three and asks for more of it.
    """
    ids = list(ids)
    if text in ids:
        return text
    matches = [i for i in ids if text and i.startswith(text)]
    if len(matches) > 1:
        shown = ", ".join(matches[:3]) + (", ..." if len(matches) > 3 else "")
        raise InvalidArgument(f"{echoed(text)} is the start of {len(matches)} {what} ids ({shown}): "
                              "give more of the id")
    return matches[0] if matches else None


__all__ = ["LS_ADVICE", "LessonPage", "listed", "named", "page"]
