"""`import_rules` over a real `lamar mcp` process, in the folders a client may start it in: the file system's root,
as a desktop app does, and a project holding a sub-folder the walk cannot look into."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lamar_mcp.launch import stdio_session
from tests.integrations.mcp.conftest import events

RULE = "- Run the migrations in batches: long locks block writers.\n"


def _unexaminable(project: Path) -> None:
    """A sub-folder whose look inside (its pyvenv.cfg, its .git) fails with an error, not a miss.

    The usual cause is a folder this user may not enter (a container's volume, `/proc` below the root);
    root passes every permission check, so the same refused look is made here by a path past PATH_MAX:
    folders nested until the last one's path fits and the names inside it do not.
    """
    longest = os.pathconf("/", "PC_PATH_MAX") - 1  # characters of a path, its closing NUL aside
    fd, length = os.open(project, os.O_RDONLY), len(str(project))
    try:
        while True:
            name = "d" * min(250, longest - length - 1 - 5)  # the last one's path ends 5 short of the limit
            os.mkdir(name, dir_fd=fd)
            if len(name) < 250:
                return
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd, length = inner, length + 1 + len(name)
    finally:
        os.close(fd)


async def test_a_sub_folder_that_cannot_be_looked_into_is_passed_over(store: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "CLAUDE.md").write_text(RULE)
    _unexaminable(project)
    async with stdio_session(store, cwd=project) as session:
        shown = await session.call_tool("import_rules", {})
        assert not shown.is_error, shown.content[0].text
        assert shown.structured_content["files"] == ["CLAUDE.md"]
        assert len(shown.structured_content["lessons"]) == 1


async def test_in_the_root_it_asks_for_the_projects_path_and_reads_it(store: Path, tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    (project / "CLAUDE.md").write_text(RULE)
    before = events(store)
    async with stdio_session(store, cwd="/") as session:
        refused = await session.call_tool("import_rules", {})
        said = refused.content[0].text
        assert refused.is_error and "root" in said and "pass as folder the project's full path" in said, said
        assert events(store) == before
        shown = await session.call_tool("import_rules", {"folder": str(project)})
        assert not shown.is_error, shown.content[0].text
        assert len(shown.structured_content["lessons"]) == 1


async def test_it_names_the_files_claude_code_reads_itself(store: Path, tmp_path: Path) -> None:
    """A rule imported from CLAUDE.md still reaches Claude through CLAUDE.md when recall holds it out; the
    tool's answer did not say which files those are, so the model could not tell the user."""
    project = tmp_path / "shop"
    project.mkdir()
    (project / "CLAUDE.md").write_text(RULE)
    (project / "AGENTS.md").write_text("- Prefer small commits\n")
    async with stdio_session(store, cwd=project) as session:
        shown = await session.call_tool("import_rules", {})
        assert not shown.is_error, shown.content[0].text
        assert shown.structured_content["files"] == ["CLAUDE.md", "AGENTS.md"]
        assert shown.structured_content["claude_reads"] == ["CLAUDE.md"]


async def test_in_the_home_folder_it_asks_for_the_projects_folder(store: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Recall names no project in the home folder outside git: the rules read there were scoped to a project named
    # after the user, which no recall there would match (or refused with advice for the command line).
    home = tmp_path / "home"
    (home / "shop").mkdir(parents=True)
    (home / "CLAUDE.md").write_text(RULE)
    (home / "shop" / "CLAUDE.md").write_text(RULE)
    monkeypatch.setenv("HOME", str(home))
    before = events(store)
    async with stdio_session(store, cwd=home) as session:
        refused = await session.call_tool("import_rules", {})
        said = refused.content[0].text
        assert refused.is_error and "your home folder" in said and "pass as folder the project's folder" in said, said
        assert "--project" not in said and events(store) == before
        shown = await session.call_tool("import_rules", {"folder": "shop"})
        assert not shown.is_error, shown.content[0].text
        assert shown.structured_content["project"] == "shop" and len(shown.structured_content["lessons"]) == 1


async def test_a_folder_under_the_home_folder_written_with_a_tilde_is_read(store: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Asked for the project's full path, a model in Claude Desktop writes it as the user does, "~/shop"; the server
    # looked for a folder named "~" in the root and answered "no folder '~/shop' in /".
    home = tmp_path / "home"
    (home / "shop").mkdir(parents=True)
    (home / "shop" / "CLAUDE.md").write_text(RULE)
    monkeypatch.setenv("HOME", str(home))
    for cwd in ("/", home):
        async with stdio_session(store, cwd=cwd) as session:
            shown = await session.call_tool("import_rules", {"folder": "~/shop"})
            assert not shown.is_error, shown.content[0].text
            assert shown.structured_content["project"] == "shop" and len(shown.structured_content["lessons"]) == 1
    async with stdio_session(store, cwd=home / "shop") as session:  # below the project: still refused as outside
        refused = await session.call_tool("import_rules", {"folder": "~"})
        assert refused.is_error and "folder must be a folder inside" in refused.content[0].text, refused.content
        unknown = await session.call_tool("import_rules", {"folder": "~nosuchuser_lamar/shop"})
        assert unknown.is_error and "pass the project's full path" in unknown.content[0].text, unknown.content


async def test_a_folder_missing_outside_a_project_is_refused_with_advice_that_works_there(
        store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # In the root or the home folder, leaving folder out is refused: the advice to leave it out sent the model
    # from one refusal to the other.
    home = tmp_path / "home"
    (home / "shop").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for cwd, folder, advice in (("/", str(home / "shopp"), "pass as folder the project's full path"),
                                ("/", "~/shopp", "pass as folder the project's full path"),
                                (home, "shopp", "pass as folder the project's folder, relative to it")):
        async with stdio_session(store, cwd=cwd) as session:
            refused = await session.call_tool("import_rules", {"folder": folder})
            said = refused.content[0].text
            assert refused.is_error and "no folder '" in said and "(nothing is there)" in said, said
            assert advice in said and "leave folder out" not in said, said
