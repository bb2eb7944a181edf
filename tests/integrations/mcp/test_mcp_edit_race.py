"""An edit over MCP whose lesson another process retires between the server's read of it and its write,
played in one process: the refusal names what the user can do, as the refusal before any write does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from lamar import Experience, Lamar, Scope
from lamar_mcp.tools import LamarTools


def test_a_lesson_retired_between_the_read_and_the_edit_names_lamar_revive(tmp_path: Path) -> None:
    location = str(tmp_path / "shared.db")
    with Lamar(location) as mine, Lamar(location) as theirs:
        lesson = mine.add(Experience("the build fails", "clear the cache", scope=Scope(project="trace")))
        tools, write = LamarTools(mine), mine.edit

        def retired_then_written(exp_id: str, **change: Any) -> Any:
            theirs.retire(lesson, "merged in a terminal")  # after every read the tool makes, before its write
            return write(exp_id, **change)

        mine.edit = retired_then_written  # type: ignore[method-assign]
        with pytest.raises(ToolError) as refused:
            tools.edit(lesson, action="clear the cache first")
    said = str(refused.value)
    # The engine's advice named lam.revive, a Python call no MCP client can make
    assert "lam.revive" not in said and f"lamar revive {lesson}" in said and "tell the user" in said, said
