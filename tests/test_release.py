"""The wheel check of tools/wheel_contents.py: it names a package file the wheel left out."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
wheel_contents = load_tool("wheel_contents")


def _wheel(path: Path, names: set[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in sorted(names):
            archive.writestr(name, "")
    return path


def test_every_shipped_package_and_its_resources_are_expected() -> None:
    expected = wheel_contents.expected_files()
    assert {"lamar/__init__.py", "lamar/py.typed", "lamar_ui/static/ui.css", "lamar_ui/py.typed",
            "lamar_mcp/__init__.py", "lamar_claude_code/__init__.py"} <= expected
    assert not any(name.startswith(("integrations/", "tests/", "docs/")) for name in expected)


def test_a_wheel_without_a_resource_is_named(tmp_path: Path) -> None:
    expected = wheel_contents.expected_files()
    assert wheel_contents.missing_from(_wheel(tmp_path / "all.whl", expected)) == []
    short = _wheel(tmp_path / "short.whl", expected - {"lamar_ui/static/ui.css"})
    assert wheel_contents.missing_from(short) == ["lamar_ui/static/ui.css"]
    assert wheel_contents.main([str(short)]) == 1
