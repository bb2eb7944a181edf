"""The MCP `lessons` tool searches by words as `lamar search` does, over stdio with the SDK's client:
every word must appear (any case) in a lesson's text, scope or id, beside the context and status
filters; a bad `text` is a tool error naming the field."""

from __future__ import annotations

from pathlib import Path

from lamar_mcp.launch import stdio_session
from tests.integrations.mcp.conftest import events


async def test_lessons_finds_every_word_in_text_or_scope_and_refuses_bad_text(store: Path) -> None:
    before = events(store)
    async with stdio_session(store) as session:
        async def actions(arguments: dict[str, object]) -> list[str]:
            result = await session.call_tool("lessons", arguments)
            assert not result.is_error, result.content
            return [lesson["action"] for lesson in result.structured_content["lessons"]]

        assert await actions({"text": "deriveddata XCODE"}) == ["clear DerivedData before rebuilding"]
        assert await actions({"text": "fails"}) == ["clear DerivedData before rebuilding",
                                                    "compare the CI locale with yours"]
        assert await actions({"text": "language=swift"}) == ["clear DerivedData before rebuilding"]  # the scope
        assert await actions({"text": "fails", "context": {"project": "trace", "language": "kotlin"}}) == [
            "compare the CI locale with yours"]
        assert await actions({"text": "batches", "status": "retired"}) == []
        assert await actions({"text": "kubernetes"}) == []
        for bad in ("  ", 7, ["fails"]):
            refused = await session.call_tool("lessons", {"text": bad})
            assert refused.is_error and "text must be words to look for" in refused.content[0].text
    assert events(store) == before
