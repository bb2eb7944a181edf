"""recall's hint when the lessons without a scope are all that a context's labels reach, while lessons
are scoped by the same key under another value."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar_mcp.bench import counting
from lamar_mcp.launch import stdio_session
from lamar_mcp.tools import LamarTools


def _tools() -> tuple[Lamar, LamarTools, str]:
    lam = Lamar(k=3, seed=0, holdout=0.0)
    everywhere = lam.add(Experience("a command fails", "read its whole error output first"))
    lam.add(Experience("a migration times out", "run it in batches", scope=Scope(project="shop")))
    lam.add(Experience("the bundle is too large", "split the vendor chunk", scope=Scope(project="web")))
    lam.add(Experience("a test is flaky", "run it alone first", scope=Scope(task="tests_fail")))
    return lam, LamarTools(lam), everywhere


def test_a_label_no_lesson_uses_is_hinted_at_when_only_unscoped_lessons_match() -> None:
    lam, tools, everywhere = _tools()
    tools.recall({"project": "shop"})  # the server's first call learns the labels
    handed = counting(lam)
    for dry_run in (False, True):
        found = tools.recall({"project": "Shop-App"}, dry_run=dry_run)
        # The lesson without a scope is recalled, yet the project's lessons are under another label.
        assert found.lesson_ids == [everywhere], found.lesson_ids
        assert "project = Shop-App" in found.hint and "project = shop, web" in found.hint, found.hint
        assert "task" not in found.hint and "lamar://scopes" in found.hint
    # From the labels the server keeps and the lessons' ids, not from every lesson read again.
    assert handed[0] == 0, handed[0]
    # Each key the lessons use and whose value none uses is named with the values they use.
    both = tools.recall({"project": "shop-app", "task": "build_fails"}).hint
    assert "project = shop, web" in both and "task = tests_fail" in both, both


def test_no_hint_once_a_label_the_context_gave_matched_a_scoped_lesson() -> None:
    _, tools, everywhere = _tools()
    assert tools.recall({"project": "shop"}).hint == ""
    assert tools.recall({"Project": "SHOP"}, dry_run=True).hint == ""  # respelled as the scope spells it
    # A task lesson matched: the project that matched none is not what kept the model from its lessons.
    assert tools.recall({"project": "Shop-App", "task": "tests_fail"}).hint == ""
    # A key no lesson is scoped by says nothing of labels the model could have given instead.
    found = tools.recall({"ticket": "PRJ-12"})
    assert found.lesson_ids == [everywhere] and found.hint == ""
    # No lesson at all matched: the hint lists every label, as before.
    lam = Lamar(k=3, seed=0, holdout=0.0)
    lam.add(Experience("a migration times out", "run it in batches", scope=Scope(project="shop")))
    assert "No lesson's scope matches" in LamarTools(lam).recall({"project": "Shop-App"}).hint


async def test_outside_a_project_the_hint_names_the_projects_when_only_unscoped_lessons_match(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Claude Desktop starts the server in / (or the home folder): the model's words derive no project, a lesson
    # for everywhere matched, and the hint was empty, so the model never learnt that the project's lessons exist.
    with Lamar(str(store)) as lam:
        lam.add(Experience("a command fails", "read its whole error output first"))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for folder in ("/", home):
        async with stdio_session(store, "--seed", "3", cwd=folder) as session:
            alone = (await session.call_tool("recall", {"text": "the build fails", "dry_run": True})).structured_content
            assert alone["context"] == {"task": "build_fails"} and len(alone["preview"]) == 1, alone
            assert "project = shop, trace" in alone["hint"] and "no project" in alone["hint"], alone["hint"]
            given = await session.call_tool("recall", {"text": "the build fails", "context": {"project": "trace"},
                                                       "dry_run": True})
            assert given.structured_content["hint"] == "", given.structured_content
    async with stdio_session(store, "--seed", "3", cwd=tmp_path) as session:  # a folder that names a project
        named = (await session.call_tool("recall", {"text": "the build fails", "dry_run": True})).structured_content
        assert named["context"]["project"] == tmp_path.name and "no project" not in named["hint"], named
