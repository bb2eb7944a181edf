"""Rules-file fixtures: copies of real projects' CLAUDE.md / AGENTS.md in their own git repositories."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
PROJECTS = ("python-sdk", "python-sdk-2025", "pydantic-ai", "uv")


def project_copy(tmp_path: Path, name: str) -> Path:
    """The fixture `name` copied (symlinks kept) into a fresh git repository of the same name."""
    folder = tmp_path / name
    shutil.copytree(FIXTURES / name, folder, symlinks=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


@pytest.fixture(params=PROJECTS)
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    return project_copy(tmp_path, request.param)
