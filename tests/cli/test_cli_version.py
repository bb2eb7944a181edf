"""`lamar --version` names the release, from the one place the package keeps it."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import lamar


def test_lamar_version_prints_the_package_version_and_exits_0() -> None:
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "--version"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"lamar {lamar.__version__}"
    # The installed distribution's metadata is built from the same constant (pyproject: dynamic).
    assert importlib.metadata.version("lamar") == lamar.__version__
