"""A lesson id shortened to its start, as `lamar show exp_ab12` takes it, over a real MCP client on stdio."""

from __future__ import annotations

from pathlib import Path

from lamar import Lamar
from lamar_mcp.launch import stdio_session
from tests.integrations.mcp.conftest import events


def _shortest(ids: list[str], lesson: str) -> str:
    """The shortest start of `lesson` that no other id has."""
    return next(lesson[:n] for n in range(5, len(lesson)) if sum(i.startswith(lesson[:n]) for i in ids) == 1)


async def test_evidence_takes_the_start_of_an_id_as_the_command_line_does(store: Path) -> None:
    with Lamar(str(store)) as lam:
        ids = [e.id for e in lam.experiences()]
    short = _shortest(ids, ids[1])
    before = events(store)
    async with stdio_session(store) as session:
        whole = await session.call_tool("evidence", {"lesson_id": ids[1]})
        found = await session.call_tool("evidence", {"lesson_id": short})
        assert not found.is_error, found.content
        assert found.structured_content == whole.structured_content and found.structured_content["id"] == ids[1]
        several = await session.call_tool("evidence", {"lesson_id": "exp_"})
        assert several.is_error
        said = several.content[0].text
        # The command line's words (tests/cli/test_cli_frictions.py), from the same resolver.
        assert "'exp_' is the start of 3 lesson ids" in said and "give more of the id" in said, said
        assert all(i in said for i in ids), said
        unknown = await session.call_tool("evidence", {"lesson_id": "exp_zz"})
        assert unknown.is_error and "no lesson 'exp_zz'" in unknown.content[0].text, unknown.content
    assert events(store) == before  # a read: nothing logged


async def test_edit_and_erase_take_the_start_of_an_id_as_evidence_and_the_command_line_do(store: Path) -> None:
    # A model that read a lesson through evidence('exp_ab12') edits it with the same id; `lamar edit` and
    # `lamar erase` take it, and edit and erase answered "no lesson 'exp_ab12'".
    with Lamar(str(store)) as lam:
        ids = [e.id for e in lam.experiences()]
    async with stdio_session(store) as session:
        before = events(store)
        several = await session.call_tool("edit", {"lesson_id": "exp_", "rationale": "why not"})
        assert several.is_error and "give more of the id" in several.content[0].text, several.content
        several = await session.call_tool("erase", {"lesson_id": "exp_"})
        assert several.is_error and "give more of the id" in several.content[0].text, several.content
        assert events(store) == before
        edited = await session.call_tool("edit", {"lesson_id": _shortest(ids, ids[1]), "rationale": "locales differ"})
        assert not edited.is_error, edited.content[0].text
        assert edited.structured_content["id"] == ids[1] and edited.structured_content["rationale"] == "locales differ"
        erased = await session.call_tool("erase", {"lesson_id": _shortest(ids, ids[2]), "reason": "a customer name"})
        assert not erased.is_error, erased.content[0].text
        assert erased.structured_content["lesson_id"] == ids[2]
    with Lamar(str(store)) as lam:
        assert lam.get(ids[1]).rationale == "locales differ" and lam.get(ids[2]).provenance.get("erased")
