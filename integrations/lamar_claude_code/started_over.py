"""Letting go of the episodes the hooks' state tracks for a store deleted or replaced since (a user starting
over): the store they were recalled from is gone, so no outcome can reach them."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from lamar_claude_code.state import log_line


def not_held(episodes: Mapping[str, Any], holds: Callable[[str], bool]) -> list[str]:
    """The tracked `episodes` of an earlier store, by `holds(episode_id)`: all that the store lacks once it lacks
    the newest, else none. A sleep may compact old episodes away, never the newest one the hooks recalled into it;
    the hooks then forget an old one when its outcome is reported (`episodes._forget`)."""
    if not episodes:
        return []
    newest = max(episodes, key=lambda eid: float(episodes[eid].get("time", 0)))
    if holds(newest):
        return []
    return [eid for eid in episodes if not holds(eid)]


def let_go(event: str, state: dict[str, Any], lam: Callable[[], Any], log: Any, now: float) -> None:
    """Drop from `state` the episodes of a store deleted or replaced since, before git looks at them; checked
    on a prompt only (`event`), which opens the store anyway: other events open it only for an outcome."""
    if event != "UserPromptSubmit":
        return
    gone = not_held(state["episodes"], _holds(lam()))
    for eid in gone:
        del state["episodes"][eid]
    if gone:
        log_line(log, f"let go of {len(gone)} episode{'s' if len(gone) > 1 else ''} the store does not hold "
                 "(deleted or replaced since): no outcome can reach them", now=now)


def _holds(lam: Any) -> Callable[[str], bool]:
    from lamar import UnknownEpisode

    def holds(episode_id: str) -> bool:
        try:
            lam.episode(episode_id)
        except UnknownEpisode:
            return False
        return True

    return holds


def tracked_line(episodes: Mapping[str, Any], location: str) -> str:
    """`status`'s count of the episodes the hooks track and git watches, apart from those of a store deleted or
    replaced since, which the next prompt lets go of. Read only: a store that is missing is not made."""
    from lamar import Lamar, LamarError

    gone: list[str] = []
    if "://" not in location and location != ":memory:" and not os.path.exists(os.path.expanduser(location)):
        gone = list(episodes)
    elif episodes:
        try:
            with Lamar(location) as lam:
                gone = not_held(episodes, _holds(lam))
        except (LamarError, OSError):  # a store that cannot be read now says nothing of the episodes
            gone = []
    kept = [record for eid, record in episodes.items() if eid not in gone]
    watched = [r for r in kept if r.get("files") and r.get("signal") != "reverted"]
    line = f"episodes tracked: {len(kept)}, watched by git: {len(watched)}"
    if gone:
        line += (f" ({len(gone)} more of a store since deleted or replaced, which the hooks let go of at the next "
                 "prompt)")
    return line
