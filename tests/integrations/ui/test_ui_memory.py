"""`lamar ui --store :memory:` says, at launch and on every page, that its store is thrown away when
it stops; a store on disk says nothing of the kind."""

from __future__ import annotations

import html
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_trial import _get, _start, _stop, serving

SAID = "nothing added or changed is kept when lamar ui stops (use --store FILE to keep it)"
SHOWN = "This store is :memory:, a throwaway: nothing added or changed here is kept when lamar ui stops."


def test_a_store_in_memory_is_said_to_be_thrown_away_at_launch_and_on_the_page(tmp_path: Path) -> None:
    proc, url = _start(Path(":memory:"), "--report", str(tmp_path / "report.json"))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"lamar ui: the store is :memory:, a throwaway: {SAID}\n"
        for path in ("/", "/add", "/sleep"):
            assert SHOWN in html.unescape(_get(url, path)).replace("<code>", "").replace("</code>", ""), path
    finally:
        _stop(proc)


def test_a_store_on_disk_is_not_said_to_be_thrown_away(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:
        lam.add(Experience("the build fails", "clear the cache"))
    with serving(path) as url:
        assert 'class="throwaway"' not in _get(url, "/")


def test_a_store_in_memory_starts_on_a_machine_without_a_lamar_folder(tmp_path: Path) -> None:
    """Its sleep report goes to ~/.lamar by default: a missing folder is made, not blamed on a
    --report the user never gave."""
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "lamar.cli", "ui", "--store", ":memory:", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "HOME": str(home)})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("lamar ui: serving :memory: at http://127.0.0.1:"), (
            line, proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        assert (home / ".lamar").is_dir()
    finally:
        _stop(proc)
