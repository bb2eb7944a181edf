"""The `lessons` tool pages its answer, over stdio with the SDK's client: at most `limit` lessons a page
(and a budget of characters), `next_cursor` to the next page, `count` the lessons matching in all;
walking the pages lists each lesson once, with the filters, even as the store changes between pages.
The lamar://lessons resource is the first page, and its `next_uri` reads the next."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

from lamar import Experience, Lamar, Scope
from lamar_mcp.launch import stdio_session
from lamar_mcp.pages import MAX_PAGE_SIZE, PAGE_CHARS, PAGE_SIZE
from lamar_mcp.server import build_server
from lamar_mcp.tools import LamarTools
from tests.integrations.mcp.conftest import events

LESSONS = 45
SHARED = pytest.mark.asyncio(loop_scope="module")  # tests that only read share one server (`shared_session`)


def _fill(path: Path, lessons: int = LESSONS) -> list[str]:
    """`lessons` lessons over three projects, every fourth of them with "cache" in its action; their ids."""
    with Lamar(str(path), seed=0) as lam:
        return [lam.add(Experience(f"case {i} comes up", f"clear the cache {i}" if i % 4 == 0 else f"do step {i}",
                                   scope=Scope(project=f"p{i % 3}"))) for i in range(lessons)]


async def _walk(session: ClientSession, arguments: dict[str, Any]) -> tuple[list[str], list[int], set[int]]:
    """Every page of `lessons` from the first: the ids in order, each page's size, and the counts it gave."""
    ids: list[str] = []
    sizes: list[int] = []
    counts: set[int] = set()
    cursor = None
    while True:
        result = await session.call_tool("lessons", {**arguments, **({"cursor": cursor} if cursor else {})})
        assert not result.is_error, result.content
        page = result.structured_content
        ids += [lesson["id"] for lesson in page["lessons"]]
        sizes.append(len(page["lessons"]))
        counts.add(page["count"])
        cursor = page["next_cursor"]
        if cursor is None:
            return ids, sizes, counts
        assert len(sizes) <= LESSONS, "the pages never end"


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("pages") / "many.db"
    return path, _fill(path)


@pytest.fixture(scope="module")
def shared_store(filled: tuple[Path, list[str]]) -> Path:
    """The store of `shared_session` in this module: LESSONS lessons (`_fill`), which its tests only read."""
    return filled[0]


@pytest.fixture(scope="module")
def added(filled: tuple[Path, list[str]]) -> list[str]:
    """The ids of the lessons of `shared_store`, in the order they were added."""
    return filled[1]


@SHARED
async def test_walking_the_pages_lists_every_lesson_once_in_the_order_they_were_added(
        added: list[str], shared_session: ClientSession) -> None:
    session = shared_session
    first = (await session.call_tool("lessons", {})).structured_content
    assert first["count"] == LESSONS and [lesson["id"] for lesson in first["lessons"]] == added[:PAGE_SIZE]
    assert isinstance(first["next_cursor"], str)
    ids, sizes, counts = await _walk(session, {"limit": 7})
    assert ids == added and sizes == [7] * 6 + [3] and counts == {LESSONS}
    ids, sizes, _ = await _walk(session, {"limit": MAX_PAGE_SIZE})
    assert ids == added and sizes == [LESSONS]
    ids, sizes, _ = await _walk(session, {"limit": 1, "status": "retired"})
    assert ids == [] and sizes == [0]


@SHARED
async def test_filters_combine_with_the_pages(added: list[str], shared_session: ClientSession) -> None:
    cached = [added[i] for i in range(LESSONS) if i % 4 == 0 and i % 3 == 1]  # project p1 and "cache"
    ids, sizes, counts = await _walk(shared_session, {"context": {"project": "P1"}, "text": "cache", "limit": 2})
    assert ids == cached and sizes == [2, 2] and counts == {4}
    ids, _, counts = await _walk(shared_session, {"context": {"project": "p2"}, "limit": 4})
    assert ids == added[2::3] and counts == {15}


async def test_a_lesson_retired_or_added_between_pages_moves_no_other(tmp_path: Path) -> None:
    # The cursor is a place in the store's order, not a count of the lessons listed: a lesson of the
    # first page that leaves the filter does not make the next page skip one, nor a new one repeat one.
    store = tmp_path / "many.db"
    added = _fill(store, 12)
    async with stdio_session(store) as session:
        page = (await session.call_tool("lessons", {"status": "active", "limit": 5})).structured_content
        assert [lesson["id"] for lesson in page["lessons"]] == added[:5]
        with Lamar(str(store), seed=0) as lam:  # another process, as `lamar retire` and `lamar add` are
            lam.retire(added[1], "superseded")
            lam.retire(added[7], "superseded")
            late = lam.add(Experience("a late case comes up", "do the late step"))
        rest, _, counts = await _walk(session, {"status": "active", "limit": 5, "cursor": page["next_cursor"]})
        assert rest == [*added[5:7], *added[8:], late] and counts == {11}


