"""Carry the hooks' open episodes to the store `lamar claude-code install --store` moves them to, so that the
next prompt, git and the session's end still settle them (docs/claude-code.md, "Install in two commands")."""

from __future__ import annotations

import json

from lamar_claude_code.state import locked_state, sidecar

_FROM = "carry_from"  # in the new store's state: stores whose episodes wait for `lamar import` to be carried


def carry_open(old: str, new: str, repo: str | None, *, every_repo: bool) -> tuple[int, int]:
    """Move the bookkeeping of the episodes the hooks on `old` still watch, of `repo` (of every repository
    with `every_repo`: hooks in ~/.claude/settings.json), with their sessions, into the state of `new`.

    Only the episodes `new` holds move (`lamar import OLD --store NEW` copies them there): one it lacks could
    take no outcome. The others stay, and `new`'s state names `old` (`carry_sources`) until they can move.
    Returns (episodes carried, episodes left in `old`'s state because `new` lacks them).
    """
    from lamar import Lamar, UnknownEpisode

    old_state = sidecar(old, "state.json")
    if not old_state.exists():
        return 0, 0
    with locked_state(old_state, sidecar(old, "log")) as before:
        mine = [eid for eid, record in before["episodes"].items() if every_repo or record.get("repo") == repo]
        held = set()
        if mine:
            with Lamar(new) as lam:
                for eid in mine:
                    try:
                        lam.episode(eid)
                    except UnknownEpisode:
                        continue
                    held.add(eid)
        with locked_state(sidecar(new, "state.json"), sidecar(new, "log")) as after:
            for eid in held:
                after["episodes"].setdefault(eid, before["episodes"].pop(eid))
            for sid, session in list(before["sessions"].items()):
                if session.get("episode") in held:
                    after["sessions"].setdefault(sid, before["sessions"].pop(sid))
            waiting = [name for name in after.get(_FROM, []) if name != old]
            after[_FROM] = [*waiting, old] if len(mine) > len(held) else waiting
    return len(held), len(mine) - len(held)


def carry_sources(new: str) -> list[str]:
    """The stores whose open episodes wait in their own state until `new` holds them."""
    try:
        names = json.loads(sidecar(new, "state.json").read_bytes()).get(_FROM, [])
    except (OSError, ValueError, AttributeError):
        return []
    return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []
