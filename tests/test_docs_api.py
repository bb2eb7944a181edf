"""The API reference (docs/api.md) documents every public name of the core and of every integration."""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

import lamar
from lamar import _errors

API = (Path(__file__).resolve().parent.parent / "docs" / "api.md").read_text(encoding="utf-8")
DOCUMENTED = set(re.findall(r"^::: ([\w.]+)$", API, re.MULTILINE))
INTEGRATIONS = ["lamar_langchain", "lamar_langgraph", "lamar_llamaindex", "lamar_mcp", "lamar_claude_code",
                "lamar_ui"]


def test_every_name_lamar_exports_is_documented() -> None:
    errors = {name for name, value in vars(_errors).items() if inspect.isclass(value)} if "lamar._errors" in \
        DOCUMENTED else set()
    missing = [name for name in lamar.__all__ if f"lamar.{name}" not in DOCUMENTED and name not in errors]
    assert missing == [], f"docs/api.md lacks ::: lamar.<name> for {missing}"


@pytest.mark.parametrize("package", INTEGRATIONS)
def test_every_name_an_integration_exports_is_documented(package: str) -> None:
    module = importlib.import_module(package)
    missing = [name for name in module.__all__ if f"{package}.{name}" not in DOCUMENTED]
    assert missing == [], f"docs/api.md lacks ::: {package}.<name> for {missing}"
