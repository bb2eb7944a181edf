"""`lamar ui` when the sleep report cannot be written (a full disk, a folder that cannot be
written): the page says so and the report there is left as it was, never a server error."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope

pytest.importorskip("starlette")

from tests.integrations.ui.test_ui_apply import _message
from tests.integrations.ui.test_ui_trial import _get, serving


def _immutable(folder: Path, on: bool) -> bool:
    flag = "+i" if on else "-i"
    return subprocess.run(["chattr", flag, str(folder)], capture_output=True, check=False).returncode == 0


def test_a_decision_the_disk_cannot_take_is_said_on_the_page_and_the_report_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "lessons.db"
    with Lamar(str(path)) as lam:  # two wordings of one lesson: sleep proposes to merge them
        lam.add(Experience("a lint error", "run the formatter first", scope=Scope(language="swift")))
        lam.add(Experience("A lint error.", "Run the formatter first.", scope=Scope(language="swift")))
    folder = tmp_path / "reports"
    folder.mkdir()
    report = folder / "report.json"
    with serving(path, "--report", str(report)) as url:
        assert _message(_get(url, "/sleep/run", {})).startswith("sleep made 1 proposal")
        pid = re.findall(r'name="proposal" value="([^"]+)"', _get(url, "/sleep"))[0]
        before = report.read_bytes()
        # A folder no file can be made in, even by root: the report's temporary copy cannot be written.
        if not _immutable(folder, True):
            _immutable(folder, False)
            pytest.skip("chattr +i is not available here (needs root and a file system that has it)")
        try:
            message = _message(_get(url, "/sleep/decide", {"proposal": pid, "decision": "approved"}))
        finally:
            _immutable(folder, False)
        assert str(report) in message and "could not write" in message, message
        assert report.read_bytes() == before
        assert _message(_get(url, "/sleep/decide", {"proposal": pid, "decision": "approved"})) == f"{pid} approved"