async def test_long_lessons_make_shorter_pages_that_the_client_keeps_whole(tmp_path: Path) -> None:
    store = tmp_path / "long.db"
    with Lamar(str(store), seed=0) as lam:
        added = [lam.add(Experience(f"case {i} " + "comes up again " * 130, f"step {i} " + "and then more " * 140,
                                    "because " * 240)) for i in range(12)]
    async with stdio_session(store) as session:
        result = await session.call_tool("lessons", {})
        assert 1 < len(result.structured_content["lessons"]) < 12, "the budget ends the page, not the limit"
        assert len(result.content[0].text) < PAGE_CHARS * 1.2
        ids, sizes, _ = await _walk(session, {})
        assert ids == added and len(sizes) > 2
        read = (await session.read_resource("lamar://lessons")).contents[0].text
        assert len(read) < PAGE_CHARS * 1.2 and json.loads(read)["next_uri"].startswith("lamar://lessons?cursor=")


@SHARED
async def test_a_bad_limit_or_cursor_is_refused_with_what_to_pass(shared_store: Path,
                                                                  shared_session: ClientSession) -> None:
    before = events(shared_store)
    forged = base64.urlsafe_b64encode(b"lessons@99").decode()  # past the store's end
    for bad in (0, -3, MAX_PAGE_SIZE + 1, "ten", "0", True, 2.5):
        refused = await shared_session.call_tool("lessons", {"limit": bad})
        assert refused.is_error and refused.content[0].text.startswith(
            f"Error executing tool lessons: limit must be a whole number from 1 to {MAX_PAGE_SIZE}"
        ), (bad, refused.content)
    for bad in ("2", "abc", 12, "", "bGVzc29uc0AtMQ", forged):  # "lessons@-1", and past the store's end
        refused = await shared_session.call_tool("lessons", {"cursor": bad})
        assert refused.is_error and refused.content[0].text.startswith(
            "Error executing tool lessons: cursor must be the next_cursor that the previous lessons() call "
            "returned"), (bad, refused.content)
    assert events(shared_store) == before


async def test_the_lessons_resource_is_the_first_page_and_next_uri_reads_the_rest(tmp_path: Path) -> None:
    # resources/read has no pages: a resource of every lesson would grow with the store past what a
    # client can put in a model's context, so it holds a page and names the URI of the next.
    store = tmp_path / "many.db"
    added = _fill(store)
    forged = base64.urlsafe_b64encode(b"lessons@99").decode().rstrip("=")
    async with stdio_session(store) as session:
        templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
        assert "lamar://lessons{?cursor}" in templates
        first = json.loads((await session.read_resource("lamar://lessons")).contents[0].text)
        assert first["count"] == LESSONS and [lesson["id"] for lesson in first["lessons"]] == added[:PAGE_SIZE]
        with Lamar(str(store), seed=0) as lam:  # another process changes the store between two reads
            lam.retire(added[30], "superseded")
            late = lam.add(Experience("a late case comes up", "do the late step"))
        ids, uri, pages = [lesson["id"] for lesson in first["lessons"]], first["next_uri"], 1
        while uri is not None:
            page = json.loads((await session.read_resource(uri)).contents[0].text)
            assert page["count"] == LESSONS + 1
            assert page["next_uri"] in (None, f"lamar://lessons?cursor={page['next_cursor']}")
            ids, uri, pages = ids + [lesson["id"] for lesson in page["lessons"]], page["next_uri"], pages + 1
        assert ids == [*added, late] and pages == 3
        for bad in ("lamar://lessons?cursor=abc", f"lamar://lessons?cursor={forged}", "lamar://lessons?cursor=12"):
            with pytest.raises(MCPError, match="names no page of these lessons: read the next_uri that a page gave"):
                await session.read_resource(bad)


async def test_a_store_that_fails_under_the_resource_says_so(tmp_path: Path) -> None:
    # Any other refusal than a bad cursor reaches the client with its message, not the SDK's
    # "Error reading resource", which says neither what failed nor what to do.
    store = tmp_path / "many.db"
    _fill(store, 3)
    lam = Lamar(str(store), seed=0)
    async with Client(build_server(lam)) as client:
        lam.store.close()
        with pytest.raises(MCPError, match=re.escape(f"the store {store} is closed; open it again")):
            await client.read_resource("lamar://lessons")


def test_a_page_copies_only_its_own_lessons(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # Each page used to copy every lesson of the store (`Lamar.experiences`) to keep twenty: walking
    # the pages of a large store read it once a page.
    store = tmp_path / "many.db"
    _fill(store)
    with Lamar(str(store), seed=0) as lam:
        tools = LamarTools(lam)
        first = tools.lessons(context={"project": "P1"}, limit=4)  # a server's first call learns the labels
        copied: list[str] = request.getfixturevalue("copied")  # from here on
        page = tools.lessons(context={"project": "P1"}, limit=4, cursor=first.next_cursor)
        assert copied == [lesson.id for lesson in page.lessons] and len(copied) == 4 and page.count == 15


def test_evidence_is_read_only_for_the_lessons_of_the_page(tmp_path: Path) -> None:
    store = tmp_path / "many.db"
    _fill(store)
    with Lamar(str(store), seed=0) as lam:
        read: list[str] = []
        evidence = lam.evidence

        def counted(exp_id: str) -> Any:
            read.append(exp_id)
            return evidence(exp_id)

        lam.evidence = counted  # type: ignore[method-assign]
        page = LamarTools(lam).lessons(limit=6)
        assert [lesson.id for lesson in page.lessons] == read and len(read) == 6 and page.count == LESSONS
