"""An integration imported without its framework names the extra that installs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lamar.extras import install_command

BLOCK = "import sys; sys.modules[{module!r}] = None; import {package}"  # None in sys.modules: not installed


@pytest.mark.parametrize(("package", "module", "extra"), [
    ("lamar_langchain", "langchain", "langchain"),
    ("lamar_langgraph", "langgraph", "langgraph"),
    ("lamar_llamaindex", "llama_index", "llamaindex"),
])
def test_without_its_framework_the_error_names_the_extra(package: str, module: str, extra: str) -> None:
    out = subprocess.run([sys.executable, "-c", BLOCK.format(module=module, package=package)],
                         check=False, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith(f"ModuleNotFoundError: {package} needs "), last
    assert last.endswith(f"the {extra} extra: {install_command(extra)}"), last
