"""The race between two servers on one store, played in one process: another server's proposal
lands between this one's check for a held lesson and its add."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from lamar import Experience, Lamar, Status
from lamar_mcp.tools import LamarTools
from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

WHEN = "the Go build fails on a fresh clone"
FIRST = "run go mod download first"


@pytest.fixture(params=["memory", "sqlite", "json", "postgres-log", "postgres-fold"])
def servers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[LamarTools, LamarTools]]:
    """Two servers: over one in-memory engine, or each with its own engine on one store."""
    if request.param == "memory":
        lam = Lamar(":memory:")
        yield LamarTools(lam), LamarTools(lam)
        return
    namespace, url = unique_namespace("race"), ""
    if request.param.startswith("postgres"):
        url = request.getfixturevalue("postgres_url")
        location = namespace_url(url, namespace, lamar_fold="off" if request.param == "postgres-log" else "on")
    else:
        location = str(tmp_path / ("shared.db" if request.param == "sqlite" else "shared.json"))
    with Lamar(location) as mine, Lamar(location) as theirs:
        yield LamarTools(mine), LamarTools(theirs)
    if url:
        drop_namespaces(url, namespace)


def _overtaken(mine: LamarTools, theirs: LamarTools, action: str) -> None:
    """`theirs` proposes `action` once `mine` has checked for a held lesson, before `mine` adds."""
    check = mine._refuse_duplicate

    def checked_then_overtaken(exp: Experience, held: list[Experience] | None = None) -> None:
        check(exp, held)
        if not theirs.lamar.experiences(scope={"round": "race"}):
            theirs.propose_lesson(WHEN, action, scope={"round": "race"})

    mine._refuse_duplicate = checked_then_overtaken  # type: ignore[method-assign]


@pytest.mark.parametrize("action", [FIRST, "always " + FIRST])
def test_a_proposal_overtaken_by_a_copy_is_retired_and_refused(servers: tuple[LamarTools, LamarTools],
                                                                action: str) -> None:
    mine, theirs = servers
    _overtaken(mine, theirs, FIRST)
    with pytest.raises(ToolError) as refused:
        mine.propose_lesson(WHEN, action, scope={"round": "race"})
    held = next(e for e in theirs.lamar.experiences(scope={"round": "race"}) if e.action == FIRST)
    assert str(refused.value).startswith(f"lamar already holds this lesson as {held.id} (candidate)")
    stored = mine.lamar.experiences(scope={"round": "race"})
    assert [e.id for e in stored if e.status is not Status.RETIRED] == [held.id]
    for copy in (e for e in stored if e.id != held.id):  # stored, then retired naming the one held
        assert any(held.id in line for _, line in mine.lamar.history(copy.id).trail)


def test_a_list_refused_midway_says_which_lines_were_stored(servers: tuple[LamarTools, LamarTools]) -> None:
    mine, theirs = servers
    _overtaken(mine, theirs, FIRST)
    text = (f"- When a flaky test fails, rerun it alone.\n- When {WHEN}, always {FIRST}.\n"
            "- When go vet warns, fix it before the review.\n")
    with pytest.raises(ToolError) as refused:
        mine.propose_lessons(text, scope={"round": "race"})
    live = [e for e in mine.lamar.experiences(scope={"round": "race"}) if e.status is not Status.RETIRED]
    flaky, held = sorted(live, key=lambda e: e.action != "rerun it alone")
    assert held.action == FIRST and len(live) == 2
    said = str(refused.value)
    assert said.startswith(f"line 2: lamar already holds this lesson as {held.id}"), said
    assert said.endswith(f"the lessons before it were stored (line 1 as {flaky.id}), none after it: the same "
                         "call made again stores the rest"), said
