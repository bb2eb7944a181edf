"""Loaded before any test or doctest is collected, wherever pytest is pointed."""

from __future__ import annotations

import importlib
import tempfile
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> None:
    """Import a module of lamar/ or integrations/ by its name before its doctests are collected.

    For --doctest-modules, pytest's importlib mode reuses a module already in sys.modules, but
    otherwise imports its package first and then runs the file again as a second copy of the
    module, when the package's __init__ had already imported it. The two copies' classes differ,
    so `except InvalidArgument` or `isinstance(report, SleepReport)` fails in a doctest that meets
    both. Imported here the usual way, there is one copy.
    """
    if file_path.suffix != ".py" or not parent.config.getoption("doctestmodules", False):
        return
    path = file_path.resolve()
    for top in (_ROOT, _ROOT / "integrations"):
        parts = path.relative_to(top).with_suffix("").parts if path.is_relative_to(top) else ()
        if parts and (parts[0] == "lamar" or parts[0].startswith("lamar_")):
            importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
            return


@pytest.fixture(autouse=True)
def _doctest_temporary_folder(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A doctest's `tempfile.mkdtemp()` (an example a reader copies) makes its folder among pytest's,
    which pytest cleans up, rather than one left in /tmp per run."""
    if isinstance(request.node, pytest.DoctestItem):
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("doctest")))
