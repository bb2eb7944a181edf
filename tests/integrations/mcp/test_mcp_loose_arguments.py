"""Arguments as MCP clients send them, over a real `lamar mcp` process with the SDK's client: a boolean or a
whole number sent as a JSON string, a status in capitals, and the words a refusal uses for the tool's arguments."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import ClientSession

from lamar import Lamar
from lamar_mcp.launch import stdio_session
from tests.integrations.mcp.conftest import events

CONTEXT = {"project": "trace", "language": "swift"}
SHARED = pytest.mark.asyncio(loop_scope="module")  # tests that write nothing share one server (`shared_session`)


async def test_flags_and_a_limit_sent_as_strings_are_read_as_the_schema_says(store: Path) -> None:
    # Claude Desktop and Claude Code send some booleans and integers as JSON strings.
    async with stdio_session(store) as session:
        before = events(store)
        dry = await session.call_tool("recall", {"context": CONTEXT, "dry_run": "true"})
        assert not dry.is_error, dry.content[0].text
        assert dry.structured_content["logged"] is False and events(store) == before
        real = await session.call_tool("recall", {"context": CONTEXT, "dry_run": " False "})
        assert not real.is_error and real.structured_content["logged"] is True
        page = await session.call_tool("lessons", {"limit": "1"})
        assert not page.is_error, page.content[0].text
        assert len(page.structured_content["lessons"]) == 1 and page.structured_content["count"] == 3
        lesson = page.structured_content["lessons"][0]["id"]
        fixed = await session.call_tool("edit", {"lesson_id": lesson, "rationale": "stale module maps outlive a clean",
                                                 "keep_evidence": "TRUE"})
        assert not fixed.is_error, fixed.content[0].text
        shown = await session.call_tool("import_rules", {"apply": "false"})
        assert "apply must be" not in shown.content[0].text
        after = events(store)
        for name, args in (("recall", {"context": CONTEXT, "dry_run": "yes"}), ("lessons", {"limit": "ten"}),
                           ("lessons", {"limit": "0"}), ("lessons", {"limit": "1.5"}),
                           ("erase", {"lesson_id": lesson, "contexts": "1"})):
            refused = await session.call_tool(name, args)
            assert refused.is_error, (name, args)
        assert events(store) == after


@SHARED
async def test_a_status_is_read_in_any_case(shared_store: Path, shared_session: ClientSession) -> None:
    found = await shared_session.call_tool("lessons", {"status": " Active"})
    assert not found.is_error, found.content[0].text
    assert found.structured_content["count"] == 3


@SHARED
async def test_keeping_the_evidence_of_a_new_action_is_refused_in_the_tools_words(
        shared_store: Path, shared_session: ClientSession) -> None:
    lesson = (await shared_session.call_tool("lessons", {"limit": 1})).structured_content["lessons"][0]["id"]
    before = events(shared_store)
    refused = await shared_session.call_tool("edit", {"lesson_id": lesson, "action": "delete the lockfile",
                                               "keep_evidence": True})
    said = refused.content[0].text
    assert refused.is_error and events(shared_store) == before
    assert "--keep-evidence" not in said and "evidence='keep'" not in said and "leave evidence out" not in said
    assert "keep_evidence" in said and "action" in said and "nothing was stored" in said


@SHARED
async def test_a_null_label_is_refused_with_advice_a_model_can_follow(
        shared_store: Path, shared_session: ClientSession) -> None:
    before = events(shared_store)
    refused = await shared_session.call_tool("recall", {"context": {"project": "trace", "task": None}})
    said = refused.content[0].text
    assert refused.is_error and events(shared_store) == before
    assert "str()" not in said and "leave" in said and "'task'" in said


@SHARED
async def test_a_list_or_a_mapping_as_a_label_is_refused_with_advice_a_model_can_follow(
        shared_store: Path, shared_session: ClientSession) -> None:
    before = events(shared_store)
    for value in (["swift", "ios"], {"name": "trace"}):
        refused = await shared_session.call_tool("recall", {"context": {"project": "trace", "tags": value}})
        said = refused.content[0].text
        assert refused.is_error and "str()" not in said and "one short label" in said, said
    numbered = await shared_session.call_tool("recall", {"context": {"project": "trace", "attempt": 2}})
    assert numbered.is_error and 'send it as a string, "2"' in numbered.content[0].text
    assert events(shared_store) == before


@SHARED
async def test_what_the_model_reads_of_whatifs_scope_and_the_resources(
        shared_store: Path, shared_session: ClientSession) -> None:
    whatif = next(t for t in (await shared_session.list_tools()).tools if t.name == "whatif")
    scope = whatif.input_schema["properties"]["scope"]["description"]
    assert "episodes" in scope and "lessons eligible" not in scope
    resources = [*(await shared_session.list_resources()).resources,
                 *(await shared_session.list_resource_templates()).resource_templates]
    for resource in resources:
        assert resource.description and "  " not in resource.description, resource.name


@SHARED
async def test_too_many_lessons_at_once_are_refused_with_how_to_send_them(
        shared_store: Path, shared_session: ClientSession) -> None:
    bullets = "- When the build fails after a bump, clear the cache.\n" * 600  # 31,800 characters
    before = events(shared_store)
    refused = await shared_session.call_tool("propose_lessons", {"lessons": bullets})
    said = refused.content[0].text
    assert refused.is_error and events(shared_store) == before
    assert f"{len(bullets):,} characters" in said and "several calls" in said, said


async def test_an_id_copied_with_blanks_around_it_is_read(store: Path) -> None:
    async with stdio_session(store) as session:
        recalled = (await session.call_tool("recall", {"context": CONTEXT})).structured_content
        copied = f" {recalled['episode_id']}\n"
        reported = await session.call_tool("report", {"episode_id": copied, "signal": "shipped"})
        assert not reported.is_error, reported.content[0].text
        lesson = (await session.call_tool("lessons", {"limit": 1})).structured_content["lessons"][0]["id"]
        shown = await session.call_tool("evidence", {"lesson_id": f"{lesson} "})
        assert not shown.is_error and shown.structured_content["id"] == lesson


async def test_editing_a_retired_lesson_names_what_the_user_can_do(store: Path) -> None:
    with Lamar(str(store)) as lam:
        lesson = lam.experiences()[0].id
        lam.retire(lesson)
    async with stdio_session(store) as session:
        before = events(store)
        refused = await session.call_tool("edit", {"lesson_id": lesson, "action": "delete the lockfile"})
        said = refused.content[0].text
        tools = {t.name for t in (await session.list_tools()).tools}
        assert refused.is_error and events(store) == before and "revive" not in tools
        assert "(revive)" not in said and f"lamar revive {lesson}" in said and "tell the user" in said, said


async def test_a_flag_sent_as_null_is_its_default(store: Path) -> None:
    # A client that fills every optional argument sends null for a flag, as it does for scope or cursor.
    async with stdio_session(store) as session:
        recalled = await session.call_tool("recall", {"context": CONTEXT, "dry_run": None})
        assert not recalled.is_error, recalled.content[0].text
        assert recalled.structured_content["logged"] is True
        lesson = (await session.call_tool("lessons", {"limit": 1})).structured_content["lessons"][0]["id"]
        edited = await session.call_tool("edit", {"lesson_id": lesson, "action": "delete the lockfile",
                                                  "keep_evidence": None})
        assert not edited.is_error, edited.content[0].text
        shown = await session.call_tool("import_rules", {"apply": None})
        assert "apply must be" not in shown.content[0].text
        erased = await session.call_tool("erase", {"lesson_id": lesson, "contexts": None})
        assert not erased.is_error, erased.content[0].text
        assert erased.structured_content["episodes"] == 0



async def test_a_text_argument_that_is_json_is_read_as_the_text_it_is(store: Path) -> None:
    # The SDK parses a string argument that holds JSON (an object, a list, null) unless the tool's parameter is a
    # str; Lamar's are not, so that its own checks speak: the search for "null" listed every lesson, and a task
    # pasted as a JSON error was refused as not being text.
    async with stdio_session(store) as session:
        proposed = await session.call_tool("propose_lesson", {"precondition": "the API answers null for a user",
                                                              "action": "check the id before the call"})
        assert not proposed.is_error, proposed.content[0].text
        found = await session.call_tool("lessons", {"text": "null"})
        assert [lesson["id"] for lesson in found.structured_content["lessons"]] == [
            proposed.structured_content["lesson_id"]], found.content[0].text
        task = '{"error": "TypeError: x is undefined"}'
        recalled = await session.call_tool("recall", {"text": task, "context": CONTEXT})
        assert not recalled.is_error, recalled.content[0].text
        quoted = await session.call_tool("propose_lesson", {"precondition": '{"retry": false}', "action": "[]",
                                                            "rationale": "null"})
        assert not quoted.is_error, quoted.content[0].text
        listed = await session.call_tool("propose_lessons", {"lessons": '[{"precondition": "the cache is cold", '
                                                                        '"action": "warm it first"}]'})
        assert not listed.is_error, listed.content[0].text  # a list sent as a string of JSON Lines' objects
    with Lamar(str(store)) as lam:
        stored = lam.get(quoted.structured_content["lesson_id"])
    assert (stored.precondition, stored.action, stored.rationale) == ('{"retry": false}', "[]", "null")


async def test_an_object_or_a_list_sent_as_a_json_string_is_read_as_that_object_or_list(store: Path) -> None:
    # Claude Code and Claude's apps send an object or array argument as a string of JSON, now and then
    # for a whole session: left a string, no label could ever reach recall, nor a scope a lesson.
    async with stdio_session(store) as session:
        recalled = await session.call_tool("recall", {"context": '{"project": "trace", "language": "swift"}',
                                                      "dry_run": True})
        assert not recalled.is_error, recalled.content[0].text
        assert recalled.structured_content["context"] == CONTEXT and len(recalled.structured_content["preview"]) == 2
        proposed = await session.call_tool("propose_lesson", {"precondition": "the linker runs out of memory",
                                                              "action": "build with fewer jobs",
                                                              "scope": ' {"project": "shop"} '})
        assert not proposed.is_error, proposed.content[0].text
        listed = await session.call_tool("lessons", {"context": '{"project": "shop"}'})
        assert not listed.is_error and listed.structured_content["count"] == 2, listed.content[0].text
        asked = await session.call_tool("whatif", {"policies": '["none", "k:1"]', "scope": '{"project": "trace"}'})
        assert "policies must be" not in asked.content[0].text and "scope:" not in asked.content[0].text, asked.content
        before = events(store)
        for name, args in (("recall", {"context": "{}"}), ("recall", {"context": "project=trace"}),
                           ("recall", {"context": "{'project': 'trace'}"}), ("recall", {"context": '["trace"]'}),
                           ("whatif", {"policies": '{"none": 1}'})):
            refused = await session.call_tool(name, args)
            assert refused.is_error, (name, args)
        assert events(store) == before
    with Lamar(str(store)) as lam:
        assert dict(lam.get(proposed.structured_content["lesson_id"]).scope) == {"project": "shop"}
