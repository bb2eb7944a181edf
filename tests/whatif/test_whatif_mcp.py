"""The `whatif` MCP tool, through the SDK's own client over stdio."""

from __future__ import annotations

from pathlib import Path

from lamar import Experience, Lamar
from lamar_mcp.launch import stdio_session


async def test_the_tool_answers_with_structured_estimates(logged: Path) -> None:
    async with stdio_session(logged, "--read-only") as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert tools["whatif"].annotations.read_only_hint is True
        assert tools["whatif"].output_schema["type"] == "object"
        result = await session.call_tool("whatif", {"policies": ["none", "k:1"], "scope": {"task": "fix_flaky_test"}})
        assert not result.is_error, result.content
        data = result.structured_content
        assert [row["policy"] for row in data["alternatives"]] == ["none", "k:1"]
        assert 100 < data["reported"] < 300
        with Lamar(str(logged)) as lam:
            expected = lam.whatif(["none", "k:1"], scope={"task": "fix_flaky_test"})
        assert data["alternatives"][0]["success"]["dr"]["value"] == expected["none"].success["dr"].value
        # Each estimate carries its interval for this reading and the sequence that holds at any.
        dr, want = data["alternatives"][1]["success"]["dr"], expected["k:1"].success["dr"]
        assert (dr["lower"], dr["upper"], dr["anytime_lower"], dr["anytime_upper"]) == (
            want.lower, want.upper, want.anytime_lower, want.anytime_upper)
        assert dr["anytime_lower"] <= dr["lower"] <= dr["upper"] <= dr["anytime_upper"]


async def test_the_tool_refuses_with_what_to_do(logged: Path, tmp_path: Path) -> None:
    async with stdio_session(logged) as session:
        bad = await session.call_tool("whatif", {"policies": "none"})
        assert bad.is_error and "list of policy names" in bad.content[0].text
        unknown = await session.call_tool("whatif", {"policies": ["sometimes"]})
        assert unknown.is_error and "unknown policy" in unknown.content[0].text
    empty = tmp_path / "empty.db"
    with Lamar(str(empty)) as lam:
        lam.add(Experience("a deploy fails", "drain the pods"))
    unmatched = tmp_path / "unmatched.db"
    with Lamar(str(unmatched), seed=0) as lam:
        lam.add(Experience("a deploy fails", "drain the pods", scope={"project": "shop"}))
        for _ in range(30):
            lam.report(lam.recall({"project": "trace"}).episode_id, "shipped")
    async with stdio_session(empty) as session:
        few = await session.call_tool("whatif", {})
        assert few.is_error and "at least 30" in few.content[0].text
        # The advice is the tool's: it takes no `since`, and a model reports through report().
        assert "since" not in few.content[0].text and "lamar report" not in few.content[0].text, few.content
        # No scope narrowed the log, so widening it is no advice: the next step is to report.
        assert "widen" not in few.content[0].text and "report once the human's reaction" in few.content[0].text
        # Nor where the store holds no episode at all: widening cannot find any.
        few = await session.call_tool("whatif", {"scope": {"project": "trace"}})
        assert few.is_error and "at least 30" in few.content[0].text, few.content
        assert "widen" not in few.content[0].text and "selection" not in few.content[0].text, few.content
    async with stdio_session(unmatched) as session:
        none = await session.call_tool("whatif", {"scope": {"project": "trace"}})
        said = none.content[0].text
        assert none.is_error and "no lesson was eligible" in said, said
        assert "since" not in said and "lamar add" not in said and "propose_lesson" in said, said
        bare = (await session.call_tool("whatif", {})).content[0].text
        assert "lamar add" not in bare and "propose_lesson" in bare and "widen" not in bare, bare


async def test_a_lesson_the_store_lacks_is_answered_with_the_tool_that_lists_ids(logged: Path) -> None:
    async with stdio_session(logged, "--read-only") as session:
        tool = {t.name: t for t in (await session.list_tools()).tools}["whatif"]
        assert "`outside` is the share" in (tool.description or "")  # one sentence, not broken over two lines
        missing = await session.call_tool("whatif", {"policies": ["without:exp_missing"]})
        said = missing.content[0].text
        assert missing.is_error and "call lessons() to list the lesson ids" in said and "lamar ls" not in said, said


async def test_a_policy_in_another_case_or_with_spaces_is_the_policy_meant(logged: Path) -> None:
    async with stdio_session(logged, "--read-only") as session:
        typed = await session.call_tool("whatif", {"policies": ["K:1", " none"]})
        plain = await session.call_tool("whatif", {"policies": ["k:1", "none"]})
    assert not typed.is_error and not plain.is_error, typed.content
    assert typed.structured_content["alternatives"] == plain.structured_content["alternatives"]
    assert [row["policy"] for row in typed.structured_content["alternatives"]] == ["k:1", "none"]
