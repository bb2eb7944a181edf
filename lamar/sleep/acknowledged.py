"""A contradiction among lessons of one a store acknowledged: some of the same lessons, still acknowledged."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from lamar.sleep.proposals import Proposal

if TYPE_CHECKING:
    from lamar.sleep.view import SleepView

# Each combination of a situation's other lessons costs an id to look up: past this many, the whole situation only.
_MOST_BESIDES = 10
# Up to this many sides, an acknowledgement is looked for under every order of its lessons (24 orders).
MOST_ORDERED = 4


def acknowledged_id(ids: Sequence[str], applied: Callable[[str], bool]) -> list[str] | None:
    """The lessons `ids` in the order a store's acknowledgement of their contradiction lists them (as given, or
    in another order up to four sides), or None when the store holds none."""
    if applied(Proposal.make_id("contradiction", ids)):
        return list(ids)
    if len(ids) > MOST_ORDERED:
        return None
    return next((list(order) for order in itertools.permutations(ids)
                 if applied(Proposal.make_id("contradiction", order))), None)


def acknowledged_within(situation: Sequence[str], ids: Sequence[str],
                        applied: Callable[[str], bool]) -> list[str] | None:
    """The lessons of an acknowledged contradiction among the `situation`'s lessons that holds every one of
    `ids` and more, in the order its id lists them; None when the store acknowledged none.

    A store that acknowledged lessons together as one contradiction acknowledged each part of it, however
    sleep groups them (a whole standing context, or only the lessons whose actions conflict). Every
    combination of the situation's other lessons is looked for when they are few, the whole situation
    otherwise; an acknowledgement that named a lesson no longer in the situation is not found.
    """
    given = set(ids)
    besides = [i for i in situation if i not in given]
    sizes = range(len(besides), 0, -1) if len(besides) <= _MOST_BESIDES else [len(besides)]
    for size in sizes:
        for extra in itertools.combinations(besides, size):
            chosen = set(extra) | given
            found = acknowledged_id([i for i in situation if i in chosen], applied)
            if found is not None:
                return found
    return None


def acknowledged_with(lam: SleepView, proposal: Proposal) -> str:
    """Why apply skips a contradiction whose lessons are among those of one the store holds as applied (its
    payload's "acknowledged", which sleep notes and apply checks here), or "" when it is no such one."""
    whole = proposal.payload.get("acknowledged")
    if proposal.kind != "contradiction" or not isinstance(whole, list) or not all(isinstance(i, str) for i in whole):
        return ""
    pid = Proposal.make_id("contradiction", whole)
    if not set(proposal.experience_ids) < set(whole) or not lam.applied(pid):
        return ""
    return f"already applied: its lessons are among the {len(whole)} of contradiction {pid}, acknowledged"


__all__ = ["MOST_ORDERED", "acknowledged_id", "acknowledged_with", "acknowledged_within"]
