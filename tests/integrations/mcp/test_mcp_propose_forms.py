"""propose_lessons over stdio with the SDK's client: the bullet forms a model writes a lesson in."""

from __future__ import annotations

from pathlib import Path

from lamar import Lamar
from lamar_mcp.launch import stdio_session
from tests.integrations.mcp.conftest import events


async def test_a_bullet_that_states_its_condition_with_if_or_whenever_is_a_lesson(store: Path) -> None:
    # A model lists lessons as "- If X, do Y." as often as "- When X, ...": the whole call was refused, though the
    # rules import reads "If X, Y" as "When X, Y" too.
    text = ("- If the cart total is wrong, check the rounding mode, because Decimal defaults differ.\n"
            "2. Whenever the stripe webhook fails, verify the signing secret.\n")
    async with stdio_session(store) as session:
        done = await session.call_tool("propose_lessons", {"lessons": text, "scope": {"project": "shop"}})
        assert not done.is_error, done.content[0].text
        shown = [lesson["text"] for lesson in done.structured_content["lessons"]]
        assert shown == ["When the cart total is wrong, check the rounding mode, because Decimal defaults differ.",
                         "When the stripe webhook fails, verify the signing secret."], shown
        before = events(store)
        refused = await session.call_tool("propose_lessons", {"lessons": "- Always run the tests before a push.\n"})
        assert refused.is_error and "a lesson bullet reads" in refused.content[0].text, refused.content
        assert events(store) == before
    with Lamar(str(store)) as lam:
        stored = {e.precondition: (e.action, e.rationale) for e in lam.experiences()}
    assert stored["the cart total is wrong"] == ("check the rounding mode", "Decimal defaults differ")
    assert stored["the stripe webhook fails"] == ("verify the signing secret", "")
