"""What recall, whatif and lamar://scopes read of the store to spell the labels: the events since the last
call, not every lesson again; and what another engine on the store adds, retires or rescopes is
still seen by the next call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar_mcp.bench import counting
from lamar_mcp.tools import LamarTools

_LESSONS = 60
_CALLS = 40


def test_a_recall_reads_no_lesson_again_however_many_are_stored(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "reads.db"), seed=0) as lam:
        for i in range(_LESSONS):
            lam.add(Experience(f"the build of module {i} fails", f"regenerate stub {i}",
                               scope=Scope(project=f"p{i % 3}")))
        tools = LamarTools(lam)
        tools.recall({"project": "p0"})  # the server's first call learns the labels
        handed = counting(lam)
        for i in range(_CALLS):
            found = tools.recall({"Project": "P1"}, dry_run=i % 4 == 3)
            assert found.context == {"project": "p1"} and found.hint == ""
            if found.episode_id:
                lam.report(found.episode_id, ("shipped", "corrected")[i % 2])
        assert json.loads(tools.scopes_json()) == {"project": ["p0", "p1", "p2"]}
        # Reading every lesson to spell the labels would hand out _LESSONS of them a call; the
        # episodes and reports logged meanwhile change no lesson, so none is read again.
        assert handed[0] == 0, handed[0]
        # The label spelled as recall logged it (else no episode is selected); the lessons read are
        # the engine's own what-if reading today's evidence of each, once.
        assert tools.whatif(["none"], scope={"PROJECT": "p1"})["reported"] == _CALLS * 3 // 4
        assert handed[0] == _LESSONS, handed[0]


@pytest.mark.parametrize("store_location", ["sqlite", "postgres-fold"], indirect=True)
def test_what_another_engine_changes_is_seen_by_the_next_recall(store_location: str) -> None:
    with Lamar(store_location, seed=0) as lam, Lamar(store_location) as other:
        tools = LamarTools(lam)
        assert "holds no lessons yet" in tools.recall({"project": "shop"}).hint
        held = other.add(Experience("the Go build fails on a fresh clone", "run go mod download first",
                                    scope=Scope(project="Shop")))
        found = tools.recall({"project": "shop"})
        assert found.context == {"project": "Shop"} and found.lesson_ids == [held] and found.hint == ""
        assert json.loads(tools.scopes_json()) == {"project": ["Shop"]}
        other.edit(held, scope={"project": "web"})
        moved = tools.recall({"project": "shop"}, dry_run=True)
        assert moved.lesson_ids == [] and "project = web" in moved.hint
        other.retire(held, "by hand")
        assert "holds no lessons yet" in tools.recall({"project": "web"}).hint
        assert json.loads(tools.scopes_json()) == {}
