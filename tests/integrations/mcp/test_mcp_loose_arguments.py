"""Arguments as MCP clients send them, over a real `lamar mcp` process with the SDK's client: a boolean or a
whole number sent as a JSON string, a status in capitals, and the words a refusal uses for the tool's arguments."""

from __future__ import annotations

from pathlib import Path

from lamar import Lamar
from lamar_mcp.launch import stdio_session
from tests.integrations.mcp.conftest import events

CONTEXT = {"project": "trace", "language": "swift"}


async def test_keeping_the_evidence_of_a_new_action_is_refused_in_the_tools_words(store: Path) -> None:
    with Lamar(str(store)) as lam:
        lesson = lam.experiences()[0].id
    async with stdio_session(store) as session:
        before = events(store)
        refused = await session.call_tool("edit", {"lesson_id": lesson, "action": "delete the lockfile",
                                                   "keep_evidence": True})
        said = refused.content[0].text
        assert refused.is_error and events(store) == before
        assert "--keep-evidence" not in said and "evidence='keep'" not in said and "leave evidence out" not in said
        assert "keep_evidence" in said and "action" in said and "nothing was stored" in said


async def test_a_null_label_is_refused_with_advice_a_model_can_follow(store: Path) -> None:
    async with stdio_session(store) as session:
        before = events(store)
        refused = await session.call_tool("recall", {"context": {"project": "trace", "task": None}})
        said = refused.content[0].text
        assert refused.is_error and events(store) == before
        assert "str()" not in said and "leave" in said and "'task'" in said
