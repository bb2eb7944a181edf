"""`lamar whatif > FILE` on a full disk: refused, naming the file and what to do, never a cut-off report and
exit 0 (Python's buffered stdout takes a short write for done)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mounts import tmpfs


def _fill(disk: Path, left: int) -> None:
    """Fill the tmpfs at `disk` until only about `left` bytes are free."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    (disk / "filler").write_bytes(b"\0" * max(0, free - left))


# --json (23 kB) meets a disk with a page left, the table (under a page) one with none.
@pytest.mark.parametrize(("json_flag", "left"), [(["--json"], 4096), ([], 0)])
def test_a_report_redirected_to_a_full_disk_is_refused_naming_the_file(
        logged: Path, tmp_path: Path, json_flag: list[str], left: int) -> None:
    with tmpfs(tmp_path / "disk", "64k") as disk:
        _fill(disk, left)
        out = disk / "report.json"
        with open(out, "w") as handle:
            done = subprocess.run([sys.executable, "-m", "lamar.cli", "whatif", "--store", str(logged), *json_flag],
                                  stdout=handle, stderr=subprocess.PIPE, text=True, check=False,
                                  env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        written = out.stat().st_size
    assert done.returncode == 2, done.stderr
    assert written == left  # the start of the report reached the file, the rest did not
    (line,) = done.stderr.splitlines()  # one line, no traceback nor "Exception ignored" at exit
    assert str(out) in line and "No space left on device" in line
    assert "cut short" in line and "free space" in line
