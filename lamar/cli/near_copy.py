"""`lamar add`'s word on a lesson that nearly copies a stored one: added all the same, the user may mean it."""

from __future__ import annotations

from collections.abc import Iterable

from lamar.experience import Experience, Status


def near_copy_lines(stored: Iterable[Experience], added: Iterable[tuple[str, Experience]]) -> list[str]:
    """One line per added lesson that sleep's merge would take for a twin of a stored one (same scope, the
    similarity sleep merges at), naming that lesson and the ways to merge or tell them apart."""
    from lamar.cli.render import shorten
    from lamar.program import program_name
    from lamar.sleep.similarity import NEAR_DUPLICATE, lesson_similarity

    held = [e for e in stored if e.status is not Status.RETIRED]
    lamar, lines = program_name(), []
    for new_id, exp in added:
        twin = next((e for e in held if e.id != new_id and e.scope.items_key == exp.scope.items_key
                     and lesson_similarity(e.precondition, e.action, exp.precondition, exp.action) >= NEAR_DUPLICATE),
                    None)
        if twin is None:
            continue
        # Two arms that say one thing split its evidence: say so while the user still has the command in mind.
        shown = shorten(twin.render(), 60)
        lines.append(f"note: {new_id} is a near-copy of {twin.id} ({twin.status.value}: {shown!r}); added all the "
                     f"same. `{lamar} sleep --out report.json` proposes merging them; or tell them "
                     f"apart with `{lamar} edit {twin.id} --action ...`, or take this one back with "
                     f"`{lamar} retire {new_id}`")
    return lines


__all__ = ["near_copy_lines"]
