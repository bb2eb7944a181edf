"""The research and release scripts of tools/, loaded by path for their tests (tools/ is not a package)."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parent.parent / "tools"


@functools.cache
def load_tool(name: str) -> ModuleType:
    """tools/NAME.py as a module, loaded once (registered under NAME, which dataclasses need)."""
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
