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
